"""Build of the compiled deadwood search (everything else is configured in pyproject.toml).

The extension is optional: where it cannot be built, ``rummyzoo.envs.melds`` falls back to the
pure-Python search, which gives the same results.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "rummyzoo.envs._meldcore",
            sources=["envs/_meldcore.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
