"""Cheap, reproducible seeding of the env's random streams.

``np.random.default_rng(seed)`` spends ~20 us hashing the seed through a ``SeedSequence``; an env
reset per game pays that on every game. Instead each stream keeps one ``PCG64`` generator whose
128-bit state and increment are set from the seed by splitmix64, a well-mixed integer hash:
the same (seed, stream) always gives the same sequence, different streams are independent.
"""

from __future__ import annotations

import numpy as np

_MASK64 = (1 << 64) - 1


def _splitmix64(x: int) -> tuple[int, int]:
    """One splitmix64 step: (output, next state)."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31), x


def check_seed(seed: object, name: str = "seed", none_too: bool = True) -> int:
    """:raises ValueError: unless ``seed`` is a non-negative integer (the message names it
    ``name``, and says None is allowed where ``none_too``: the caller handles None itself)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        also = " or None" if none_too else ""
        raise ValueError(f"{name} must be a non-negative int{also}, got {seed!r}")
    return int(seed)


def new_generator() -> np.random.Generator:
    """A generator to be re-seeded with :func:`seed_generator` (starts from OS entropy)."""
    return np.random.Generator(np.random.PCG64())


def seed_generator(gen: np.random.Generator, seed: int, stream: int) -> None:
    """Set ``gen`` (PCG64) to the state derived from ``(seed, stream)``."""
    x = stream * 0x632BE59BD9B4E019 & _MASK64
    while True:  # fold seeds wider than 64 bits
        x ^= seed & _MASK64
        _, x = _splitmix64(x)
        seed >>= 64
        if not seed:
            break
    a, x = _splitmix64(x)
    b, x = _splitmix64(x)
    c, x = _splitmix64(x)
    d, x = _splitmix64(x)
    gen.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (a << 64) | b, "inc": ((c << 64) | d) | 1},
        "has_uint32": 0,
        "uinteger": 0,
    }
