"""Loading the compiled kernels (``envs/_native.c``, the module ``rummyzoo.envs._native``).

``pip install`` builds them where a C compiler is found. Every caller has a pure-Python twin
that gives the same results, so :func:`compiled_kernels` answers None where the module is
missing, switched off (``RUMMYZOO_PURE_PYTHON=1``) or older than this code.

Everything that can use them takes the kernels as a constructor parameter (``kernels=`` of
:class:`~rummyzoo.envs.melds.MeldSolver`, of each variant's Game, of
:func:`~rummyzoo.envs.registry.make_game`), read by :func:`resolve_kernels`: None (the default)
means :func:`compiled_kernels`, :data:`PURE` (or False) the pure-Python code, and a module (such
as :func:`load_kernels` returns) that module, whatever ``RUMMYZOO_PURE_PYTHON`` says. So a pure
and a compiled game can be built side by side and compared.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

from rummyzoo.envs.core import ConfigError

#: The ``API_VERSION`` of ``envs/_native.c`` that this code expects.
KERNELS_API_VERSION = 9


class _Pure:
    """The type of :data:`PURE`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "PURE"

    def __reduce__(self) -> str:
        return "PURE"


#: ``kernels=PURE``: run the pure-Python code even where the compiled kernels are built.
PURE = _Pure()


def load_kernels() -> Any:
    """The compiled kernels module, or None where it was not built or is older than this code
    (a warning then says how to rebuild); ``RUMMYZOO_PURE_PYTHON`` is not read here."""
    try:
        from rummyzoo.envs import _native
    except ImportError:
        return None
    if getattr(_native, "API_VERSION", None) != KERNELS_API_VERSION:
        warnings.warn(
            f"{_native.__file__} is out of date (kernels API {getattr(_native, 'API_VERSION', 0)}"
            f", this code needs {KERNELS_API_VERSION}); using the pure-Python code. Rebuild it "
            "with `pip install -e .` (or `make setup`).",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    return _native


def compiled_kernels() -> Any:
    """The compiled kernels module (``envs/_native.c``), or None where it was not built, where
    ``RUMMYZOO_PURE_PYTHON`` switches it off, or where the build is older than this code (a
    warning then says how to rebuild)."""
    if os.environ.get("RUMMYZOO_PURE_PYTHON", "") not in ("", "0"):
        return None
    return load_kernels()


class KernelsError(ConfigError, TypeError):
    """A ``kernels=`` value that is none of the kinds :func:`resolve_kernels` takes."""


def resolve_kernels(kernels: Any = None) -> Any:
    """The kernels module a ``kernels=`` parameter asks for, or None for the pure-Python code.

    :param kernels: None: :func:`compiled_kernels` (the default everywhere); :data:`PURE` or
        False: None; a kernels module: that module.
    :raises KernelsError: for anything else (True, a string, ...): a ``TypeError`` and a
        :class:`~rummyzoo.envs.core.ConfigError` (a ``ValueError``), since an options dict
        that names ``kernels`` reaches it too.
    """
    if kernels is None:
        return compiled_kernels()
    if kernels is PURE or kernels is False:
        return None
    if kernels is True or not hasattr(kernels, "API_VERSION"):
        raise KernelsError(
            f"kernels must be None (compiled where built), PURE (pure Python) or a kernels "
            f"module such as load_kernels() returns, got {kernels!r}"
        )
    return kernels
