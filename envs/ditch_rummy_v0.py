"""Ditch Rummy (PettingZoo AEC), version 0.

.. code-block:: python

    import numpy as np

    from rummyzoo.envs import ditch_rummy_v0

    env = ditch_rummy_v0.env(num_players=2, render_mode="ansi")  # a match to 500
    env.reset(seed=7)
    rng = np.random.default_rng(7)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        legal = np.flatnonzero(obs["action_mask"])
        action = None if terminated or truncated else int(rng.choice(legal))
        env.step(action)
    print(env.render())

Rules (docs/rules.md section 2)
-------------------------------
2-4 players; four may play as two teams, partners opposite (seats 0+2 against 1+3), adding
their points together. One 52-card deck, ranked 2 < 3 < ... < K < A (aces high only, runs never
wrap). Nothing is dealt: the shuffled deck is the draw pile and hands start empty; the player
left of the dealer starts and play goes clockwise. A turn has three steps:

1. **Draw** any number of cards from the top of the draw pile, bringing the hand to at most 3
   (drawing none is allowed). With ``draw_rule="up_to_3"`` a player draws 0-3 whatever the hand
   holds, as long as it stays within ``max_hand``.
2. **Play**, any number of times in any order: a new meld from the hand (a *set*: 2-3 cards of one
   rank; a *blind run*: 2-3 consecutive ranks in any suits, e.g. 4c-5h-6c), or a *single*: one
   card that fits a meld already on the table, anyone's, including melds made this turn (the
   rank of a set, or the rank just below or above the ends of a blind run). A single scores but
   does not join the meld unless ``single_extends_meld``. Melds and singles stay face up in front
   of the player who played them.
3. **Ditch** any number of cards face up to the discard pile (they score nothing; nobody draws
   from the discard pile), or pass.

Points are earned when played: a single 2, a single ace 10, a set 5, a blind run 25. The hand
ends

* at once when a player melds a 3-card blind run J-Q-K or Q-K-A (after scoring it);
* when the draw pile is empty, after the turn in which its last card was drawn;
* when a full round (every player once) passes with no draw, play or ditch (stall guard).

However it ends, every card still in a hand then costs its single value (-2, an ace -10; see
``hand_penalty``), the run ender's cards included. A hand's points are the points earned minus
that penalty. The match goes to ``target_score`` (500): after a hand in which someone reaches it,
the highest total wins; a tie for the lead plays another hand; the deal rotates clockwise.
Teams score their members' points together.

Decisions in this implementation (where docs/rules.md leaves room):

* A turn is a sequence of decisions: ``draw k``; then melds and singles; the first ditch moves
  the turn to its ditch step (no more plays); ``end turn`` ends it. A turn ends by itself when the
  hand is empty after a draw, play or ditch (there is nothing left to decide).
* Only a *new* 3-card meld J-Q-K or Q-K-A ends the hand; a single (even one that extends a J-Q
  under ``single_extends_meld``) does not.
* With ``runs_same_suit`` a single fits a run only in the run's suit; sets take any suit.
* With ``single_extends_meld`` the single joins the earliest meld on the table that it fits in
  the chosen way (onto a set, below a run's low end or above its high end); for scoring and for
  what fits later only that way matters, not which of several equal melds it joins.
* ``draw_rule="up_to_3"`` lets a hand grow past 3 cards; ``max_hand`` (default 6, at most 10)
  bounds it so actions can keep addressing hand positions. The bound is the environment's:
  the game's rule sets none (see ``docs/rules.md``, 2.2).

Options (``env(num_players=N, **options)``)
-------------------------------------------
=====================  ============  ==========================================================
option                 default       meaning
=====================  ============  ==========================================================
num_players            2             2-4
teams                  False         two teams, seats 0+2 vs 1+3 (needs 4 players)
draw_rule              "fill_to_3"   or "up_to_3" (draw 0-3 whatever the hand holds)
max_hand               None          hand limit: 3 for fill_to_3 (fixed); 3-10 for up_to_3
                                     (None = 6)
runs_same_suit         False         runs (and singles off runs) need one suit
single_extends_meld    False         a single joins the meld it is played off
points_single          2             a single other than an ace
points_single_ace      10            a single ace
points_set             5             a set of 2 or 3 cards
points_run             25            a blind run of 2 or 3 cards
hand_penalty           "per_card"    cards left in hand count as negative singles, or "none"
target_score           500           None = one hand per episode; N = a match to N points
max_turns              500           turns per hand before truncation. A hand always ends by
                                     itself within 104 + 105 * (N - 1) turns (<= 419): every
                                     turn that is not idle draws or gets rid of at least one
                                     card (52 draws, 52 removals at most) and the stall guard
                                     allows N - 1 idle turns in a row; so the default never cuts
                                     a legal hand short
first_dealer           None          None = seat N-1 deals, so player_0 acts first
render_mode            None          "ansi" returns text, "human" prints
reward                 "points"      "points", "scaled" (points / reward_scale), "margin"
                                     (side's points minus the other sides' mean, / reward_scale)
                                     "win_loss" (+1 top scorer(s), -1 others, 0 all tied) or
                                     "rank" (per other side +1 outscored, -1 outscored by,
                                     averaged; at the episode's end) or "lead" (each hand's
                                     change of the side's total minus the best other side's,
                                     / reward_scale)
reward_scale           100.0         divisor for reward="scaled", "margin" and "lead"
render_view            None          None = all hands open; a seat = that seat's view
max_hands              1000          a match undecided after this many hands truncates
=====================  ============  ==========================================================

Bad option names, types or values raise :class:`~rummyzoo.envs.core.ConfigError` naming the option
(e.g. ``teams=True`` with 3 players).

Actions
-------
Actions address the *hand positions*: the hand sorted by rank (2 low ... A high), ties by suit
(clubs, diamonds, hearts, spades). ``H`` = ``max_hand`` (3 by default). With the defaults the
table is ``Discrete(16)``:

==========  ======================  ============================================================
id          name                    meaning
==========  ======================  ============================================================
0-3         ``draw k``              draw ``k`` cards from the top of the draw pile (draw step)
4           ``meld 0 1``            meld the cards at positions 0 and 1 (set or run: the cards
                                    decide; two cards can never be both)
5           ``meld 0 2``            positions 0 and 2
6           ``meld 1 2``            positions 1 and 2
7           ``meld 0 1 2``          positions 0, 1 and 2
8-10        ``single i``            play the card at position ``i`` as a single
11-13       ``ditch i``             ditch the card at position ``i`` (starts the ditch step)
14          ``ditch all``           ditch every card in hand (ends the turn; needs 2+ cards)
15          ``end turn``            end the turn ("pass" when nothing was ditched)
==========  ======================  ============================================================

In general: ``draw k`` (4 ids), then one ``meld`` per set of 2 or 3 positions out of ``H``
(all pairs in lexicographic order, then all triples), then the singles, then ``ditch i`` for
``i < H``, ``ditch all`` and ``end turn``. With ``single_extends_meld=True`` each position has
three singles, ``single i set`` / ``single i below`` / ``single i above`` (join a set, extend a
run at its low end, extend a run at its high end): 22 actions. ``draw_rule="up_to_3"`` with
``max_hand=6`` has 35 melds and 53 actions. ``env.unwrapped.action_name(a)`` and
``env.unwrapped.action_index("meld 0 2")`` convert; ``env.unwrapped.describe_action(a)`` names
the cards for the player to act (``"meld 0 1: set 9c 9h (+5)"``), and ``render`` lists the legal
actions that way. An illegal action raises :class:`~rummyzoo.envs.core.IllegalActionError`
naming the action, the agent, the legal actions and the hand with its positions.

Observation
-----------
``{"observation": float32[L], "action_mask": int8[A]}`` from the observing player's seat; other
seats are relative (1 = next clockwise; with teams the partner is 2).
``env.unwrapped.game.observation_layout`` maps each name to its ``(start, stop)`` slice:

=================  ===========  ==============================================================
name               size         content
=================  ===========  ==============================================================
hand               52           own cards (card id ``suit * 13 + rank``, Ace=0 ... King=12)
hand_positions     52*H         row ``i``: one-hot of the card at hand position ``i`` (zero
                                row when the hand is shorter): what each action addresses
discard_pile       52           every ditched card
fits_set           52           cards whose rank has a set on the table (a single fits it)
fits_below_run     52           cards that fit just below a run's low end
fits_above_run     52           cards that fit just above a run's high end
sets               52*N         per relative seat: cards in its sets
runs               52*N         per relative seat: cards in its runs
singles            52*N         per relative seat: cards it played as singles
hand_sizes         N            per relative seat: cards in hand / H
hand_points        N            per relative seat: points earned this hand / 100
teammates          N            1 for the observer and (teams) the partner, else 0
scores             N            match totals by relative seat (a team's total for each
                                member) / target_score (/ 500 when target_score is None)
to_act             N            relative seat to act (one-hot)
dealer             N            relative seat of the dealer (one-hot)
phase              3            [draw, play, ditch] when it is the observer's turn
draw_pile          1            cards left in the draw pile / 52
drawn              1            cards drawn this turn by the player to act / 3
idle_turns         1            turns in a row without a draw, play or ditch / N
turn               1            turns played this hand / max_turns
=================  ===========  ==============================================================

L = 52 * H + 162 * N + 267 (``env.unwrapped.game.obs_size``): 747, 909 and 1071 for 2, 3 and 4
players with the defaults. Nothing hidden is encoded: other hands appear only as their sizes,
the draw pile only as its size.

Rewards and infos
-----------------
The reward arrives when a hand ends: raw hand points by default (see ``reward``; with teams each
member gets the team's points). ``infos[agent]`` after a hand ends holds ``points`` (raw hand
points: earned minus penalty), ``hand_index``, ``earned`` (points from plays), ``penalty`` (what
the cards left in hand cost, as a positive number), ``cards_left``, ``melds``
(e.g. ``"run 4c 5h 6c"``), ``singles`` (card strings), ``end_reason`` (``"blind_run"``,
``"draw_pile_empty"`` or ``"stall"``) and ``ended_by`` (the agent whose run ended the hand); in
match mode also ``totals`` (own or own team's match total) and ``match_totals`` (all agents). A
hand reaching ``max_turns`` truncates the episode.

Scripting
---------
``env.reset(seed=..., options={"deck": ["As", "2s", ...]})`` plays the first hand from the given
52-card order: the whole deck is the draw pile, its first card on top.
:mod:`rummyzoo.envs.ditch_rummy.scripting` completes a partial order (``deck_with_top("9c 9h
Kd")``) and steps an env through action names (``play(env, ["draw 3", "meld 0 1"])``).

Version history
---------------
* v0: first release.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rummyzoo.envs.aec import RummyEnv, VariantEnv, env_factory
from rummyzoo.envs.core import check_action
from rummyzoo.envs.ditch_rummy.rules import DitchRummyGame, DitchRummyRules
from rummyzoo.envs.vector import vector_factory, with_vector_docs

__all__ = ["DitchRummyRules", "env", "raw_env", "vector"]


class raw_env(VariantEnv):
    """Unwrapped Ditch Rummy AEC env; see the module docstring."""

    game_class = DitchRummyGame
    metadata: ClassVar[dict[str, Any]] = {**RummyEnv.metadata, "name": "ditch_rummy_v0"}

    def describe_action(self, action: int) -> str:
        """The action's name with the cards it moves for the player to act now."""
        return self.game.describe_action(
            self.hand_state, check_action(action, self.game.num_actions)
        )


env = env_factory(raw_env, "Ditch Rummy")
vector = vector_factory(DitchRummyGame, "Ditch Rummy")
__doc__ = with_vector_docs(__doc__, "ditch_rummy_v0")
