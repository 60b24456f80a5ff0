"""Build of the compiled kernels (everything else is configured in pyproject.toml).

The extension is optional: where it cannot be built, the envs fall back to their pure-Python
code, which gives the same results.
"""

import numpy
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "rummyzoo.envs._native",
            sources=[
                "envs/_native.c",
                "envs/_kernel.c",
                "envs/_knock.c",
                "envs/_ditch.c",
                "envs/_rummy500.c",
            ],
            depends=["envs/_native.h"],
            include_dirs=[numpy.get_include()],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
