"""500 Rum (PettingZoo AEC), version 0.

.. code-block:: python

    from rummyzoo.envs import rummy500_v0

    env = rummy500_v0.env(num_players=3, render_mode="ansi")
    env.reset(seed=7)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        mask = obs["action_mask"]
        action = None if terminated or truncated else int(mask.nonzero()[0][0])
        env.step(action)

Rules (docs/rules.md section 3)
-------------------------------
2-8 players; one 52-card deck for 2-4 players, two decks (104 cards, every card twice) for 5-8.
10 cards each for 2 players, 7 otherwise, dealt one at a time clockwise from the dealer's left;
the next card starts the discard pile, which is spread: its order and contents are public. The
rest is the stock. The player left of the dealer starts; the deal rotates clockwise.

Melds are sets of 3-4 cards of one rank in distinct suits (also with two decks: two copies of a
card never share a set) and runs of 3+ consecutive cards of one suit. An ace is the bottom
(A-2-3, worth 1 there) or the top (Q-K-A, worth 15) of a run, never inside: runs do not go round
the corner (no K-A-2, nothing laid off beyond an ace). Card values: ace 15 (in hand, in a set,
at the top of a run), 1 at the low end of a run; J/Q/K 10; others pip value.

A turn: (1) draw the top stock card, or dig into the discard pile: take a chosen card together
with every card above it. The chosen card must be used at once: the first play of the turn must
be a meld or lay-off containing it, and digging is legal only when such a play exists with the
hand plus the cards taken. This applies to taking only the top card too, unless
``top_discard_free``. (2) Meld (own melds, in front of the player) and lay off single cards onto
any player's meld (extend a run at either end, complete a set; a card laid off can be extended
again: 6-5-4, then 7, then 8), as often as wanted. The points of a lay-off belong to the player
who lays it off. (3) Discard one card. A player whose hand becomes empty by melding or laying off
goes out without discarding; discarding the last card also goes out. Going out ends the hand at
once.

When the last stock card has been taken that player finishes the turn; then, by default
(``stock_exhaustion="discard_only"``), play goes on from the discard pile under the usual rule,
and the hand ends as soon as the player to move cannot dig (automatically) or does not (the
``pass`` action). With ``"end_after_last_stock_turn"`` the hand ends after that turn.

Hand score = value of the cards the player melded or laid off this hand minus the value of the
cards left in the hand (no bonus for going out; scores may be negative). A match goes to
``target_score`` (500): after a hand, if anyone has reached it, the highest total wins; a tie for
the lead plays another hand.

Options (``env(num_players=N, **options)``)
-------------------------------------------
========================  ======================  ===============================================
option                    default                 meaning
========================  ======================  ===============================================
num_players               2                       2-8 (5-8 play with two decks)
hand_size                 10 (2 players), else 7  cards dealt each; needs
                                                  players * hand_size + 2 <= cards in play
top_discard_free          False                   taking only the top discard is free of the
                                                  must-use rule (and it may be discarded again)
stock_exhaustion          "discard_only"          or "end_after_last_stock_turn" (see above)
target_score              500                     a match to this score; None = one hand
max_turns                 300                     turns per hand before truncation. A hand ends by
                                                  itself within (stock size + cards in play)
                                                  turns: every turn takes a stock card or puts a
                                                  dug card on the table (at most 202 turns for
                                                  any legal option set). Only free top-card
                                                  turns (``top_discard_free``) can cycle; the cap
                                                  ends such hands
first_dealer              None                    None = seat N-1 deals, so player_0 acts first
render_mode               None                    "ansi" returns text, "human" prints
reward                    "points"                "points" (raw hand points), "scaled" (points /
                                                  reward_scale), "margin" (side's points minus
                                                  the other sides' mean, / reward_scale),
                                                  "win_loss" (+1 top scorer(s), -1 others, 0 all
                                                  tied; at the episode's end) or "rank" (per
                                                  other side +1 outscored, -1 outscored by,
                                                  averaged; at the episode's end) or "lead"
                                                  (each hand's change of the side's total
                                                  minus the best other side's, / reward_scale)
reward_scale              100.0                   divisor for reward="scaled", "margin" and
                                                  "lead"
render_view               None                    None = all hands open; a seat = that seat's view
max_hands                 1000                    a match undecided after this many hands truncates
========================  ======================  ===============================================

Bad option names, types or values raise :class:`~rummyzoo.envs.core.ConfigError` naming the option.

Actions (``Discrete(414)``, the same table for every player count)
------------------------------------------------------------------
=========  ============================  ====================================================
id         name                          meaning
=========  ============================  ====================================================
0          ``draw stock``                take the top stock card
1          ``pass``                      stock empty (``discard_only``): decline the discard
                                         pile, which ends the hand
2 + c      ``dig <card>``                take the topmost copy of card ``c`` in the discard
                                         pile and every card above it (``dig 7h``; when ``c``
                                         is the top card this takes just it)
54 + c     ``dig <card> deep``           two decks, both copies of ``c`` in the pile: dig to
                                         the lower copy (taking the upper one too)
106 + m    ``meld <3 cards>``            meld ``m`` of the meld table below
                                         (``meld 4h 5h 6h``, ``meld 7c 7d 7s``)
206 + c    ``lay off <card> on set``     complete a set of c's rank that lacks c's suit
258 + c    ``lay off <card> below run``  c becomes the new lowest card of a run of its suit
                                         (``lay off Ah below run``: ace low, worth 1)
310 + c    ``lay off <card> above run``  c becomes the new highest card of a run of its suit
                                         (``lay off Ah above run``: ace high, worth 15)
362 + c    ``discard <card>``            discard ``c`` (ends the turn)
=========  ============================  ====================================================

Card ids ``c = suit * 13 + rank`` (clubs, diamonds, hearts, spades; Ace=0 ... King=12).
``env.unwrapped.action_name(a)`` and ``env.unwrapped.action_index("lay off Ah above run")``
convert; every id round-trips, and ``action_index`` also takes a meld's cards in any order
(``"meld 6h 4h 5h"``).

The meld table has the 100 three-card melds: ids 0-47 are the runs, ``12 * suit + start`` with
start 0 = A-2-3 ... 10 = J-Q-K, 11 = Q-K-A; ids 48-99 are the sets, ``48 + 4 * rank + k`` over
the four 3-suit choices in the order (c,d,h), (c,d,s), (c,h,s), (d,h,s). Longer melds are built
by laying off onto one's own meld in the same turn, which scores exactly the same, and a dug card
usable in a longer meld is also usable in a three-card part of it, so the must-use rule loses
nothing. Where a lay-off could go to more than one meld of the same kind (two decks), it goes to
the first such set, or to the shortest such run, which keeps every other option open.

The mask enforces the turn structure: in the draw phase ``draw stock`` (or ``pass``) and the
legal digs; after a dig only melds and lay-offs containing the dug card until it is used (no
discard); then melds, lay-offs and discards of any held card.

Observation
-----------
``{"observation": float32[L], "action_mask": int8[414]}`` from the observing player's seat; other
seats are relative (1 = next clockwise). ``env.unwrapped.game.observation_layout`` maps each name
to its ``(start, stop)`` slice. Card planes have 52 entries in card-id order; with two decks they
hold counts (0-2).

==================  ==========  ===========================================================
name                size        content
==================  ==========  ===========================================================
hand                52          own cards
discard_pile        52          position of each card in the discard pile, counted from
                                the bottom: (index + 1) / D, 0 = not in the pile (the
                                topmost copy with two decks); D = 52 * decks
discard_pile_lower  52          two decks only: position of the lower copy when both
                                copies are in the pile
discard_top         52          the top discard (one-hot)
table_laid          52 * N      per relative seat (self first): cards that seat melded or
                                laid off this hand
table_runs          52          table cards that sit in runs (the others are in sets)
fits_set            52          cards that could be laid off on a set now
fits_below_run      52          cards that could be laid off as the new low end of a run
fits_above_run      52          cards that could be laid off as the new high end of a run
opponent_known      52 * (N-1)  per opponent: cards it dug out of the discard pile and
                                still holds, as far as the table can tell (each copy
                                it plays lowers the count by one, whichever copy it
                                was, so a hidden second copy never shows)
pending             52          the dug card that must still be used (one-hot)
stock_size          1           stock cards / D
discard_size        1           discard pile cards / D
phase               3           [draw, must use the pending card, free play] when it is
                                the observer's turn, else zeros
to_act              N           relative seat to act (one-hot)
dealer              N           relative seat of the dealer (one-hot)
hand_sizes          N           cards held by each relative seat / 52
table_points        N           value each relative seat melded and laid off this hand / 100
turn                1           turns played this hand / max_turns
scores              N           match totals by relative seat / target_score (0 for single
                                hands)
==================  ==========  ===========================================================

L = 52 * (2N + 7) + 5N + 6 with one deck (588 for 2 players, 806 for 4) and 52 more with two
(967 for 5 players, 1294 for 8); precisely ``env.unwrapped.game.obs_size``. Nothing hidden is
encoded: an opponent's hand appears only through the cards it dug and still holds, and the stock
order never appears.

Rewards and infos
-----------------
The reward arrives when a hand ends: raw hand points by default (see ``reward``). ``infos[agent]``
after a hand ends holds ``points`` (raw hand points), ``hand_index``, ``end_reason``
(``"went out"``, ``"stock exhausted"`` or ``"pass"``), ``went_out`` (the agent who went out or
None), ``melded_points``, ``hand_penalty`` (value of the cards left in hand) and ``hand_cards``
(card strings); in match mode also ``totals`` (own match total) and ``match_totals`` (all
agents), and ``winner`` once the match is over. A hand reaching ``max_turns`` truncates the
episode (no points).

Scripting
---------
``env.reset(seed=..., options={"deck": [...]})`` deals the first hand from the given order: 52
card strings, or 104 with two decks (each card twice); top of the stock first, so the first card
goes to the dealer's left, then the up card, then the stock.

Version history
---------------
* v0: first release.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rummyzoo.envs.aec import RummyEnv, VariantEnv, env_factory
from rummyzoo.envs.rummy500.rules import Rummy500Game, Rummy500Rules
from rummyzoo.envs.vector import vector_factory, with_vector_docs

__all__ = ["Rummy500Rules", "env", "raw_env", "vector"]


class raw_env(VariantEnv):
    """Unwrapped 500 Rum AEC env; see the module docstring."""

    game_class = Rummy500Game
    metadata: ClassVar[dict[str, Any]] = {**RummyEnv.metadata, "name": "rummy500_v0"}


env = env_factory(raw_env, "500 Rum")
vector = vector_factory(Rummy500Game, "500 Rum")
__doc__ = with_vector_docs(__doc__, "rummy500_v0")
