"""Variant registry: name -> env module (each module has ``env`` and ``raw_env``) and game."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import numpy as np

from rummyzoo.envs import match
from rummyzoo.envs.core import ConfigError, Game, refuse_unknown

#: variant name -> (env module path, supported player counts)
VARIANTS: dict[str, tuple[str, tuple[int, ...]]] = {
    "knock_rummy": ("rummyzoo.envs.knock_rummy_v0", (2, 3, 4, 5, 6)),
    "rummy500": ("rummyzoo.envs.rummy500_v0", (2, 3, 4, 5, 6, 7, 8)),
    "ditch_rummy": ("rummyzoo.envs.ditch_rummy_v0", (2, 3, 4)),
}
#: variant name -> its Game class, as ``module:Class`` (the rules, without PettingZoo)
GAMES: dict[str, str] = {
    "knock_rummy": "rummyzoo.envs.knock_rummy.rules:KnockRummyGame",
    "rummy500": "rummyzoo.envs.rummy500.rules:Rummy500Game",
    "ditch_rummy": "rummyzoo.envs.ditch_rummy.rules:DitchRummyGame",
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
    """:raises ConfigError: when ``num_players`` is no int or a count the variant does not
    support."""
    variant_module(name)
    counts = VARIANTS[name][1]
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)):
        raise ConfigError(
            f"{name}: num_players must be an int, got {num_players!r} "
            f"({type(num_players).__name__})"
        )
    if num_players not in counts:
        raise ConfigError(
            f"{name} supports {counts[0]}-{counts[-1]} players, got {int(num_players)}"
        )


def make_game(name: str, /, num_players: int = 2, kernels: Any = None, **options: Any) -> Game:
    """A variant's :class:`~rummyzoo.envs.core.Game` from ``env()``-style options (the rules
    and the shared match options, validated the same way), without building an env.
    ``kernels``: None (compiled where built), ``PURE`` or a kernels module
    (:func:`rummyzoo.envs.native.resolve_kernels`)."""
    check_players(name, num_players)
    return match.make_game(game_class(name), num_players, options, kernels=kernels)


def game_of_options(name: str, num_players: int, options: dict[str, Any]) -> Game:
    """:func:`make_game` with ``options`` all the game's options, none taken as an argument of
    its own (``kernels`` in a file's recorded options is an unknown option, not a choice of
    kernels)."""
    check_players(name, num_players)
    return match.make_game(game_class(name), num_players, dict(options))


def game_class(name: str) -> type[Game]:
    """The Game class of a variant (its ``match_defaults``, ``rules_class``...)."""
    module, _, cls = GAMES[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def make_env(name: str, num_players: int = 2, wrapped: bool = True, **options):
    """Build a variant's env (``env()`` when wrapped, else ``raw_env``)."""
    check_players(name, num_players)
    module = variant_module(name)
    factory = module.env if wrapped else module.raw_env
    return factory(num_players=num_players, **options)


def make_vector(
    name: str,
    num_envs: int,
    num_players: int = 2,
    infos: bool = False,
    kernels: Any = None,
    **options: Any,
):
    """A variant's :class:`~rummyzoo.envs.vector.VectorEnv` (``num_envs`` games stepped
    together) from ``env()``-style options: the variant module's ``vector()``."""
    check_players(name, num_players)
    return variant_module(name).vector(num_envs, num_players, infos, kernels, **options)


def make_match(
    name: str, num_players: int, options: dict[str, Any] | None, owner: str, **report: Any
) -> match.Match:
    """A :class:`~rummyzoo.envs.match.Match` for a tool that sets the report options itself.

    :param options: the user's options: rules options and match options, but none of
        ``REPORT_OPTION_NAMES`` (rewards, rendering), which ``owner`` sets (``report``).
    :raises ConfigError: a report option among ``options`` (naming ``owner``), or a bad option.
    """
    options = rules_options(options, owner, name)
    return match.Match(make_game(name, num_players, **report, **options))


def rules_options(options: Any, owner: str, variant: str | None = None) -> dict[str, Any]:
    """A copy of ``options``, checked to hold no report option (which ``owner`` sets) and,
    given the ``variant``, no name that is not one of its options (the error lists the
    options ``owner`` takes: the report options left out).

    :raises ConfigError: ``options`` not a dict, ``num_players``, a report option or an
        unknown name among them.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"options must be a dict of rules options, got {options!r}")
    if "num_players" in options:
        raise ConfigError("num_players is not an option: pass the player count as num_players")
    reserved = sorted(set(options) & set(match.REPORT_OPTION_NAMES))
    if reserved:
        raise ConfigError(
            f"option(s) {', '.join(reserved)} are set by {owner}; pass rules options only"
        )
    if variant is not None:
        variant_module(variant)  # (an unknown variant named as such)
        taken = [n for n in match.MATCH_OPTION_NAMES if n not in match.REPORT_OPTION_NAMES]
        refuse_unknown(game_class(variant).rules_class, options, taken)
    return dict(options)
