"""The card-shared network: layout, weight sharing, training, saving and loading."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch as th
from run_helpers import assert_refuses_other_envs

from rummyzoo.agents.arena import run_arena
from rummyzoo.agents.checkpoints import load_policy, read_meta
from rummyzoo.agents.networks import CardScorer, card_layout
from rummyzoo.envs.cards import NUM_CARDS, parse_card
from rummyzoo.envs.knock_rummy.rules import DISCARD_BASE, KNOCK_BASE, NUM_ACTIONS
from rummyzoo.training.config import ConfigLoadError, validate_config
from rummyzoo.training.seat_env import SeatEnv
from rummyzoo.training.train import train_from_file

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def test_layout_names_every_card_block():
    plain = card_layout("knock_rummy", 3, {}, None, mask_in_obs=False)
    # hand, top, buried, and known + thrown for each of the two opponents
    assert len(plain["card_blocks"]) == 3 + 2 * 2
    full = card_layout("knock_rummy", 2, {}, "knock_deadwood", mask_in_obs=True)
    env = SeatEnv(
        "knock_rummy", 2, opponents=["random"], features="knock_deadwood", mask_in_obs=True
    )
    obs, _ = env.reset(seed=3)
    assert full["input_size"] == obs.shape[0]
    # 5 observation blocks, 2 feature blocks (deadwood after each discard, melded), 2 mask blocks
    blocks = full["card_blocks"]
    assert len(blocks) == 9
    hand = obs[blocks[0] : blocks[0] + NUM_CARDS]
    mask = env.action_masks()
    discard_mask = obs[blocks[7] : blocks[7] + NUM_CARDS]
    knock_mask = obs[blocks[8] : blocks[8] + NUM_CARDS]
    assert np.array_equal(discard_mask, mask[DISCARD_BASE:KNOCK_BASE])
    assert np.array_equal(knock_mask, mask[KNOCK_BASE:])
    assert hand.sum() >= 10
    with pytest.raises(ValueError, match="laid out per card"):
        card_layout("ditch_rummy", 2, {}, None, mask_in_obs=False)


def test_cards_in_the_same_situation_get_the_same_scores():
    layout = card_layout("knock_rummy", 2, {}, "knock_deadwood", mask_in_obs=False)
    th.manual_seed(0)
    scorer = CardScorer(layout, [32], [16])
    x = th.rand(4, layout["input_size"])
    a, b, c = parse_card("7s"), parse_card("7h"), parse_card("8h")
    for start in layout["card_blocks"]:  # 7s and 7h: same rank, same channels
        x[:, start + b] = x[:, start + a]
        x[:, start + c] = x[:, start + a]
    scores = scorer(x)
    assert scores.shape == (4, NUM_ACTIONS)
    for base in (DISCARD_BASE, KNOCK_BASE):
        assert th.allclose(scores[:, base + a], scores[:, base + b])
        # A different rank is a different card (pip value, rank one-hot): scores differ.
        assert not th.allclose(scores[:, base + a], scores[:, base + c])
    # Changing one card's channels moves only that card's scores (and the context's).
    y = x.clone()
    y[:, layout["card_blocks"][-1] + a] += 1.0
    moved = (scorer(y) - scores).abs() > 1e-7
    assert moved[:, DISCARD_BASE + a].all()


def test_cards_network_is_refused_without_card_actions():
    with pytest.raises(ConfigLoadError, match=r"policy_kwargs\.network: 'cards' needs actions"):
        validate_config({"variant": "ditch_rummy", "policy_kwargs": {"network": "cards"}})


@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_cards_network_trains_saves_and_plays(tmp_path, algo):
    run = tmp_path / algo
    summary = train_from_file(
        str(CONFIGS / f"smoke_{algo}.yaml"),
        ["features=knock_deadwood", "policy_kwargs.network=cards"],
        str(run),
        ["test"],
    )
    last = run / "checkpoints" / "last.rz"
    assert read_meta(last)["steps"] == summary["steps"] >= 256
    policy = load_policy(last, "knock_rummy", 2)
    net = policy.model.policy
    assert type(net).__name__ == ("CardActorCriticPolicy" if algo == "ppo" else "CardDQNPolicy")
    result = run_arena("knock_rummy", 2, [str(last), "knock.greedy"], deals=2, seed=0, workers=1)
    assert result.games == 4
    assert_refuses_other_envs(last, "knock_rummy")


def test_configs_and_checkpoints_name_the_networks_and_activations_the_code_builds() -> None:
    """The names a config or a checkpoint may give are the ones the networks module builds."""
    import typing

    from rummyzoo.agents.networks import ACTIVATIONS, POLICY_CLASSES
    from rummyzoo.agents.safe import NetworkSpec
    from rummyzoo.training.config import PolicyKwargs

    def choices(model: type, field: str) -> set[str]:
        return set(typing.get_args(model.model_fields[field].annotation))

    assert choices(PolicyKwargs, "activation_fn") == set(ACTIVATIONS)
    assert choices(NetworkSpec, "activation") == set(ACTIVATIONS)
    types = {network for network, _ in POLICY_CLASSES}
    assert choices(PolicyKwargs, "network") == types == choices(NetworkSpec, "type")
    assert set(POLICY_CLASSES) == {(t, algo) for t in types for algo in ("ppo", "dqn")}


def test_random_play_copies_after_it_has_played():
    """The arena copies an agent that holds several seats: random play copies (and pickles)
    after it has acted, and the copy picks as the original does from an equal generator."""
    import copy
    import pickle

    from rummyzoo.agents.random_agent import RandomPolicy

    policy = RandomPolicy()
    rng = np.random.default_rng(4)
    mask = np.array([1, 0, 1, 1, 0, 1], dtype=np.int8)
    policy.act(np.zeros(3), mask, rng)
    for clone in (copy.deepcopy, lambda p: pickle.loads(pickle.dumps(p))):
        copied = clone(policy)
        a, b = copy.deepcopy(rng), copy.deepcopy(rng)
        picks = [policy.act(np.zeros(3), mask, a) for _ in range(40)]
        assert [copied.act(np.zeros(3), mask, b) for _ in range(40)] == picks
        assert set(picks) == {0, 2, 3, 5}


# ------------------------------------------------- what the scorer networks read, by name
def _scorer_policy(data: dict):
    """The policy a run of config ``data`` builds (the class and layout of ``policy_choice``),
    its scorer in float64 (so that a score moves or stays exactly), and its layout."""
    import gymnasium as gym

    from rummyzoo.training.train import policy_choice

    config = validate_config(data)
    cls, kwargs = policy_choice(config)
    layout = kwargs.get("card_layout") or kwargs["action_layout"]
    space = gym.spaces.Box(-np.inf, np.inf, (layout["input_size"],), np.float32)
    th.manual_seed(0)
    actions = gym.spaces.Discrete(layout["num_actions"])
    policy = cls(space, actions, lambda _: 1e-3, **kwargs)
    return policy, _scorer64(policy), layout


def _scorer64(policy):
    import copy

    scorer = policy.q_net.q_net if hasattr(policy, "q_net") else policy.mlp_extractor.scorer
    return copy.deepcopy(scorer).double()


def _policy_scores(policy, x: th.Tensor) -> th.Tensor:
    """The scores the policy acts on (its own float32 forward): PPO's logits, DQN's Q-values."""
    x = x.float()
    with th.no_grad():
        if hasattr(policy, "q_net"):
            return policy.q_net(x)
        features = policy.extract_features(x, policy.pi_features_extractor)
        return policy.action_net(policy.mlp_extractor.forward_actor(features))


def _scored_with_input_of(scorer, module, policy, x):
    """The scorer's scores of ``x`` (checked to be the policy's) and what its ``module`` is
    given meanwhile."""
    seen = []
    hook = module.register_forward_pre_hook(lambda _module, args: seen.append(args[0]))
    try:
        with th.no_grad():
            scores = scorer(x)
    finally:
        hook.remove()
    assert th.allclose(_policy_scores(policy, x), scores.float(), atol=1e-5)
    return scores, seen[0]


def _frozen_context_scores(scorer, x: th.Tensor, context: th.Tensor) -> th.Tensor:
    """The scorer's scores of ``x`` with its context vector replaced by ``context`` (what the
    context network reads of the whole input is then out of the way)."""
    hook = scorer.context.register_forward_hook(lambda module, args, out: context)
    try:
        with th.no_grad():
            return scorer(x)
    finally:
        hook.remove()


def _names(cards) -> list[str]:
    from rummyzoo.envs.cards import format_card

    return [format_card(int(c)) for c in cards]


def _plane_names(plane: np.ndarray) -> set[str]:
    return set(_names(np.flatnonzero(plane)))


def _knock_discard_states(players: int, options: dict, mask_in_obs: bool, count: int) -> list:
    """Learner inputs of the training env at the learner's discards (after a draw), where both
    mask blocks are nonzero and differ, with what each card's channels hold, by card name:
    per state ``(input, {card name: [channel values]}, legal mask)``."""
    from rummyzoo.envs.knock_rummy.rules import Phase
    from rummyzoo.envs.melds import optimal_deadwood

    env = SeatEnv(
        "knock_rummy",
        players,
        options,
        opponents=["random"],
        features="knock_deadwood",
        mask_in_obs=mask_in_obs,
    )
    names = env.match.game.action_names
    cards = [a.removeprefix("discard ") for a in names if a.startswith("discard ")]
    rng = np.random.default_rng(players)
    x, _ = env.reset(seed=players)
    found, steps = [], 0
    while len(found) < count and steps < 3000:
        steps += 1
        state, seat, mask = env.match.state, env.seat, env.action_masks()
        discard = mask[[names.index(f"discard {c}") for c in cards]]
        knock = mask[[names.index(f"knock {c}") for c in cards]]
        if state.phase == Phase.DISCARD and knock.any() and not np.array_equal(discard, knock):
            hand = set(_names(state.hand_cards(seat)))
            pile = _names(state.discard)
            opponents = [(seat + k) % players for k in range(1, players)]
            known = [_plane_names(state.known[o]) for o in opponents]
            thrown = [_plane_names(state.thrown[o]) for o in opponents]
            ids = sorted(_card_ids(hand))
            melded = set(_names(c for meld in optimal_deadwood(ids)[1] for c in meld))
            channels = {}
            for card in cards:
                row = [card in hand, bool(pile) and pile[-1] == card, card in pile[:-1]]
                row += [card in k for k in known] + [card in t for t in thrown]
                left = sorted(_card_ids(hand - {card}))
                row += [optimal_deadwood(left)[0] / 100 if card in hand else 0.0]
                row += [card in melded]
                if mask_in_obs:
                    row += [
                        mask[names.index(f"discard {card}")],
                        mask[names.index(f"knock {card}")],
                    ]
                channels[card] = [float(v) for v in row]
            found.append((x.copy(), channels, mask.copy()))
        legal = np.flatnonzero(mask)
        calm = [a for a in legal.tolist() if not names[a].startswith("knock")] or legal.tolist()
        x, _, term, trunc, _ = env.step(int(rng.choice(calm)))
        if term or trunc:
            x, _ = env.reset()
    return found


def _card_ids(cards) -> list[int]:
    return [parse_card(c) for c in cards]


_RANK_TEXT = "A23456789TJQK"


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_card_network_reads_each_cards_own_channels_by_action_name(algo, players):
    """At the learner's discards (nonzero masks, the knock mask unlike the discard mask), the
    scorer of every card reads exactly that card's channels: its places (hand, top, buried,
    each opponent's known and thrown cards), its deadwood after discarding it, whether it is
    melded, for DQN the mask bits of "discard <card>" and "knock <card>", then its rank and pip
    value; and changing one of a card's channels (the mask bit of one of its actions
    included) moves the scores of the actions naming that card and of no other."""
    options = {"knock_max_deadwood": 25}
    policy, scorer, layout = _scorer_policy(
        {
            "variant": "knock_rummy",
            "num_players": players,
            "algo": algo,
            "features": "knock_deadwood",
            "env_options": options,
            "policy_kwargs": {"network": "cards", "net_arch": [32]},
        }
    )
    mask_in_obs = algo == "dqn"
    states = _knock_discard_states(players, options, mask_in_obs, count=4)
    assert len(states) == 4
    used = np.abs([list(s[1].values()) for s in states]).sum(axis=(0, 1)) > 0
    assert used.all(), f"channels zero in every state: {np.flatnonzero(~used)}"
    from rummyzoo.envs.registry import make_game

    game = make_game("knock_rummy", players, **options)
    names = game.action_names
    lay, obs_size = game.observation_layout, game.obs_size
    x = th.as_tensor(np.stack([s[0] for s in states]), dtype=th.float64)
    assert x.shape[1] == layout["input_size"]
    # per card: (states, 52 cards, channels + identity + context)
    _, per_card = _scored_with_input_of(scorer, scorer.card_net, policy, x)
    blocks = len(layout["card_blocks"])
    for k, (_, channels, _) in enumerate(states):
        for card, expected in channels.items():
            row = per_card[k, parse_card(card)].tolist()
            assert len(expected) == blocks
            assert row[:blocks] == pytest.approx(expected, abs=1e-6), (
                f"state {k}: the channels {card}'s scorer reads"
            )
            rank = _RANK_TEXT.index(card[0])
            identity = [float(r == rank) for r in range(13)] + [min(rank + 1, 10) / 10]
            assert row[blocks : blocks + 14] == pytest.approx(identity, abs=1e-6), (
                f"the rank and pip value of {card}"
            )
    # each channel's place in the learner input (the observation's layout, the features as
    # documented, the mask of each action by name), and the card's own actions
    sources = [(name, lay[name][0]) for name in ("hand", "top_discard", "buried_discards")]
    for name in ("opponent_known", "opponent_thrown"):
        sources += [(f"{name} {k}", lay[name][0] + 52 * k) for k in range(players - 1)]
    sources += [("after_discard", obs_size + 1), ("melded", obs_size + 53)]
    cards = list(states[0][1])
    with th.no_grad():
        context = scorer.context(x)
    for k in range(len(states)):
        rows, labels = [], []
        for card in cards:
            own = {names.index(f"discard {card}"), names.index(f"knock {card}")}
            places = [(name, start + parse_card(card)) for name, start in sources]
            if mask_in_obs:
                # the mask follows the observation and the 106 features
                places += [(f"mask bit of {names[a]}", obs_size + 106 + a) for a in sorted(own)]
            for name, place in places:
                y = x[k].clone()
                y[place] += 1.0
                rows.append(y)
                labels.append((f"{name} of {card}", own))
        y = th.stack(rows)
        moved_scores = _frozen_context_scores(scorer, y, context[k].expand(len(rows), -1))
        base = _frozen_context_scores(scorer, x[k : k + 1], context[k : k + 1])
        moved = (moved_scores - base).abs() > 1e-12
        for (label, own), row in zip(labels, moved, strict=True):
            got = set(th.nonzero(row).flatten().tolist())
            assert got == own, f"{label} moved {sorted(names[a] for a in got)}"


def _described_kind(variant: str, name: str) -> int:
    """The kind column (the one-hot at the start of a description) of an action, by name."""
    word = name.split()[0]
    if variant == "ditch_rummy":
        if name == "ditch all":
            return 4
        return {"draw": 0, "meld": 1, "single": 2, "ditch": 3, "end": 5}[word]
    if word == "meld":
        return 3 if len({c[:-1] for c in name.split()[1:]}) == 1 else 4
    if word == "lay":
        return {"set": 5, "below": 6, "above": 7}[name.split()[-2 if "run" in name else -1]]
    return {"draw": 0, "pass": 1, "dig": 2, "discard": 8}[word]


@pytest.mark.parametrize("mask_in_obs", [False, True])
@pytest.mark.parametrize("algo", ["ppo", "dqn"])
@pytest.mark.parametrize(
    "variant, features", [("ditch_rummy", "ditch_actions"), ("rummy500", "rummy500_actions_v1")]
)
def test_actions_network_reads_each_actions_own_description(variant, features, algo, mask_in_obs):
    """In the learner input of the batched training env (with and without the mask in it),
    the block the actions network reads holds, at each action's place, ``features(obs)``'s
    description of that action (of the kind its name says), and the scorer scores each action
    from that action's description only."""
    from rummyzoo.agents.features import make_features
    from rummyzoo.agents.networks import POLICY_CLASSES, action_layout
    from rummyzoo.envs.registry import make_game
    from rummyzoo.training.vec_env import BatchedSeatEnv

    data = {
        "variant": variant,
        "algo": algo,
        "features": features,
        "policy_kwargs": {"network": "actions", "net_arch": [32]},
    }
    policy, scorer, trained = _scorer_policy(data)
    layout = action_layout(variant, 2, {}, features, mask_in_obs)
    assert trained == action_layout(variant, 2, {}, features, algo == "dqn")
    if mask_in_obs != (algo == "dqn"):  # the same network on the other input
        import gymnasium as gym

        space = gym.spaces.Box(-np.inf, np.inf, (layout["input_size"],), np.float32)
        th.manual_seed(0)
        kwargs = {"net_arch": [32], "action_layout": layout}
        policy = POLICY_CLASSES["actions", algo](
            space, gym.spaces.Discrete(layout["num_actions"]), lambda _: 1e-3, **kwargs
        )
        scorer = _scorer64(policy)
    game = make_game(variant, 2)
    names, obs_size = game.action_names, game.obs_size
    describe = make_features(features, variant, 2, {})
    offset, count, width = describe.action_block
    assert (count, width) == (layout["num_actions"], layout["action_width"]) == (len(names), width)
    env = BatchedSeatEnv(
        variant, 2, num_envs=3, opponents=["random"], features=features,
        mask_in_obs=mask_in_obs, seed=5,
    )  # fmt: skip
    rng = np.random.default_rng(0)
    inputs, masks = [env.reset()], [env.action_masks()]
    for _ in range(5):
        actions = [int(rng.choice(np.flatnonzero(m))) for m in masks[-1]]
        inputs.append(env.step(np.array(actions))[0])
        masks.append(env.action_masks())
    x_np, mask = np.concatenate(inputs), np.concatenate(masks)
    assert x_np.shape[1] == layout["input_size"]
    start, stop = layout["action_start"], layout["action_start"] + count * width
    assert stop <= x_np.shape[1] - (count if mask_in_obs else 0), "the block runs into the mask"
    read = x_np[:, start:stop].reshape(len(x_np), count, width)
    described = []
    for k, row in enumerate(x_np):
        expected = describe(row[:obs_size]).reshape(count, width)
        if mask_in_obs:
            assert np.array_equal(row[-count:], mask[k])
        for a in range(count):
            assert np.array_equal(read[k, a], expected[a]), (
                f"row {k}: the description of {names[a]}"
            )
            if expected[a].any():
                kind = _described_kind(variant, names[a])
                assert expected[a][kind] == 1, f"{names[a]} described as another kind"
                described.append((k, a))
            assert expected[a].any() or not mask[k, a], f"legal {names[a]} undescribed"
    assert len(described) > len(x_np)
    # what the scorer reads: the described rows, in order, and each action from its own only
    x = th.as_tensor(x_np, dtype=th.float64)
    scores, read_in = _scored_with_input_of(scorer, scorer.desc_in, policy, x)
    rows = np.stack([read[k, a] for k, a in described])
    assert np.array_equal(read_in.numpy(), rows), "the scorer reads other descriptions"
    with th.no_grad():
        context = scorer.context(scorer.value_input(x))
    picked = [described[i] for i in rng.permutation(len(described))[:150]]
    y = x[[k for k, _ in picked]].clone()
    for i, (_, a) in enumerate(picked):
        place = obs_size + offset + a * width
        y[i, place : place + width] += 0.5  # the description of a, where the features put it
    ctx = context[[k for k, _ in picked]]
    moved = _frozen_context_scores(scorer, y, ctx) - _frozen_context_scores(
        scorer, x[[k for k, _ in picked]], ctx
    )
    for i, (k, a) in enumerate(picked):
        got = set(th.nonzero(moved[i].abs() > 1e-12).flatten().tolist())
        assert got == {a}, f"row {k}: the description of {names[a]} moved {[names[b] for b in got]}"
    # an action described by zeros is not scored (0; the mask removes it)
    assert not scores[th.as_tensor(~read.any(axis=2))].any()


@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_checkpoints_copy_read_only_rows_before_torch_reads_them(tmp_path, monkeypatch, algo):
    """The play loop and the vector engine hand out read-only rows; torch's ``as_tensor``
    would share that memory (warning that it could write through it), so a checkpoint copies
    such rows, and reads writeable ones in place."""
    from rummyzoo.agents.checkpoints import act_groups
    from rummyzoo.envs import knock_rummy_v0

    run = tmp_path / algo
    train_from_file(str(CONFIGS / f"smoke_{algo}.yaml"), [], str(run), ["test"])
    policy = load_policy(run / "checkpoints" / "last.rz", "knock_rummy", 2)
    shared = []
    as_tensor = th.as_tensor

    def watched(data, *args, **kwargs):
        if isinstance(data, np.ndarray):
            shared.append(data.flags.writeable)
        return as_tensor(data, *args, **kwargs)

    monkeypatch.setattr(th, "as_tensor", watched)
    engine = knock_rummy_v0.vector(num_envs=4)
    engine.reset(seed=0)
    obs, masks = engine.observations, engine.action_masks
    assert not obs.flags.writeable and not masks.flags.writeable
    rng = np.random.default_rng(0)
    batch = policy.act_batch(obs, masks, rng)
    one = [policy.act(obs[i], masks[i], rng) for i in range(4)]
    grouped = act_groups([policy], [4], obs, masks, rng)
    assert masks[np.arange(4), batch].all() and masks[np.arange(4), one].all()
    assert masks[np.arange(4), grouped].all()
    assert shared and all(shared)  # torch shared only writeable memory
    # writeable rows are read in place, as before
    shared.clear()
    policy.act_batch(obs.copy(), masks.copy(), rng)
    assert shared and all(shared)
