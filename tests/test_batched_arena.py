"""Games played many at once on the vector engine are the games played one after another."""

from __future__ import annotations

import numpy as np
import pytest
from run_helpers import untrained_checkpoint

from rummyzoo.agents.arena import run_arena
from rummyzoo.agents.arena.evaluate import evaluate_policy
from rummyzoo.agents.base import BasePolicy
from rummyzoo.agents.checkpoints import load_policy


def _same(a, b):
    for key in ("points", "hands", "decisions", "truncated", "decks"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key), err_msg=key)


@pytest.mark.parametrize(
    ("variant", "agents", "options"),
    [
        ("knock_rummy", ["random", "knock.greedy"], {"target_score": 60}),
        ("ditch_rummy", ["random", "ditch.greedy", "random"], {"target_score": None}),
        ("ditch_rummy", ["ditch.greedy", "random"], {"teams": True, "target_score": 100}),
        ("rummy500", ["rummy500.greedy", "random"], {"target_score": None, "max_turns": 40}),
    ],
)
def test_batched_arena_plays_the_same_games(variant, agents, options):
    n = 4 if options.get("teams") else len(agents)
    one = run_arena(variant, n, agents, deals=6, seed=9, options=options, keep_decks=True)
    many = run_arena(variant, n, agents, deals=6, seed=9, options=options, keep_decks=True, batch=5)
    _same(one, many)


def test_a_network_decides_for_all_its_games_with_one_call(tmp_path):
    path = untrained_checkpoint(tmp_path / "a.rz")
    policy = load_policy(path, "knock_rummy", 2, {})
    assert not policy.uses_rng  # greedy
    calls = []
    act_batch = policy.act_batch

    def counted(observations, masks, rng):
        calls.append(len(observations))
        return act_batch(observations, masks, rng)

    policy.act_batch = counted
    options = {"target_score": None}
    one = run_arena("knock_rummy", 2, [policy, "knock.greedy"], deals=8, seed=1, options=options)
    assert calls == []  # one game after another: act
    many = run_arena(
        "knock_rummy", 2, [policy, "knock.greedy"], deals=8, seed=1, options=options, batch=16
    )
    assert calls and max(calls) > 1
    _same(one, many)
    assert evaluate_policy(policy, "random", "knock_rummy", 2, options, 4, 0)["games"] == 8


class Remembers(BasePolicy):
    """Keeps what it saw during a game: the arena gives each game its own copy."""

    name = "remembers"

    def reset(self, seat=None):
        self.moves = 0

    def act(self, observation, action_mask, rng):
        self.moves += 1
        legal = np.flatnonzero(action_mask)
        return int(legal[self.moves % legal.size])


def test_a_policy_with_memory_gets_a_copy_per_game():
    options = {"target_score": None}
    one = run_arena("ditch_rummy", 2, [Remembers(), "random"], deals=4, seed=2, options=options)
    many = run_arena(
        "ditch_rummy", 2, [Remembers(), "random"], deals=4, seed=2, options=options, batch=8
    )
    _same(one, many)


def test_batch_is_checked():
    with pytest.raises(ValueError, match="batch"):
        run_arena("knock_rummy", 2, ["random", "random"], deals=2, batch=0)
    with pytest.raises(ValueError, match="save_games"):
        run_arena("knock_rummy", 2, ["random", "random"], deals=2, batch=4, save_games="x")
