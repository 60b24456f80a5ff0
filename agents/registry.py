"""Agent names -> policies.

A name is one of:

* ``random`` or a ``<variant>.<tier>`` heuristic (the built-in agents, :data:`AGENTS`);
* a name that an installed package registers in the entry-point group ``rummyzoo.agents``
  (the entry point's name is the agent name, its value ``module:Class``);
* ``package.module:ClassName``: the module is imported and the class taken from it;
* a checkpoint path (a shareable ``.rz``, loaded by :mod:`rummyzoo.agents.checkpoints` without
  unpickling anything; a stable-baselines3 ``.zip`` or a torch file is refused, saying how to
  convert a trusted one).

Every class, built-in or not, is built the same way: when its constructor takes ``variant``,
``num_players`` or ``options`` keyword arguments (or ``**kwargs``) they are passed, otherwise it
is called with no arguments. A class may declare the variants it plays in a class attribute
``variants`` (a tuple of variant names); it is refused for any other variant.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import re
import warnings
from pathlib import Path
from typing import Any

from rummyzoo.agents.base import Policy

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

#: Entry-point group in which installed packages register agent names.
ENTRY_POINT_GROUP = "rummyzoo.agents"

#: Keyword arguments an agent's constructor may take.
CONSTRUCTOR_KEYWORDS = ("variant", "num_players", "options")

#: What every agent must have (see :class:`rummyzoo.agents.base.Policy`).
POLICY_MEMBERS = ("name", "act", "reset")

#: ``package.module:ClassName`` (the class may be a dotted path inside the module).
_IMPORT_NAME = re.compile(r"^\s*(?P<module>[\w.]+)\s*:\s*(?P<attr>[\w.]+)\s*$")


# ---------------------------------------------------------------------------- entry points
def plugin_entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """Installed ``rummyzoo.agents`` entry points by agent name.

    A name that is also a built-in agent is left out with a warning (the built-in wins); of two
    entry points with one name the first is kept, also with a warning.
    """
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in AGENTS:
            warnings.warn(
                f"entry point {ep.name!r} = {ep.value!r} (group {ENTRY_POINT_GROUP}"
                f"{_provider(ep)}) has the name of a built-in agent; the built-in {ep.name!r} "
                f"is used. Register it under another name to use it, or name it by "
                f"{ep.value!r} directly",
                UserWarning,
                stacklevel=3,
            )
            continue
        if ep.name in found:
            first = found[ep.name]
            if first.value != ep.value:
                warnings.warn(
                    f"entry point {ep.name!r} is registered twice in group {ENTRY_POINT_GROUP}: "
                    f"{first.value!r}{_provider(first)} is used, {ep.value!r}{_provider(ep)} "
                    "is ignored",
                    UserWarning,
                    stacklevel=3,
                )
            continue
        found[ep.name] = ep
    return found


def _provider(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f", from {dist.name}" if dist is not None else ""


def _entry_point_class(name: str, ep: importlib.metadata.EntryPoint) -> type:
    """The class an entry point names; every failure is a ValueError naming the entry point."""
    where = f"entry point {name!r} = {ep.value!r} (group {ENTRY_POINT_GROUP}{_provider(ep)})"
    match = _IMPORT_NAME.match(ep.value.split("[", 1)[0])
    if match is None:
        raise ValueError(
            f"{where} failed to load: its value must be 'module:Class'; fix the entry point in "
            "the providing package's pyproject.toml and reinstall it"
        )
    try:
        return _import_class(match["module"], match["attr"])
    except ValueError as exc:
        raise ValueError(f"{where} failed to load: {exc}") from exc


# ---------------------------------------------------------------------------- module:Class
def _import_class(module_name: str, attr: str) -> type:
    """``attr`` (a class, possibly dotted) of module ``module_name``.

    :raises ValueError: the module cannot be imported, lacks the attribute, or it is no class.
    """
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
            raise ValueError(
                f"cannot import module {module_name!r} ({type(exc).__name__}: {exc}); install "
                "the package that provides it, or put its folder on PYTHONPATH"
            ) from exc
        raise ValueError(
            f"cannot import module {module_name!r}: a module it imports is missing "
            f"({type(exc).__name__}: {exc}); install that dependency"
        ) from exc
    except Exception as exc:
        raise ValueError(
            f"cannot import module {module_name!r}: importing it raised {type(exc).__name__}: {exc}"
        ) from exc
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            defined = _classes_of(module)
            raise ValueError(
                f"module {module_name!r} has no class {attr!r}; classes defined there: "
                f"{', '.join(defined) if defined else 'none'}"
            )
        target = getattr(target, part)
    if not inspect.isclass(target):
        raise ValueError(
            f"{module_name}:{attr} is a {type(target).__name__}, not a class; name a class "
            "with name, act(observation, action_mask, rng) and reset(seat=None)"
        )
    return target


def _classes_of(module: Any) -> list[str]:
    """Names of the classes a module defines itself (not the ones it imports)."""
    return sorted(
        name
        for name, value in vars(module).items()
        if inspect.isclass(value) and getattr(value, "__module__", None) == module.__name__
    )


# ---------------------------------------------------------------------------- building
def _declared_variants(cls: type) -> tuple[str, ...] | None:
    """The ``variants`` class attribute as a tuple (a single string counts as one variant)."""
    declared = getattr(cls, "variants", None)
    if declared is None:
        return None
    if isinstance(declared, str):
        return (declared,)
    return tuple(declared)


def _missing_members(obj: Any) -> list[str]:
    """Which of ``name``, ``act`` and ``reset`` ``obj`` lacks (``act``/``reset``: not callable)."""
    missing = []
    for member in POLICY_MEMBERS:
        if not hasattr(obj, member):
            missing.append(member)
        elif member != "name" and not callable(getattr(obj, member)):
            missing.append(f"{member} (not callable)")
    return missing


def _not_a_policy(label: str, missing: list[str]) -> ValueError:
    return ValueError(
        f"agent {label} is not a Policy: it lacks {', '.join(missing)}; an agent needs a "
        "name attribute, act(observation, action_mask, rng) -> action and reset(seat=None) "
        "(subclass rummyzoo.agents.BasePolicy for name and reset)"
    )


def _constructor_kwargs(
    cls: type, label: str, variant: str, num_players: int, options: dict[str, Any]
) -> dict[str, Any]:
    """The keyword arguments to build ``cls`` with: those of ``variant``, ``num_players`` and
    ``options`` its constructor takes (all with ``**kwargs``), else none.

    :raises ValueError: the constructor needs an argument it is not given.
    """
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # no signature to read (a class implemented in C)
        return {}
    values = {"variant": variant, "num_players": num_players, "options": options}
    params = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return values
    keyword_kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    kwargs = {
        p.name: values[p.name] for p in params if p.name in values and p.kind in keyword_kinds
    }
    required = [
        p.name
        for p in params
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        and p.name not in kwargs
    ]
    if required:
        raise ValueError(
            f"agent {label} cannot be built: its constructor requires {', '.join(required)}; "
            f"it may take only the keyword arguments {', '.join(CONSTRUCTOR_KEYWORDS)} "
            "(any others need defaults)"
        )
    return kwargs


def _build(
    cls: type, name: str, label: str, variant: str, num_players: int, options: dict[str, Any]
) -> Policy:
    """Check and construct one agent class (built-in or plugin)."""
    declared = _declared_variants(cls)
    if declared is not None and variant not in declared:
        raise ValueError(
            f"agent {name!r} plays {', '.join(declared) or 'no variant'}, not {variant}; agents "
            f"for {variant}: {', '.join(agent_names(variant))}"
        )
    missing = [m for m in _missing_members(cls) if m != "name"]  # name may be set in __init__
    if missing:
        raise _not_a_policy(label, missing)
    policy = cls(**_constructor_kwargs(cls, label, variant, num_players, options))
    missing = _missing_members(policy)
    if missing or not isinstance(policy, Policy):
        raise _not_a_policy(label, missing or list(POLICY_MEMBERS))
    return policy


def _plugin_variants(ep: importlib.metadata.EntryPoint, name: str) -> tuple[str, ...] | None:
    """The variants an entry-point agent declares (None: any, or it does not load)."""
    try:
        return _declared_variants(_entry_point_class(name, ep))
    except ValueError:
        return None  # listed anyway; make_agent says what is wrong


# ---------------------------------------------------------------------------- public
def agent_names(variant: str | None = None) -> list[str]:
    """Agent names usable for ``variant`` (all when None): built-ins, then entry points."""
    names = [n for n, (_, _, v) in AGENTS.items() if variant is None or v in (None, variant)]
    for name, ep in plugin_entry_points().items():
        if variant is None:
            names.append(name)
            continue
        declared = _plugin_variants(ep, name)
        if declared is None or variant in declared:
            names.append(name)
    return names


def make_agent(
    name: str, variant: str, num_players: int, options: dict[str, Any] | None = None
) -> Policy:
    """Build the policy called ``name`` for a variant, player count and env options.

    ``name`` is a built-in agent, an entry point of group ``rummyzoo.agents``, a
    ``package.module:ClassName`` or a checkpoint path (see the module docstring).

    :raises ValueError: unknown name, an agent of another variant, a module or class that
        cannot be loaded, a class that is not a Policy, or a checkpoint that does not match
        (the checkpoint loader says why).
    """
    options = dict(options or {})
    plugins = plugin_entry_points()  # warns of an entry point that a built-in name hides
    if name in AGENTS:
        module, cls_name, agent_variant = AGENTS[name]
        if agent_variant is not None and agent_variant != variant:
            raise ValueError(
                f"agent {name!r} plays {agent_variant}, not {variant}; agents for {variant}: "
                f"{', '.join(agent_names(variant))}"
            )
        cls = getattr(importlib.import_module(module), cls_name)
        return _build(cls, name, repr(name), variant, num_players, options)
    if name in plugins:
        ep = plugins[name]
        cls = _entry_point_class(name, ep)
        label = f"{name!r} (entry point {ep.value!r})"
        return _build(cls, name, label, variant, num_players, options)
    if name.endswith((".rz", ".zip", ".pt", ".pth")) or Path(name).exists():
        if not Path(name).exists():
            raise ValueError(f"checkpoint {name!r} does not exist")
        from rummyzoo.agents.checkpoints import load_policy  # imports torch: only when needed

        return load_policy(name, variant, num_players, options)
    match = _IMPORT_NAME.match(name)
    if match is not None:
        cls = _import_class(match["module"], match["attr"])
        return _build(cls, name, repr(name), variant, num_players, options)
    raise ValueError(
        f"unknown agent {name!r}; known agents for {variant}: {', '.join(agent_names(variant))} "
        "(or a checkpoint path, or package.module:ClassName for your own agent class)"
    )
