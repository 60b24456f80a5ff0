"""The configuration reference (``docs/config.md``), written from the config's own models: every
key a run config takes, its values, its default and what it does, from the field's type,
constraints, default and docstring (:mod:`rummyzoo.training.config`), so the page cannot drift
from what the code accepts. Regenerate it with::

    python -m rummyzoo.training.config_docs > docs/config.md

(the test suite fails while the page differs from what this writes).
"""

from __future__ import annotations

import re
import sys
import types
import typing
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from rummyzoo.training.config import (
    Checkpoints,
    DQNHyperparams,
    Evaluation,
    League,
    NetArch,
    OpponentSpec,
    PolicyKwargs,
    PPOHyperparams,
    Pretrain,
    RllibSettings,
    RunConfig,
    SelfPlay,
)

#: The sections of the page, in order: the key (as a config writes it), what qualifies it, and
#: its model.
SECTIONS: tuple[tuple[str, str, type[BaseModel]], ...] = (
    ("", "", RunConfig),
    ("hyperparams", "with algo: ppo", PPOHyperparams),
    ("hyperparams", "with algo: dqn", DQNHyperparams),
    ("policy_kwargs", "", PolicyKwargs),
    ("policy_kwargs.net_arch", "one list per network", NetArch),
    ("opponents", "each entry", OpponentSpec),
    ("self_play", "", SelfPlay),
    ("league", "", League),
    ("evaluation", "", Evaluation),
    ("checkpoints", "", Checkpoints),
    ("pretrain", "", Pretrain),
    ("rllib", "with backend: rllib", RllibSettings),
)

#: a constraint's attribute (pydantic's metadata of ``Field(gt=...)``, ...) and its words
_BOUNDS = (
    ("gt", "> {}"),
    ("ge", ">= {}"),
    ("lt", "< {}"),
    ("le", "<= {}"),
    ("min_length", "at least {} long"),
)


def _prose(text: str) -> str:
    """A docstring as one line of Markdown (reST's ``literals`` and roles made code)."""
    text = re.sub(r":(?:mod|class|func|meth|data|attr):`~?([^`]+)`", r"`\1`", text)
    text = text.replace("``", "`")
    return " ".join(text.split()).replace("|", "\\|")


def _bounds(metadata: list[Any]) -> list[str]:
    found = []
    for item in metadata:
        for attribute, form in _BOUNDS:
            value = getattr(item, attribute, None)
            if value is not None:
                found.append(form.format(_number(value)))
    return found


def _number(value: Any) -> str:
    return "2^32 - 1" if value == 2**32 - 1 else repr(value)


def _type(annotation: Any, metadata: list[Any] = ()) -> str:
    """What a value of ``annotation`` may be, in words."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        inner, *extra = args
        if typing.get_origin(inner) is typing.Annotated or isinstance(inner, types.UnionType):
            return _type(inner, [*metadata, *extra])
        return _type(inner, [*metadata, *[m for x in extra for m in getattr(x, "metadata", [x])]])
    if origin is Literal:
        return " or ".join(f"`{_yaml(a)}`" for a in args)
    if origin in (typing.Union, types.UnionType):  # (a field's bounds are its number's)
        parts = list(dict.fromkeys(_type(a, metadata) for a in args if a is not type(None)))
        if type(None) in args:
            parts.append("`null`")
        return " or ".join(parts)
    if origin is list:
        item = _type(args[0])
        longest = [getattr(m, "max_length", None) for m in metadata]
        most = next((n for n in longest if n is not None), None)
        kind = "list" if most is None else f"list (at most {most})"
        if item == "section (below)":
            return f"{kind} of entries (below)"
        return f"{kind} of ({item})" if " or " in item else f"{kind} of {item}"
    if origin is dict or annotation is dict:
        return "mapping"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "section (below)"
    name = getattr(annotation, "__name__", str(annotation))
    if name not in ("int", "float") and not (name == "str" and metadata):
        metadata = ()  # (a union's bounds are not its text's)
    words = {"int": "integer", "float": "number", "str": "text", "bool": "`true` or `false`"}
    text = words.get(name, name)
    bounds = _bounds(list(metadata))
    return f"{text} {', '.join(bounds)}" if bounds else text


def _yaml(value: Any) -> str:
    if value is None:
        return "null"
    if value is True or value is False:
        return str(value).lower()
    if isinstance(value, BaseModel):
        return "(its defaults)"
    if isinstance(value, list):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_yaml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (int, float)):
        return _number(value)
    return str(value)


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, list) and value and all(isinstance(v, BaseModel) for v in value):
        return "`[" + ", ".join(_yaml(v.model_dump()) for v in value) + "]`"
    return f"`{_yaml(value)}`"


def _field_type(field: FieldInfo) -> str:
    return _type(field.annotation, list(field.metadata))


def reference_markdown() -> str:
    """The page: one table of keys per section."""
    lines = [
        "# Configuration reference",
        "",
        "Every key a training config (`configs/*.yaml`, or `--set KEY=VALUE`) takes, with its",
        "values and default. Written from the config's own models by `python -m",
        "rummyzoo.training.config_docs > docs/config.md` (the test suite checks that this page is",
        "what that writes). A key the models do not know is refused with its path, and so is a",
        "value out of range; checks between keys (a setting of one backend or algorithm used with",
        "the other, options the variant does not build with, agents that do not exist) are made",
        "when the config loads, each with a message that names the keys.",
        "",
    ]
    for key, qualifier, model in SECTIONS:
        title = f"`{key}`" if key else "Top level"
        lines += [f"## {title}" + (f" ({qualifier})" if qualifier else ""), ""]
        doc = _prose(model.__doc__ or "")
        if doc:
            lines += [doc, ""]
        lines += ["| key | values | default | what it does |", "| --- | --- | --- | --- |"]
        for name, field in model.model_fields.items():
            lines.append(
                f"| `{name}` | {_field_type(field)} | {_default(field)} | "
                f"{_prose(field.description or '')} |"
            )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(reference_markdown())
