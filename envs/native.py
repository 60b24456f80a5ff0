"""Loading the compiled kernels (``envs/_native.c``, the module ``rummyzoo.envs._native``).

``pip install`` builds them where a C compiler is found. Every caller has a pure-Python twin
that gives the same results, so :func:`compiled_kernels` answers None where the module is
missing, switched off (``RUMMYZOO_PURE_PYTHON=1``) or older than this code.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

#: The ``API_VERSION`` of ``envs/_native.c`` that this code expects.
KERNELS_API_VERSION = 1


def compiled_kernels() -> Any:
    """The compiled kernels module (``envs/_native.c``), or None where it was not built, where
    ``RUMMYZOO_PURE_PYTHON`` switches it off, or where the build is older than this code (a
    warning then says how to rebuild)."""
    if os.environ.get("RUMMYZOO_PURE_PYTHON", "") not in ("", "0"):
        return None
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
