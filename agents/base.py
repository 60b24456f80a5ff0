"""The one interface every player implements: :class:`Policy`."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Policy(Protocol):
    """A player that sees only its observation and legal-action mask.

    ``act`` returns an action id whose mask entry is 1. ``reset`` is called at the start of every
    game (episode) so agents that keep memory can clear it; stateless agents do nothing.
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

    def act_on(self, obs: dict[str, Any], rng: np.random.Generator) -> int:
        """Act on a PettingZoo observation dict ``{"observation", "action_mask"}``."""
        return self.act(obs["observation"], obs["action_mask"], rng)
