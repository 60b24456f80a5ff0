"""Optional engineered features appended to the learner's observation.

They are computed from the learner's own observation only (never hidden state), exactly as a
player would work them out from the cards in front of them, and they spare a small network from
rediscovering meld arithmetic. A checkpoint records which features it was trained with, and the
same function is applied when it plays.

``knock_deadwood`` (Knock Rummy), 106 values:

====================  ====  ===================================================================
part                  size  content
====================  ====  ===================================================================
deadwood              1     optimal deadwood of the hand / 100
after_discard         52    for each held card: optimal deadwood without it / 100 (else 0)
melded                52    cards in the optimal melds of the hand
take_discard          1     best deadwood after taking the top discard and throwing a card / 100
====================  ====  ===================================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rummyzoo.envs.cards import mask_cards, plane_masks
from rummyzoo.envs.registry import make_game


def learner_input(
    observation: np.ndarray, mask: np.ndarray, features: Any, mask_in_obs: bool
) -> np.ndarray:
    """The network's input: observation, then features (if any), then the mask (if asked)."""
    parts = [observation]
    if features is not None:
        parts.append(features(observation))
    if mask_in_obs:
        parts.append(np.asarray(mask, dtype=np.float32))
    return np.concatenate(parts) if len(parts) > 1 else observation


def learner_inputs(
    observations: np.ndarray, masks: np.ndarray, features: Any, mask_in_obs: bool
) -> np.ndarray:
    """:func:`learner_input` of each row of ``observations`` (and ``masks``), as one array."""
    parts = [np.asarray(observations, dtype=np.float32)]
    if features is not None:
        batch = getattr(features, "batch", None)
        parts.append(
            batch(observations)
            if batch is not None
            else np.stack([features(o) for o in observations])
        )
    if mask_in_obs:
        parts.append(np.asarray(masks, dtype=np.float32))
    return np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]


class KnockDeadwoodFeatures:
    """See the module docstring."""

    size = 106
    variant = "knock_rummy"
    card_blocks = (1, 53)  # offsets of the 52-wide per-card parts (after_discard, melded)

    def __init__(self, num_players: int, options: dict[str, Any]) -> None:
        from rummyzoo.agents.knock import shared_deadwood

        game = make_game("knock_rummy", num_players, **options)
        self.hand = slice(*game.observation_layout["hand"])
        self.top = slice(*game.observation_layout["top_discard"])
        self.deadwood = shared_deadwood()
        self.allow_taken = game.rules.allow_discard_of_taken

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        out = np.zeros(self.size, dtype=np.float32)
        hand, top = plane_masks(np.concatenate((obs[self.hand], obs[self.top])))
        self._fill(out, hand, top)
        return out

    def batch(self, observations: np.ndarray) -> np.ndarray:
        """:meth:`__call__` of every row, as one ``(rows, 106)`` array (the card planes of all
        rows read at once)."""
        obs = np.asarray(observations)
        out = np.zeros((len(obs), self.size), dtype=np.float32)
        masks = plane_masks(np.concatenate((obs[:, self.hand], obs[:, self.top]), axis=1))
        for row, (hand, top) in enumerate(zip(masks[0::2], masks[1::2], strict=True)):
            self._fill(out[row], hand, top)
        return out

    def _fill(self, out: np.ndarray, hand: int, top: int) -> None:
        """The features of a hand and a top discard (52-bit card masks) into ``out``."""
        dw = self.deadwood
        out[0] = dw(hand) / 100
        for c, d in dw.after_discards(hand).items():
            out[1 + c] = d / 100
        _, melds = dw.solver.solve_mask(hand)
        for m in melds:
            for c in mask_cards(m):
                out[53 + c] = 1.0
        if top:
            card = (top & -top).bit_length() - 1  # the top discard (one card)
            forbid = -1 if self.allow_taken else card
            out[105] = dw.best_discard(hand | (1 << card), forbid)[0] / 100


def _feature_sets() -> dict[str, type]:
    from rummyzoo.agents.action_features import ACTION_FEATURES

    return {"knock_deadwood": KnockDeadwoodFeatures, **ACTION_FEATURES}


#: Every feature set by name (the per-action descriptions: :mod:`rummyzoo.agents.action_features`).
FEATURES: dict[str, type] = _feature_sets()


class KnockDeadwoodPotential:
    """Potential for reward shaping: minus the learner's optimal deadwood (points).

    Shaping by ``gamma * phi(s') - phi(s)`` (potential-based) leaves the optimal policy
    unchanged while rewarding every point of deadwood shed, long before the hand is scored.
    """

    variant = "knock_rummy"

    def __init__(self, num_players: int, options: dict[str, Any]) -> None:
        from rummyzoo.agents.knock import shared_deadwood

        game = make_game("knock_rummy", num_players, **options)
        self.hand = slice(*game.observation_layout["hand"])
        self.deadwood = shared_deadwood()

    def __call__(self, obs: np.ndarray) -> float:
        hand = 0
        for c in np.flatnonzero(obs[self.hand]).tolist():
            hand |= 1 << c
        return -float(self.deadwood(hand))


class DitchHandMarginPotential:
    """Potential for reward shaping: the hand's points margin if the hand ended now (points).

    Ditch Rummy scores every meld and single when it is played, and charges the cards still
    held when the hand ends. This potential is the observer's side's points this hand, less
    the penalty of the cards it holds, minus the mean of the other sides' (an opponent's hand
    is unseen: each of its cards is charged the mean penalty of the cards the observer has not
    seen). It is the ``margin`` reward's own measure, so the shaped rewards pay each play's
    points when it is made instead of at the end of the hand, and their sum over a hand is the
    hand's margin less the potential it started from (up to the discount: the end's potential is
    0); the optimal policy is unchanged.
    """

    variant = "ditch_rummy"
    margin = True

    def __init__(self, num_players: int, options: dict[str, Any]) -> None:
        from rummyzoo.envs.ditch_rummy.rules import HAND_POINTS_SCALE, ORDER_TO_CARD

        game = make_game("ditch_rummy", num_players, **options)
        lay = game.observation_layout
        n = num_players
        penalty = np.zeros(52)
        penalty[np.asarray(ORDER_TO_CARD)] = game.card_penalty  # by card id, as the planes are
        self.penalty = penalty
        self.hand = slice(*lay["hand"])
        # every card plane a card can be seen in: the hand, the discards, melds and singles
        seen = [lay["hand"][0], lay["discard_pile"][0]]
        for name in ("sets", "runs", "singles"):
            seen += range(lay[name][0], lay[name][1], 52)
        self.seen = np.asarray(seen)[:, None] + np.arange(52)
        self.points = slice(*lay["hand_points"])
        self.points_scale = HAND_POINTS_SCALE
        self.sizes = slice(*lay["hand_sizes"])
        self.sizes_scale = float(game.max_hand)
        self.teammates = slice(*lay["teammates"])
        self.sides = n // 2 if game.rules.teams else n

    def batch(self, obs: np.ndarray) -> np.ndarray:
        """The potential of every row of ``obs`` ``(N, L)``."""
        obs = np.asarray(obs, dtype=np.float64)
        own = obs[:, self.hand] @ self.penalty
        unseen = obs[:, self.seen].sum(axis=1) == 0
        count = unseen.sum(axis=1)
        mean_unseen = (unseen @ self.penalty) / np.maximum(count, 1)
        points = np.rint(obs[:, self.points] * self.points_scale)
        held = np.rint(obs[:, self.sizes] * self.sizes_scale) * mean_unseen[:, None]
        held[:, 0] = own
        side = obs[:, self.teammates] > 0.5
        net = points - held
        mine = (net * side).sum(axis=1)
        if not self.margin:
            return mine
        return mine - (net * ~side).sum(axis=1) / (self.sides - 1)

    def __call__(self, obs: np.ndarray) -> float:
        return float(self.batch(np.asarray(obs)[None])[0])


class DitchHandPointsPotential(DitchHandMarginPotential):
    """Potential for reward shaping: the observer's side's points this hand if it ended now
    (its points, less the penalty of the cards it holds, and with teams its partner's points
    less the partner's cards at the mean penalty of the unseen cards). The measure of the
    ``points`` and ``scaled`` rewards, as :class:`DitchHandMarginPotential` is the margin's."""

    margin = False


POTENTIALS: dict[str, type] = {
    "knock_deadwood": KnockDeadwoodPotential,
    "ditch_hand_margin": DitchHandMarginPotential,
    "ditch_hand_points": DitchHandPointsPotential,
}


def _build(
    kind: str,
    table: dict[str, type],
    name: str | None,
    variant: str,
    num_players: int,
    options: dict[str, Any],
) -> Any:
    if name is None:
        return None
    if name not in table:
        raise ValueError(f"unknown {kind} {name!r}; known: {', '.join(table)}")
    cls = table[name]
    if cls.variant != variant:
        raise ValueError(f"{kind} {name!r} are for {cls.variant}, not {variant}")
    return cls(num_players, dict(options))


def make_potential(
    name: str | None, variant: str, num_players: int, options: dict[str, Any]
) -> Any:
    """The shaping potential called ``name`` (None: no shaping).

    :raises ValueError: unknown name, or a potential of another variant.
    """
    return _build("shaping", POTENTIALS, name, variant, num_players, options)


def make_features(name: str | None, variant: str, num_players: int, options: dict[str, Any]) -> Any:
    """The feature function called ``name`` (None: no features).

    :raises ValueError: unknown name, or features of another variant.
    """
    return _build("features", FEATURES, name, variant, num_players, options)
