"""Bad input changes nothing: illegal actions, refused resets, non-integer actions and decks,
and the winner of a tied Knock Rummy showdown. For every variant, through the public API."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from rummyzoo.envs.core import ViewsSurviveCopies
from rummyzoo.envs.match import Match
from rummyzoo.envs.registry import VARIANTS, make_env, make_game

BAD_ACTIONS = [
    1.9,
    True,
    "1",
    np.float32(1.5),
    float("inf"),
    None,
    [1],
    np.bool_(True),
    np.array(1.0),
    np.array(True),
    np.array([1]),
    np.timedelta64(1, "s"),  # numpy counts it among its integers
    np.array(1, dtype="m8[s]"),
]
BAD_DECK_ENTRIES = [50.7, True, None, -1, 52, np.float64(3.0)]


def _snapshot(env) -> dict:
    """Everything an agent can read of the env, deep-copied."""
    raw = env.unwrapped
    return copy.deepcopy(
        {
            "agents": list(raw.agents),
            "selection": raw.agent_selection,
            "rewards": dict(raw.rewards),
            "cumulative": dict(raw._cumulative_rewards),
            "terminations": dict(raw.terminations),
            "truncations": dict(raw.truncations),
            "infos": raw.infos,
            "last": env.last(),
            "observations": {a: raw.observe(a) for a in raw.possible_agents},
            "totals": raw.match_totals,
        }
    )


def _same(a: dict, b: dict) -> bool:
    def norm(x):
        if isinstance(x, dict):
            return {k: norm(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [norm(v) for v in x]
        if isinstance(x, np.ndarray):
            return ("array", x.dtype.str, x.tolist())
        return x

    return norm(a) == norm(b)


def _play_until_a_hand_pays(env, rng) -> None:
    """Random legal moves until the agent to act has an uncollected nonzero reward."""
    for _ in range(20_000):
        raw = env.unwrapped
        if any(raw.rewards.values()) and not (
            raw.terminations[raw.agent_selection] or raw.truncations[raw.agent_selection]
        ):
            return
        obs, _r, term, trunc, _i = env.last()
        if term or trunc:
            env.reset()
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    raise AssertionError("no hand paid out")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_an_illegal_action_after_a_paying_hand_changes_nothing(variant: str) -> None:
    """A reward not yet collected (the hand just ended; the next hand is being played) must
    survive an illegal action, and so must everything else an agent sees."""
    target = {"knock_rummy": 100, "ditch_rummy": 500, "rummy500": 500}[variant]
    env = make_env(variant, 2, target_score=target)
    env.reset(seed=0)
    _play_until_a_hand_pays(env, np.random.default_rng(0))
    before = _snapshot(env)
    assert before["last"][1] != 0 or any(before["rewards"].values())
    mask = env.last()[0]["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(ValueError, match=f"illegal action {illegal}"):
        env.step(illegal)
    assert _same(_snapshot(env), before)


def test_knock_reward_kept_after_an_illegal_action_worked_example() -> None:
    """target_score=100, seed 0: draw, then the first legal knock; an illegal step(5) after it
    leaves the hand's reward in last() and in rewards."""
    env = make_env("knock_rummy", 2, target_score=100)
    env.reset(seed=0)
    raw = env.unwrapped
    env.step(0)
    knock = next(a for a in raw.legal_actions() if raw.action_name(a).startswith("knock"))
    env.step(knock)
    reward, rewards = env.last()[1], dict(raw.rewards)
    assert reward != 0 and any(rewards.values())
    with pytest.raises(ValueError, match="illegal action 5"):
        env.step(5)
    assert env.last()[1] == reward and raw.rewards == rewards


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_zero_d_integer_array_is_its_action(variant: str) -> None:
    """``model.predict(obs)`` on one observation gives a 0-d array, which the action space
    contains: the env plays it as that action, as it plays the int."""
    env, twin = make_env(variant, 2), make_env(variant, 2)
    env.reset(seed=1)
    twin.reset(seed=1)
    legal = int(np.flatnonzero(env.last()[0]["action_mask"])[-1])
    assert env.action_space(env.agent_selection).contains(np.array(legal))
    env.step(np.array(legal, dtype=np.int32))
    twin.step(legal)
    assert _same(_snapshot(env), _snapshot(twin))
    with pytest.raises(ValueError, match="out of range"):
        env.step(np.array(10_000))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("action", BAD_ACTIONS, ids=repr)
def test_only_integers_are_actions(variant: str, action: object) -> None:
    env = make_env(variant, 2)
    env.reset(seed=1)
    before = _snapshot(env)
    with pytest.raises(ValueError, match="not an action id") as err:
        env.step(action)
    assert repr(action) in str(err.value) and type(action).__name__ in str(err.value)
    assert _same(_snapshot(env), before)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("target_score", "target_score must be at most 2147483647, got an int of 401 digits"),
        ("max_turns", "max_turns must be at most 2147483647, got an int of 401 digits"),
        ("max_hands", "max_hands must be at most 2147483647, got 10000000000"),
        ("reward_scale", "reward_scale must be a finite positive number, got an int of 401"),
    ],
)
def test_huge_numbers_are_refused_as_options(variant: str, option: str, message: str) -> None:
    """Each was accepted before (most then failed building the game, with an OverflowError)."""
    from rummyzoo.envs.core import ConfigError

    value = 10**10 if option == "max_hands" else 10**400
    with pytest.raises(ConfigError, match=message):
        make_env(variant, 2, **{option: value})


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_an_action_after_the_game_ended_is_refused_naming_why(variant: str) -> None:
    """An agent whose game is over may only step None; with every agent gone, the raw env
    says the game is over (a bare KeyError before); the wrapped env warns as PettingZoo's
    order enforcing does. Nothing changes in either case."""
    from rummyzoo.envs.core import IllegalActionError

    raw = make_env(variant, 2).unwrapped
    raw.reset(seed=3)
    rng = np.random.default_rng(0)
    while not raw.terminations[raw.agent_selection] and not raw.truncations[raw.agent_selection]:
        raw.step(int(rng.choice(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"]))))
    agent = raw.agent_selection
    before = _snapshot(raw)
    with pytest.raises(IllegalActionError, match=f"{agent} sent action 0 after its game ended"):
        raw.step(0)
    assert _same(_snapshot(raw), before)
    while raw.agents:
        raw.step(None)
    for call in (lambda: raw.step(0), lambda: raw.step(None)):
        with pytest.raises(IllegalActionError, match=r"the game is over .*call reset\(\)"):
            call()
    with pytest.raises(RuntimeError, match="the game is over"):
        raw.last()
    raw.reset(seed=4)  # and it plays again
    assert raw.agents and raw.last()[0]["action_mask"].any()


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("kind", [int, np.int64, np.int32, np.uint8])
def test_ints_and_numpy_integers_are_actions(variant: str, kind: type) -> None:
    env = make_env(variant, 2)
    env.reset(seed=1)
    reference = make_env(variant, 2)
    reference.reset(seed=1)
    legal = env.unwrapped.legal_actions()[-1]
    env.step(kind(legal))
    reference.step(int(legal))
    assert _same(_snapshot(env), _snapshot(reference))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("entry", BAD_DECK_ENTRIES, ids=repr)
def test_a_refused_deck_leaves_the_env_as_it_was(variant: str, entry: object) -> None:
    """The old hand stays playable and nothing (totals, rewards, the hand) is reset."""
    env = make_env(variant, 2, target_score=10_000)
    env.reset(seed=2)
    _play_until_a_hand_pays(env, np.random.default_rng(2))
    before = _snapshot(env)
    deck = list(range(52 * env.unwrapped.game.num_decks))
    deck = [c % 52 for c in deck]
    deck[0] = entry
    with pytest.raises(ValueError, match="deck entry 0"):
        env.reset(seed=3, options={"deck": deck})
    assert _same(_snapshot(env), before)
    obs = env.last()[0]
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))  # the old hand plays on


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("options", ["deck", ["deck"], 5])
def test_reset_options_must_be_a_dict(variant: str, options: object) -> None:
    env = make_env(variant, 2)
    env.reset(seed=4)
    before = _snapshot(env)
    with pytest.raises(ValueError, match="reset options must be a dict"):
        env.reset(options=options)
    assert _same(_snapshot(env), before)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_refused_seed_changes_nothing(variant: str) -> None:
    env = make_env(variant, 2)
    env.reset(seed=5)
    env.step(env.unwrapped.legal_actions()[0])
    before = _snapshot(env)
    for seed in (-1, 1.5, "7"):
        with pytest.raises(ValueError, match="seed"):
            env.reset(seed=seed)
        assert _same(_snapshot(env), before)


# A 2-player Knock hand where player_1 ties the knocker at 7 deadwood: the knocker loses the
# win to the tying opponent (docs/rules.md section 1). player_0 holds As 2s 3s 4h 5h 6h 7c 8c
# 9c 7d, draws Kh from the stock and knocks with it (deadwood 7: the 7d); player_1 holds
# Ah 2h 3h Kc Kd Ks 4c 5c 6c 7h (deadwood 7: the 7h).
TIE_HANDS = ("As 2s 3s 4h 5h 6h 7c 8c 9c 7d", "Ah 2h 3h Kc Kd Ks 4c 5c 6c 7h")


def _tie_env(**options):
    from rummyzoo.envs.cards import CARD_NAMES, parse_cards

    p0, p1 = (parse_cards(h) for h in TIE_HANDS)
    deal = [c for pair in zip(p0, p1, strict=True) for c in pair]  # one at a time, player_0 first
    up = parse_cards("Qd Kh")  # the upcard, then the top of the stock
    rest = [c for c in range(52) if c not in set(deal) | set(up)]
    env = make_env("knock_rummy", 2, **options)
    env.reset(seed=0, options={"deck": [CARD_NAMES[c] for c in deal + up + rest]})
    raw = env.unwrapped
    env.step(raw.action_index("draw stock"))
    env.step(raw.action_index("knock Kh"))
    return env


def test_a_tying_opponent_wins_the_hand_and_win_loss_says_so() -> None:
    env = _tie_env()
    infos = env.unwrapped.infos
    assert infos["player_0"]["deadwood"] == infos["player_1"]["deadwood"] == 7
    assert infos["player_0"]["knocker"] == "player_0"
    assert (infos["player_0"]["winner"], infos["player_1"]["winner"]) == (False, True)
    env = _tie_env(reward="win_loss")
    assert env.unwrapped.rewards == {"player_0": -1.0, "player_1": 1.0}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_shared_option_reaches_every_variant_and_agent(variant: str) -> None:
    """Each shared option (MatchOptions) is accepted by the env of every variant and by every
    agent of that variant, which then plays a game with it."""
    from rummyzoo.agents.arena import record_episode
    from rummyzoo.agents.registry import agent_names, make_agent
    from rummyzoo.envs.match import MATCH_OPTION_NAMES

    shared = {
        "target_score": 50,
        "max_turns": 200,
        "first_dealer": 0,
        "max_hands": 2,
        "reward": "scaled",
        "reward_scale": 10.0,
        "render_mode": "ansi",
        "render_view": 1,
    }
    assert set(shared) == set(MATCH_OPTION_NAMES)
    env = make_env(variant, 2, **shared)
    env.reset(seed=0)
    assert env.unwrapped.game.match.max_hands == 2
    for name in agent_names(variant):
        make_agent(name, variant, 2, shared)  # the agents take every env option
    play = {k: v for k, v in shared.items() if k not in ("reward", "reward_scale")}
    play = {k: v for k, v in play.items() if not k.startswith("render")}
    for name in agent_names(variant):
        replay = record_episode(variant, 2, [name, "random"], seed=1, options=play)
        assert 1 <= len(replay["decks"]) <= 2  # max_hands=2 stops the match


def test_num_players_is_not_an_option() -> None:
    from rummyzoo.agents.arena import run_arena
    from rummyzoo.envs.registry import make_match

    with pytest.raises(ValueError, match="num_players is not an option"):
        make_match("knock_rummy", 2, {"num_players": 3}, "the test")
    with pytest.raises(ValueError, match="num_players is not an option"):
        run_arena("knock_rummy", 2, ["random", "random"], deals=1, options={"num_players": 3})


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_unknown_option_lists_what_the_tool_takes(variant: str) -> None:
    """A tool that sets the report options itself (the arena, a run's games) lists, for an
    unknown name, the options it takes: not the report options it refuses."""
    from rummyzoo.envs.match import REPORT_OPTION_NAMES
    from rummyzoo.envs.registry import make_match
    from rummyzoo.training.seat_env import SeatEnv

    builds = [
        lambda opts: make_match(variant, 2, opts, "the test"),
        lambda opts: SeatEnv(variant, 2, env_options=opts),
    ]
    for build in builds:
        with pytest.raises(ValueError, match="unknown option") as caught:
            build({"target_scor": 100})
        message = str(caught.value)
        assert "did you mean 'target_score'" in message and "max_hands" in message
        assert not [name for name in REPORT_OPTION_NAMES if name in message], message
        with pytest.raises(ValueError, match="unknown option") as caught:
            build({"rewad": "points"})  # no report option offered as what was meant
        assert "did you mean" not in str(caught.value)
    # the env itself takes them, and lists them
    with pytest.raises(ValueError, match="reward_scale"):
        make_game(variant, 2, target_scor=100)


def _play_rewards(variant: str, players: int, seed: int, **options) -> tuple[dict, bool]:
    """Random legal play of one episode; every agent's summed rewards, and whether it ended
    by termination (not a cap)."""
    env = make_env(variant, players, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    sums = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
        else:
            mask = env.unwrapped.observe(agent)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
        for a, r in env.unwrapped.rewards.items():
            sums[a] += r
    terminated = all(env.unwrapped.terminations.get(a, True) for a in env.possible_agents)
    return sums, terminated


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [
        ("knock_rummy", 4, {"target_score": 60, "knock_max_deadwood": 10}),
        ("knock_rummy", 3, {}),
        ("ditch_rummy", 4, {"teams": True, "target_score": 300}),
        ("ditch_rummy", 3, {}),
        ("rummy500", 4, {"target_score": 200}),
        ("rummy500", 2, {}),
    ],
)
def test_rank_reward_counts_the_sides_each_side_outscored(variant, players, options) -> None:
    """``reward="rank"``: at the episode's end each seat gets, over the other sides, the mean
    of +1 (its side scored more points in the episode), -1 (fewer) and 0 (as many): checked
    against the summed raw points of the same games."""
    seen = set()
    for seed in range(4):
        points, ended = _play_rewards(variant, players, seed, reward="points", **options)
        ranks, _ = _play_rewards(variant, players, seed, reward="rank", **options)
        assert ended
        teams = options.get("teams", False)
        names = sorted(points)
        side = {a: (i % 2 if teams else i) for i, a in enumerate(names)}
        # a team member's points reward is the team's sum already
        totals = {side[a]: points[a] for a in names}
        for a in names:
            others = [t for s, t in totals.items() if s != side[a]]
            expected = sum(np.sign(totals[side[a]] - t) for t in others) / len(others)
            assert ranks[a] == pytest.approx(expected), (seed, a, points, ranks)
            seen.add(ranks[a])
        assert sum(ranks.values()) == pytest.approx(0.0)
    assert len(seen) > 1  # the games did not all end alike


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [
        ("knock_rummy", 4, {"target_score": 60, "knock_max_deadwood": 10}),
        ("ditch_rummy", 4, {"teams": True, "target_score": 300}),
        ("ditch_rummy", 3, {}),
        ("rummy500", 4, {"target_score": 200}),
    ],
)
def test_lead_reward_pays_the_change_in_the_lead_over_the_best_other_side(
    variant, players, options
) -> None:
    """``reward="lead"``: after every hand each seat gets the change, over that hand, of its
    side's total minus the best other side's total (/ ``reward_scale``), so its rewards so far
    add up to that difference of the match totals at every hand's end."""
    game = make_game(variant, players, **options, reward="lead", reward_scale=4.0)
    teams = options.get("teams", False)
    side = [s % 2 if teams else s for s in range(players)]
    seen = set()
    for seed in range(3):
        match = Match(game)
        match.reset(seed)
        rng = np.random.default_rng(seed)
        paid = np.zeros(players)
        hands = 0
        while not match.over:
            end = match.step(int(rng.choice(np.flatnonzero(match.legal_mask()))))
            if end is None or end.rewards is None:
                continue
            hands += 1
            paid += end.rewards
            totals = {side[s]: end.infos[s]["totals"] for s in range(players)}
            for s in range(players):
                best = max(t for g, t in totals.items() if g != side[s])
                assert paid[s] == pytest.approx((totals[side[s]] - best) / 4.0), (seed, s)
                seen.add(round(paid[s], 6))
        assert hands >= 1
    assert len(seen) > 2


def test_lead_reward_is_the_margin_between_two_players() -> None:
    """With two sides, the lead over the best other side is the margin over the other one."""
    for variant in VARIANTS:
        lead, _ = _play_rewards(variant, 2, 5, reward="lead", target_score=None)
        margin, _ = _play_rewards(variant, 2, 5, reward="margin", target_score=None)
        assert lead == pytest.approx(margin)
        assert sum(lead.values()) == pytest.approx(0.0)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_global_state_is_every_seats_observation(variant: str) -> None:
    """PettingZoo's ``state()`` (for a centralised critic), through the wrapped env."""
    env = make_env(variant, num_players=3)
    with pytest.raises(AssertionError, match="reset"):
        env.state()
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(12):
        obs, _r, term, trunc, _i = env.last()
        if term or trunc:
            break
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    state = env.state()
    seats = [env.unwrapped.observe(a)["observation"] for a in env.unwrapped.possible_agents]
    assert state.dtype == np.float32 and env.state_space.contains(state)
    assert np.array_equal(state, np.concatenate(seats))


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [
        ("knock_rummy", 2, {"knock_max_deadwood": 10, "target_score": 100}),
        ("knock_rummy", 4, {"knock_max_deadwood": 20, "target_score": 100}),
        ("ditch_rummy", 2, {}),
        ("ditch_rummy", 4, {"teams": True, "draw_rule": "up_to_3"}),
        ("rummy500", 2, {}),
        ("rummy500", 4, {"target_score": 200}),
    ],
)
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copied_env_plays_on_exactly_as_the_original(variant, players, options, how) -> None:
    """A deep or pickled copy taken mid-hand (a search tree's node, say) shows and does what the
    original does, step for step, across the next hands; the original is untouched by the
    copy's moves."""
    import pickle

    env = make_env(variant, players, render_mode="ansi", **options)
    env.reset(seed=11)
    rng = np.random.default_rng(5)

    def move(e):
        _obs, _r, term, trunc, _i = e.last()
        if term or trunc:
            return None
        return int(rng.choice(np.flatnonzero(e.last()[0]["action_mask"])))

    for _ in range(7):
        env.step(move(env))
    before = _snapshot(env)
    copied = copy.deepcopy(env) if how == "deepcopy" else pickle.loads(pickle.dumps(env))
    assert _same(_snapshot(copied), before)
    assert copied.render() == env.render()
    assert not copied.unwrapped.deck.flags.writeable  # the deal's record stays read-only
    # the copy plays a few moves of its own: the original must not see them
    probe = copy.deepcopy(copied) if how == "deepcopy" else pickle.loads(pickle.dumps(copied))
    for _ in range(5):
        if probe.agents:
            probe.step(move(probe))
    assert _same(_snapshot(env), before)
    first_hand = env.unwrapped.match.hand_index
    for _ in range(600):
        if not env.agents:
            break
        action = move(env)
        env.step(action)
        copied.step(action)
        if not env.agents:
            assert not copied.agents and copied.unwrapped.match_totals == env.unwrapped.match_totals
            break
        assert _same(_snapshot(copied), _snapshot(env))
        assert copied.render() == env.render()  # the table: melds shared by two lists too
    # the copies played past the end of a hand
    assert not env.agents or env.unwrapped.match.hand_index > first_hand


class _Holder(ViewsSurviveCopies):
    """Arrays sharing one buffer, containers shared between attributes."""

    def __init__(self) -> None:
        self.buf = np.zeros(12)
        self.rows = [self.buf[0:4], self.buf[4:8]]
        self.again = self.rows  # the same list, under a second name
        self.frozen = self.buf[8:]
        self.frozen.flags.writeable = False
        self.table = {"top": self.buf[1:3]}
        self.plain = [[1, 2], "x"]
        self.shared_plain = self.plain


def test_copies_keep_the_memory_arrays_share_and_the_containers_objects_share():
    """pack_views: views of one buffer stay views of one (copied) buffer, read-only stays
    read-only, a list referenced twice stays one list, plain values are left alone."""
    import pickle

    for clone in (copy.deepcopy, lambda h: pickle.loads(pickle.dumps(h))):
        held = _Holder()
        copied = clone(held)
        copied.rows[1][:] = 7
        copied.table["top"][:] = 5
        assert copied.buf.tolist() == [0, 5, 5, 0, *[7] * 4, 0, 0, 0, 0]
        assert held.buf.tolist() == [0.0] * 12  # the original is untouched
        assert copied.again is copied.rows and copied.shared_plain is copied.plain
        assert not copied.frozen.flags.writeable and copied.buf.flags.writeable
        assert copied.plain == [[1, 2], "x"]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_refused_action_is_no_step_of_agent_iter(variant: str) -> None:
    """The wrapped env counted a refused step as a step: a loop over agent_iter that swallows
    the error went on to the next agent without any step played. Now the loop says so."""
    from rummyzoo.envs import IllegalActionError

    env = make_env(variant, 2)
    env.reset(seed=0)
    agents = iter(env.agent_iter(5))
    next(agents)
    with pytest.raises(IllegalActionError):
        env.step(10**6)
    with pytest.raises(AssertionError, match=r"need to call step\(\)"):
        next(agents)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_spaces_of_an_unknown_agent_name_this_games_agents(variant: str) -> None:
    env = make_env(variant, 2)
    for space in (env.observation_space, env.action_space, env.unwrapped.observation_space):
        with pytest.raises(ValueError, match="no agent 'player_9' in this game: its agents are"):
            space("player_9")
    assert env.action_space("player_1").n == env.unwrapped.game.num_actions


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_hand_ends_are_numbered_from_one_also_when_the_turn_cap_cuts(variant: str) -> None:
    """Every hand end, played out or cut by ``max_turns``, carries the hand's 1-based number,
    the same as its infos' ``hand_index``; a cut after finished hands is numbered after them."""
    cap = {"knock_rummy": 8, "ditch_rummy": 12, "rummy500": 30}[variant]
    game = make_game(variant, 2, target_score=1000, max_turns=cap)
    rng = np.random.default_rng(0)
    late_cuts = 0
    for seed in range(60):
        match = Match(game)
        match.reset(seed=seed)
        numbers = []
        while not match.over:
            end = match.step(int(rng.choice(np.flatnonzero(match.legal_mask()))))
            if end is not None:
                numbers.append(end.index)
                assert all(info["hand_index"] == end.index for info in end.infos)
                late_cuts += end.truncated_by is not None and end.index > 1
        assert numbers == list(range(1, len(numbers) + 1))
    assert late_cuts > 0
