"""Agent names -> policies.

A name is one of:

* ``random`` or a ``<variant>.<tier>`` heuristic (the built-in agents, :data:`AGENTS`);
* a name that an installed package registers in the entry-point group ``rummyzoo.agents``
  (the entry point's name is the agent name, its value ``module:Class``);
* ``package.module:ClassName``: the module is imported and the class taken from it;
* a checkpoint path (a shareable ``.rz``, loaded by :mod:`rummyzoo.agents.checkpoints` without
  unpickling anything; a stable-baselines3 ``.zip`` or a torch file is refused, saying how to
  convert a trusted one).

Any name but a checkpoint's may carry constructor parameters in parentheses:
``knock.smart(samples=48, knock_margin=-2)``, ``ditch.smart(end_risk=0.1)``,
``mypkg.agents:MyAgent(depth=3)``. Values are numbers, ``true`` / ``false``, ``null`` or text
(quoted or not); a parameter the class does not take is refused with the list of those it
does, and the heuristics check their values. The whole name, parentheses included, is the
agent's label in reports, so two settings of one heuristic can meet in the arena.

Every class, built-in or not, is built the same way: when its constructor takes ``variant``,
``num_players`` or ``options`` keyword arguments (or ``**kwargs``) they are passed, otherwise it
is called with no arguments. A class may declare the variants it plays in a class attribute
``variants`` (a tuple of variant names); it is refused for any other variant.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import inspect
import re
import warnings
from pathlib import Path
from typing import Any

from rummyzoo.agents.base import Policy
from rummyzoo.envs.core import Game, short_repr
from rummyzoo.envs.registry import VARIANTS, check_players, game_of_options, make_game

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

#: ``NAME(key=value, ...)``: an agent name with constructor parameters.
_WITH_PARAMETERS = re.compile(r"^\s*(?P<base>[^()]*?)\s*\((?P<args>[^()]*)\)\s*$")
_PARAMETER_KEY = re.compile(r"^[A-Za-z_]\w*$")


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
                stacklevel=1,  # one place: shown once, however many calls meet it
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
                    stacklevel=1,
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


# ---------------------------------------------------------------------------- parameters
#: The file names read as checkpoints (``.zip``, ``.pt`` and ``.pth`` to be refused with a hint).
CHECKPOINT_SUFFIXES = (".rz", ".zip", ".pt", ".pth")


def _missing_checkpoint(name: str) -> ValueError:
    """The error for a checkpoint ``name`` that is not there; a relative path says where it
    was looked for (the folder the command runs in, not a config file's)."""
    where = ""
    with contextlib.suppress(OSError, ValueError):
        if Path(name).is_symlink():  # (a link to nothing, or a loop of links)
            return ValueError(f"checkpoint {name!r} is a link to nothing (or to a loop of links)")
        if not Path(name).is_absolute():
            where = f" (a relative path is read from the folder the command runs in, {Path.cwd()})"
    return ValueError(f"checkpoint {name!r} does not exist{where}")


def loads_as_checkpoint(name: str) -> bool:
    """Whether :func:`make_agent` loads ``name`` as a checkpoint file (an existing file that
    is no built-in or installed agent's name: those win over a file of the same name)."""
    if not _exists(name):
        return False
    import warnings

    with warnings.catch_warnings():  # (said where the agent is made)
        warnings.simplefilter("ignore")
        named = name in AGENTS or name in plugin_entry_points()
    return not named


def _exists(name: str) -> bool:
    """Whether ``name`` is a path that exists (False for one the OS cannot take, and for an
    empty name, which ``Path`` reads as the current folder)."""
    if not name.strip():
        return False
    try:
        return Path(name).exists()
    except (OSError, ValueError):
        return False


def _shown(name: str, limit: int = 80) -> str:
    """``repr(name)``, cut to about ``limit`` characters (a name can be as long as typed)."""
    text = repr(name)
    return text if len(text) <= limit else f"{text[: limit - 20]}...{text[-12:]}"


def _parameter_value(text: str) -> Any:
    """A parameter's value from its text: an int, a float, a bool, None or a string."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    if not text.isascii() or "_" in text:  # Python reads 1_0 and other scripts' digits
        return text
    try:
        return int(text)
    except ValueError:  # not an int, or one too long to read
        if text.lstrip("+-").isdigit():
            return text
    try:
        return float(text)
    except ValueError:
        return text


def _split_items(args: str) -> list[str]:
    """``args`` split at the commas outside quotes."""
    items, start, quote = [], 0, ""
    for i, char in enumerate(args):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == ",":
            items.append(args[start:i])
            start = i + 1
    items.append(args[start:])
    return items


def split_agent_name(name: str) -> tuple[str, dict[str, Any]]:
    """``"NAME(key=value, ...)"`` -> ``("NAME", {key: value, ...})``; a name without
    parentheses -> ``(name, {})`` (see the module docstring for the values).

    :raises ValueError: unbalanced or nested parentheses, an item that is not ``key=value``, a
        key that is not an identifier, a key given twice, or an empty name.
    """
    if "(" not in name and ")" not in name:
        return name, {}
    match = _WITH_PARAMETERS.match(name)
    example = "e.g. knock.smart(samples=48, knock_margin=-2)"
    if match is None or not match["base"]:
        # "knock.smart(samples=8" is what a YAML list makes of an unquoted name with two
        # parameters: [knock.smart(samples=8, knock_margin=2)] splits at the comma
        cut = name.count("(") > name.count(")")
        hint = " (in a YAML list, quote a name whose parameters hold a comma)" if cut else ""
        raise ValueError(
            f"agent {_shown(name)}: parameters go in one pair of parentheses after the name, "
            f"{example}{hint}"
        )
    params: dict[str, Any] = {}
    args = match["args"].strip()
    items = _split_items(args) if args else []
    if len(items) > 1 and not items[-1].strip():  # a trailing comma, as Python allows
        items.pop()
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not _PARAMETER_KEY.match(key) or not value.strip():
            raise ValueError(
                f"agent {_shown(name)}: {item.strip()!r} is not key=value; parameters are "
                f"comma-separated key=value pairs, {example}"
            )
        if key in params:
            raise ValueError(f"agent {_shown(name)}: parameter {key!r} is given twice")
        params[key] = _parameter_value(value)
    return match["base"], params


def agent_parameters(cls: type) -> dict[str, Any]:
    """The parameters an agent class's constructors take, each with its default
    (``inspect.Parameter.empty`` if required), leaving out ``variant``, ``num_players`` and
    ``options``: the class's own, and its bases' for as long as each constructor takes
    ``**kwargs`` (which it may hand on to its base's)."""
    found: dict[str, Any] = {}
    keyword_kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    for klass in cls.__mro__:
        if klass is object:
            break
        if "__init__" not in vars(klass):
            continue
        try:
            signature = inspect.signature(klass.__init__)
        except (TypeError, ValueError):  # no signature to read (implemented in C)
            break
        params = list(signature.parameters.values())[1:]  # without self
        for p in params:
            if p.kind in keyword_kinds and p.name not in CONSTRUCTOR_KEYWORDS:
                found.setdefault(p.name, p.default)
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            break
    return found


def _show_parameters(found: dict[str, Any]) -> str:
    shown = [
        name if default is inspect.Parameter.empty else f"{name}={default!r}"
        for name, default in found.items()
    ]
    return ", ".join(shown) or "none"


def _check_parameters(label: str, params: dict[str, Any]) -> None:
    """Refuse parameters that the game gives."""
    reserved = [k for k in params if k in CONSTRUCTOR_KEYWORDS]
    if reserved:
        raise ValueError(
            f"agent {label}: {', '.join(reserved)} cannot be a parameter: the game gives it "
            "(--players, --option)"
        )


def _unknown_parameter(cls: type, label: str, params: dict[str, Any], exc: TypeError) -> None:
    """Turn the constructor's complaint about a keyword it does not take, when that keyword
    is one of ``params``, into an error that lists the parameters it does take."""
    match = re.search(
        r"unexpected keyword argument '(\w+)'|multiple values for argument '(\w+)'", str(exc)
    )
    name = match and (match[1] or match[2])
    if name is None and re.search(r"\(\) takes no arguments", str(exc)) and params:
        name = next(iter(params))  # (a class without an __init__ of its own)
    if name is not None and name in params:
        raise ValueError(
            f"agent {label} takes no parameter {name!r}; its parameters (with defaults): "
            f"{_show_parameters(agent_parameters(cls))}"
        ) from None


# ---------------------------------------------------------------------------- building
def check_agent_object(
    policy: Any, variant: str, num_players: int, options: dict[str, Any] | None = None
) -> None:
    """Refuse an agent object that cannot play this game, as :func:`make_agent` refuses a name:
    a class that declares other ``variants``, a heuristic built for another variant or player
    count, a checkpoint of another env (:func:`~rummyzoo.agents.checkpoints.check_compatible`).

    :raises ValueError: naming the agent and what does not fit.
    """
    label = str(getattr(policy, "name", type(policy).__name__))
    missing = _missing_members(policy)
    if missing:
        raise _not_a_policy(repr(label), missing)
    declared = _declared_variants(type(policy))
    if declared is not None and variant not in declared:
        raise ValueError(
            f"agent {label!r} ({type(policy).__name__}) plays {', '.join(declared) or 'no variant'}"
            f", not {variant}"
        )
    game = getattr(policy, "game", None)
    if isinstance(game, Game) and (game.name, game.num_players) != (variant, num_players):
        raise ValueError(
            f"agent {label!r} was built for {game.name} with {game.num_players} players, not "
            f"{variant} with {num_players}: build it for this game"
        )
    if isinstance(game, Game) and options is not None:
        # it reads each observation through its own game: other rules or another match
        # length or turn cap would be misread (the layout may still fit)
        mine, theirs = (
            _read_options(game),
            _read_options(make_game(variant, num_players, **options)),
        )
        changed = [f"{k} {mine[k]!r}, not {theirs[k]!r}" for k in theirs if mine[k] != theirs[k]]
        if changed:
            raise ValueError(
                f"agent {label!r} was built for other options of {variant} ({', '.join(changed)})"
                ": build it for this game (make_agent(name, variant, num_players, options))"
            )
    from rummyzoo.agents.checkpoints import CheckpointPolicy, check_compatible

    if isinstance(policy, CheckpointPolicy):
        check_compatible(policy.meta, variant, num_players, dict(options or {}), label)


def _read_options(game: Game) -> dict[str, Any]:
    """What a heuristic's reading of an observation depends on: the rules, the match's target
    and the turn cap (the turn's scale)."""
    import dataclasses

    options = dataclasses.asdict(game.rules)
    options.update(target_score=game.match.target_score, max_turns=game.match.max_turns)
    return options


def _declared_variants(cls: type) -> tuple[str, ...] | None:
    """The ``variants`` class attribute as a tuple (a single string counts as one variant)."""
    declared = getattr(cls, "variants", None)
    if declared is None:
        return None
    if isinstance(declared, str):
        return (declared,)
    try:
        found = tuple(declared)
    except TypeError:
        found = None
    if found is None or not all(isinstance(v, str) for v in found):
        raise ValueError(
            f"agent class {getattr(cls, '__qualname__', cls)!r}: variants must be a variant's "
            f"name or a list of them, got {short_repr(declared)}"
        )
    return found


#: The arguments each method of a policy is called with (bound methods: no ``self``).
CALLS = {"act": ("observation", "action_mask", "rng"), "reset": ("seat",)}


def _missing_members(obj: Any) -> list[str]:
    """Which of ``name``, ``act`` and ``reset`` ``obj`` lacks (``act``/``reset``: not callable,
    or not callable with the arguments the players pass: on an instance, where the methods are
    bound, so that a class's are not judged by their ``self``)."""
    missing = []
    for member in POLICY_MEMBERS:
        if not hasattr(obj, member):
            missing.append(member)
        elif member == "name":
            continue
        elif not callable(method := getattr(obj, member)):
            missing.append(f"{member} (not callable)")
        elif not isinstance(obj, type):
            try:
                inspect.signature(method).bind(*CALLS[member])
            except TypeError:
                missing.append(f"{member} (not callable as {member}({', '.join(CALLS[member])}))")
            except ValueError:  # no signature to read (implemented in C)
                pass
    return missing


def _not_a_policy(label: str, missing: list[str]) -> ValueError:
    return ValueError(
        f"agent {label} is not a Policy: it lacks {', '.join(missing)}; an agent needs a "
        "name attribute, act(observation, action_mask, rng) -> action and reset(seat=None) "
        "(subclass rummyzoo.agents.BasePolicy for name and reset)"
    )


def _constructor_kwargs(
    cls: type,
    label: str,
    variant: str,
    num_players: int,
    options: dict[str, Any],
    params: dict[str, Any],
) -> dict[str, Any]:
    """The keyword arguments to build ``cls`` with: ``params`` (none of them one the game
    gives) and those of ``variant``, ``num_players`` and ``options`` its constructor takes
    (all with ``**kwargs``), else none.

    :raises ValueError: a parameter the game gives, or one the constructor needs and is not
        given.
    """
    _check_parameters(label, params)
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # no signature to read (a class implemented in C)
        return dict(params)
    values = {"variant": variant, "num_players": num_players, "options": options}
    params_in = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params_in):
        return {**values, **params}
    keyword_kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    kwargs = {
        p.name: values[p.name] for p in params_in if p.name in values and p.kind in keyword_kinds
    }
    kwargs.update(params)
    required = [
        p.name
        for p in params_in
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        and p.name not in kwargs
    ]
    if required:
        raise ValueError(
            f"agent {label} cannot be built: its constructor requires {', '.join(required)}; "
            f"give it in parentheses after the agent's name ({required[0]}=...) or a default "
            f"(the game gives only {', '.join(CONSTRUCTOR_KEYWORDS)})"
        )
    return kwargs


def _build(
    cls: type,
    name: str,
    label: str,
    variant: str,
    num_players: int,
    options: dict[str, Any],
    params: dict[str, Any],
    full: str | None = None,
) -> Policy:
    """Check and construct one agent class (built-in or plugin) with ``params``."""
    declared = _declared_variants(cls)
    if declared is not None and variant not in declared:
        raise ValueError(
            f"agent {_shown(name)} plays {', '.join(declared) or 'no variant'}, not {variant}; agents "
            f"for {variant}: {', '.join(agent_names(variant))}"
        )
    missing = [m for m in _missing_members(cls) if m != "name"]  # name may be set in __init__
    if missing:
        raise _not_a_policy(label, missing)
    kwargs = _constructor_kwargs(cls, label, variant, num_players, options, params)
    try:
        policy = cls(**kwargs)
    except (TypeError, ValueError) as exc:
        if not params:  # the class's own failure, as it is
            raise
        if isinstance(exc, TypeError):
            _unknown_parameter(cls, label, params, exc)
        raise ValueError(f"agent {label}: {exc}") from exc
    except (Exception, SystemExit) as exc:
        # named as an error of its act is (its sys.exit() ended the run with status 0)
        from rummyzoo.envs.play import raise_agent_failure

        who = name if full is None else full  # (as the arena names it when it plays)
        raise_agent_failure(exc, who, f"{variant}, {num_players} players", "being built")
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


def _check_variant(variant: Any) -> None:
    """:raises ValueError: ``variant`` is none of the games."""
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; variants: {', '.join(sorted(VARIANTS))}")


# ---------------------------------------------------------------------------- public
def agent_names(variant: str | None = None) -> list[str]:
    """Agent names usable for ``variant`` (all when None): built-ins, then entry points.

    :raises ValueError: an unknown variant.
    """
    if variant is not None:
        _check_variant(variant)
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
    ``package.module:ClassName`` or a checkpoint path (see the module docstring); any but a
    checkpoint may add constructor parameters, ``knock.smart(samples=48)``, and is then named
    by the whole string.

    :raises ValueError: unknown name, an agent of another variant, a module or class that
        cannot be loaded, a class that is not a Policy, a checkpoint that does not match (the
        checkpoint loader says why), or parameters that are malformed, not taken by the
        class or refused by it.
    """
    _check_variant(variant)
    if not isinstance(name, str):
        raise ValueError(
            f"an agent is named by a string (random, a heuristic such as knock.greedy, a "
            f"checkpoint file or package.module:ClassName), got {name!r}"
        )
    check_players(variant, num_players)
    if options is not None and not isinstance(options, dict):
        raise ValueError(f"options must be a dict of the variant's options, got {options!r}")
    options = dict(options or {})
    # the same check of the options for every kind of agent (random play and classes of your
    # own take them without building a game; a checkpoint's loader would fail on num_players)
    game_of_options(variant, num_players, options)
    full = name
    params: dict[str, Any] = {}
    if not name.strip():
        raise ValueError(
            f"an agent name is empty: give a heuristic, random, a checkpoint file or "
            f"module:Class (agents for {variant}: {', '.join(agent_names(variant))})"
        )
    if name.endswith(CHECKPOINT_SUFFIXES) and not _exists(name):
        # a checkpoint's file name may hold parentheses: a missing one is said missing
        raise _missing_checkpoint(name)
    if not _exists(name):
        # spaces around an agent's name are none of it (a file's name is as given)
        full = name = name.strip()
        name, params = split_agent_name(name)
    plugins = plugin_entry_points()  # warns of an entry point that a built-in name hides
    cls = None
    if name in AGENTS:
        module, cls_name, agent_variant = AGENTS[name]
        if agent_variant is not None and agent_variant != variant:
            raise ValueError(
                f"agent {_shown(name)} plays {agent_variant}, not {variant}; agents for {variant}: "
                f"{', '.join(agent_names(variant))}"
            )
        cls, label = getattr(importlib.import_module(module), cls_name), _shown(full)
    elif name in plugins:
        ep = plugins[name]
        cls, label = _entry_point_class(name, ep), f"{_shown(full)} (entry point {ep.value!r})"
    elif name.endswith(CHECKPOINT_SUFFIXES) or _exists(name):
        if params:
            raise ValueError(
                f"agent {full!r}: a checkpoint takes no parameters (they are for heuristics "
                "and agent classes)"
            )
        if not _exists(name):
            raise _missing_checkpoint(name)
        from rummyzoo.agents.checkpoints import load_policy  # imports torch: only when needed

        return load_policy(name, variant, num_players, options)
    else:
        match = _IMPORT_NAME.match(name)
        if match is not None:
            cls, label = _import_class(match["module"], match["attr"]), _shown(full)
    if cls is not None:
        policy = _build(cls, name, label, variant, num_players, options, params, full)
        if params:
            with contextlib.suppress(AttributeError):  # a read-only name stays as it is
                policy.name = full.strip()
        return policy
    raise ValueError(
        f"unknown agent {_shown(name)}; known agents for {variant}: {', '.join(agent_names(variant))} "
        "(or a checkpoint path, or package.module:ClassName for your own agent class)"
    )
