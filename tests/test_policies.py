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
