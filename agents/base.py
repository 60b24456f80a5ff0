"""The one interface every player implements: :class:`Policy`."""

from __future__ import annotations

import math
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Policy(Protocol):
    """A player that sees only its observation and legal-action mask.

    ``act`` returns an action id whose mask entry is 1. ``reset`` is called at the start of every
    game (episode) so agents that keep memory can clear it; stateless agents do nothing.
    ``observation`` and ``action_mask`` may be read-only (a row of a vector engine's arrays, a
    mask shared by every state that has it): copy them before changing them.
    """

    name: str

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int: ...

    def reset(self, seat: int | None = None) -> None: ...


class BasePolicy:
    """Convenience base: a name, a no-op ``reset`` and a readable ``repr``."""

    name = "policy"

    def reset(self, seat: int | None = None) -> None:
        return None

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def check_parameter(
    agent: str,
    name: str,
    value: Any,
    kind: str = "number",
    low: float | None = None,
    high: float | None = None,
) -> None:
    """Refuse a bad value of an agent's parameter with an error that names both.

    :param kind: ``number`` (a finite int or float), ``int`` or ``bool``; ``low`` and ``high``
        bound a number or an int (inclusive).
    :raises ValueError: the value is not of that kind or out of bounds.
    """
    if kind == "bool":
        ok = isinstance(value, bool)
        wanted = "true or false"
    elif kind == "int":
        ok = isinstance(value, int | np.integer) and not isinstance(value, bool)
        wanted = "an integer"
    else:
        ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(
            value, bool
        )
        if ok:
            try:  # an int too large for a float is no finite number either
                ok = math.isfinite(float(value))
            except OverflowError:
                ok = False
        wanted = "a finite number"
    if ok and kind != "bool":
        if low is not None and value < low:
            ok, wanted = False, f"{wanted} >= {low}"
        elif high is not None and value > high:
            ok, wanted = False, f"{wanted} <= {high}"
    if not ok:
        shown = repr(value)
        shown = shown if len(shown) <= 40 else f"{shown[:20]}... ({len(shown)} characters)"
        raise ValueError(f"{agent}: {name} must be {wanted}, got {shown}")
