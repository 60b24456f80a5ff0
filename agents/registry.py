"""Agent names -> policies: ``random``, ``<variant>.<tier>`` heuristics, or a checkpoint path."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rummyzoo.agents.base import Policy
from rummyzoo.agents.random_agent import RandomPolicy

#: name -> (module path, class name, variant or None for any variant). Heuristics register here.
AGENTS: dict[str, tuple[str, str, str | None]] = {
    "random": ("rummyzoo.agents.random_agent", "RandomPolicy", None),
    "knock.greedy": ("rummyzoo.agents.knock", "GreedyKnock", "knock_rummy"),
    "knock.smart": ("rummyzoo.agents.knock", "SmartKnock", "knock_rummy"),
    "ditch.greedy": ("rummyzoo.agents.ditch", "GreedyDitch", "ditch_rummy"),
    "ditch.smart": ("rummyzoo.agents.ditch", "SmartDitch", "ditch_rummy"),
    "rummy500.greedy": ("rummyzoo.agents.rummy500", "GreedyRummy500", "rummy500"),
    "rummy500.smart": ("rummyzoo.agents.rummy500", "SmartRummy500", "rummy500"),
}

#: Loader for checkpoint paths, installed by ``rummyzoo.training`` (agents never import upward).
CheckpointLoader = Callable[[str, str, int, dict[str, Any]], Policy]
_checkpoint_loader: CheckpointLoader | None = None


def register_checkpoint_loader(loader: CheckpointLoader) -> None:
    """Let ``make_agent`` load trained checkpoints (called by ``rummyzoo.training``)."""
    global _checkpoint_loader
    _checkpoint_loader = loader


def agent_names(variant: str | None = None) -> list[str]:
    """Registered agent names usable for ``variant`` (all when None)."""
    return [n for n, (_, _, v) in AGENTS.items() if variant is None or v in (None, variant)]


def make_agent(
    name: str, variant: str, num_players: int, options: dict[str, Any] | None = None
) -> Policy:
    """Build the policy called ``name`` for a variant, player count and env options.

    :raises ValueError: unknown name, a heuristic of another variant, or a checkpoint that
        does not match (the checkpoint loader says why).
    """
    options = dict(options or {})
    if name in AGENTS:
        module, cls_name, agent_variant = AGENTS[name]
        if agent_variant is not None and agent_variant != variant:
            raise ValueError(
                f"agent {name!r} plays {agent_variant}, not {variant}; agents for {variant}: "
                f"{', '.join(agent_names(variant))}"
            )
        cls = getattr(importlib.import_module(module), cls_name)
        if cls is RandomPolicy:
            return cls()
        return cls(variant=variant, num_players=num_players, options=options)
    if name.endswith((".zip", ".pt")) or Path(name).exists():
        if not Path(name).exists():
            raise ValueError(f"checkpoint {name!r} does not exist")
        if _checkpoint_loader is None:
            importlib.import_module("rummyzoo.training.checkpoints")  # registers the loader
        if _checkpoint_loader is None:
            raise ValueError(f"no checkpoint loader is available for {name!r}")
        return _checkpoint_loader(name, variant, num_players, options)
    raise ValueError(
        f"unknown agent {name!r}; known agents for {variant}: {', '.join(agent_names(variant))} "
        "(or a checkpoint path)"
    )
