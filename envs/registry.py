"""Variant registry: name -> env module (each module has ``env`` and ``raw_env``)."""

from __future__ import annotations

import importlib
from types import ModuleType

#: variant name -> (module path, supported player counts)
VARIANTS: dict[str, tuple[str, tuple[int, ...]]] = {
    "knock_rummy": ("rummyzoo.envs.knock_rummy_v0", (2, 3, 4, 5, 6)),
    "rummy500": ("rummyzoo.envs.rummy500_v0", (2, 3, 4, 5, 6, 7, 8)),
    "ditch_rummy": ("rummyzoo.envs.ditch_rummy_v0", (2, 3, 4)),
}


def variant_module(name: str) -> ModuleType:
    """The env module of a variant.

    :raises ValueError: for an unknown variant, listing the known ones.
    """
    try:
        path, _ = VARIANTS[name]
    except KeyError:
        raise ValueError(
            f"unknown variant {name!r}; known variants: {', '.join(VARIANTS)}"
        ) from None
    return importlib.import_module(path)


def check_players(name: str, num_players: int) -> None:
    """:raises ValueError: when the variant does not support ``num_players``."""
    variant_module(name)
    counts = VARIANTS[name][1]
    if num_players not in counts:
        raise ValueError(f"{name} supports {counts[0]}-{counts[-1]} players, got {num_players}")


def make_env(name: str, num_players: int = 2, wrapped: bool = True, **options):
    """Build a variant's env (``env()`` when wrapped, else ``raw_env``)."""
    check_players(name, num_players)
    module = variant_module(name)
    factory = module.env if wrapped else module.raw_env
    return factory(num_players=num_players, **options)
