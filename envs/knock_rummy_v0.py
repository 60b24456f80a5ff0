"""Knock Rummy (PettingZoo AEC), version 0.

.. code-block:: python

    from rummyzoo.envs import knock_rummy_v0

    env = knock_rummy_v0.env(num_players=2, render_mode="ansi")
    env.reset(seed=7)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        mask = obs["action_mask"]
        action = None if terminated or truncated else int(mask.nonzero()[0][0])
        env.step(action)

Rules (docs/rules.md section 1)
-------------------------------
2-6 players, one 52-card deck, aces low (A-2-3 is a run, Q-K-A and K-A-2 are not), values A=1,
2-10 pip, J/Q/K=10. 10 cards each for 2 players, 7 for 3-4, 6 for 5-6, dealt one at a time
clockwise from the dealer's left; the next card starts the discard pile, the rest is the stock.
On a turn a player draws the top stock card or the top discard, then discards a card or knocks
("knock and discard card c" is one action); a card just taken from the discard pile cannot be
thrown back, nor knocked with, in the same turn (unless ``allow_discard_of_taken``). After a
knock every hand is split into sets (3-4 of a rank) and runs (3+ in a suit) minimising
deadwood (the value of the cards in no meld); no laying off. Let ``m`` be the lowest deadwood.
The players with ``m`` win (a knocker tying for lowest loses the win to the tying opponents);
every other player, with deadwood ``d``, pays ``d - m``, shared equally by the winners. A
knocker who wins alone with 0 deadwood also gets the rummy bonus (``rummy_bonus``, 25) from
each opponent; a knocker pays the undercut penalty (``undercut_penalty``, 10) to every opponent
with strictly lower deadwood. Transfers sum to zero (exact split).
If a turn ends without a knock and the stock holds ``void_threshold`` cards or fewer, the hand
is void by default (everyone 0).

Options (``env(num_players=N, **options)``)
-------------------------------------------
========================  ===============  ===================================================
option                    default          meaning
========================  ===============  ===================================================
num_players               2                2-6
hand_size                 10/7/7/6/6       cards dealt each (by player count)
knock_max_deadwood        None             max deadwood after the knock discard (10 = gin)
allow_discard_of_taken    False            may the card just taken from the discard be thrown
rummy_bonus               25               per opponent, knocker alone on 0 deadwood
undercut_penalty          10               knocker pays each opponent strictly below him
undercut_penalty_to       "all_lower"      or "winners_only"
split_rounding            "exact"          or "floor" (shares rounded down, odd points lost)
stock_exhaustion          "void"           or "reshuffle" (discards under the top card are
                                           shuffled under the stock) or "showdown" (scored,
                                           no knocker: no bonus, no penalty)
void_threshold            0                stock size that counts as exhausted (2 = gin)
target_score              None             None = one hand; N = a match to N points
max_turns                 300              turns per hand before truncation (a hand in
                                           which players keep taking the top discard
                                           never shrinks the stock, and one that
                                           reshuffles it can go on: 300 cuts both)
first_dealer              None             None = seat N-1 deals, so player_0 acts first
render_mode               None             "ansi" returns text, "human" prints
reward                    "points"         "points", "scaled" (points / reward_scale),
                                           "margin" (side's points minus the other sides'
                                           mean, / reward_scale), "win_loss" (+1 the
                                           winners: a match's top total, or one hand's
                                           showdown winners, so a knocker who ties
                                           loses; -1 the others) or "rank"
                                           (per other side +1 outscored, -1 outscored by,
                                           averaged; at the episode's end) or "lead" (each
                                           hand's change of the side's total minus the best
                                           other side's, / reward_scale)
reward_scale              100.0            divisor for reward="scaled", "margin" and "lead"
render_view               None             None = all hands open; a seat = that seat's view
max_hands                 1000             a match undecided after this many hands truncates
========================  ===============  ===================================================

Bad option names, types or values raise :class:`~rummyzoo.envs.core.ConfigError` naming the option.

Actions (``Discrete(106)``)
---------------------------
=========  ===================  ===========================================
id         name                 meaning
=========  ===================  ===========================================
0          ``draw stock``       take the top stock card
1          ``take discard``     take the top discard card
2 + c      ``discard <card>``   discard card ``c`` (e.g. ``discard Kh``)
54 + c     ``knock <card>``     discard card ``c`` and knock (``knock Kh``)
=========  ===================  ===========================================

Card ids ``c = suit * 13 + rank`` (clubs, diamonds, hearts, spades; Ace=0 ... King=12).
``env.unwrapped.action_name(a)`` and ``env.unwrapped.action_index("knock Kh")`` convert.
An illegal action raises :class:`~rummyzoo.envs.core.IllegalActionError` naming the action, the
agent and the legal actions (also through ``env()``: it does not turn an illegal move into a
silent loss).

Observation
-----------
``{"observation": float32[L], "action_mask": int8[106]}`` from the observing player's seat; other
seats are relative (1 = next clockwise). ``env.unwrapped.game.observation_layout`` maps each name
to its ``(start, stop)`` slice:

=================  ==========  ===========================================================
name               size        content
=================  ==========  ===========================================================
hand               52          own cards
top_discard        52          the top discard card (one-hot; empty if none)
buried_discards    52          every other card in the discard pile
opponent_known     52*(N-1)    per opponent: cards it took from the discard pile and holds
opponent_thrown    52*(N-1)    per opponent: cards it discarded this hand
stock_size         1           stock cards / 52
phase              2           [draw, discard] when it is the observer's turn
to_act             N           relative seat to act (one-hot)
dealer             N           relative seat of the dealer (one-hot)
turn               1           turns played / max_turns
scores             N           match totals by relative seat / target (0 in single hands)
padding            48 - 3*N    zeros: the scalar features fill one 52-wide row
=================  ==========  ===========================================================

L = 52 * (2 * N + 2) (``env.unwrapped.game.obs_size``: 312 for 2 players, 416 for 3): the
card planes, then one 52-wide row that holds the 4 + 3 * N scalar features and zeros.
Nothing hidden is encoded: an opponent's hand appears only through the cards it took from
the discard pile.

Rewards and infos
-----------------
The reward arrives when a hand ends: raw points by default (see ``reward``). ``infos[agent]``
after a hand ends holds ``points`` (raw hand points), ``hand_index``, ``void``, ``knocker``, and
at a showdown ``deadwood``, ``melds`` and ``deadwood_cards`` (card strings); in match mode also
``totals`` (own match total) and ``match_totals`` (all agents). The episode is one hand, or a
match when ``target_score`` is set (when someone reaches it the highest total wins; a tie for the
lead plays another hand; the deal rotates clockwise). A hand reaching ``max_turns`` truncates.

Scripting
---------
``env.reset(seed=..., options={"deck": ["As", "2s", ...]})`` deals the first hand from the given
52-card order (top of the stock first: the first card goes to the dealer's left).

Version history
---------------
* v0: first release.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rummyzoo.envs.aec import RummyEnv, VariantEnv, env_factory
from rummyzoo.envs.knock_rummy.rules import KnockRummyGame, KnockRummyRules
from rummyzoo.envs.vector import vector_factory, with_vector_docs

__all__ = ["KnockRummyRules", "env", "raw_env", "vector"]


class raw_env(VariantEnv):
    """Unwrapped Knock Rummy AEC env; see the module docstring."""

    game_class = KnockRummyGame
    metadata: ClassVar[dict[str, Any]] = {**RummyEnv.metadata, "name": "knock_rummy_v0"}


env = env_factory(raw_env, "Knock Rummy")
vector = vector_factory(KnockRummyGame, "Knock Rummy")
__doc__ = with_vector_docs(__doc__, "knock_rummy_v0")
