"""Build of the compiled kernels and of the package's top (everything else is configured in
pyproject.toml).

The extension is optional: where it cannot be built, the envs fall back to their pure-Python
code, which gives the same results.

The source tree has no folder for the package ``rummyzoo`` itself (its subpackages are the
tree's top folders), so an installed copy gets its ``__init__.py`` here: a regular package,
which a folder named ``rummyzoo`` on the path (a checkout in the working folder) cannot take
the place of, as it could take a namespace package's.
"""

from pathlib import Path

import numpy
from setuptools import Extension, setup
from setuptools.command.build_py import build_py

TOP = '''"""rummyzoo: Knock Rummy, Ditch Rummy and 500 Rum as reinforcement-learning environments,
with heuristics, an arena and training (see rummyzoo.envs, rummyzoo.agents, rummyzoo.training)."""
'''


#: the package's own files, made here: its ``__init__.py``, and ``py.typed``, the mark that
#: its code carries type annotations for type checkers (PEP 561)
TOP_FILES = {"__init__.py": TOP, "py.typed": ""}


class BuildWithTop(build_py):
    """build_py, then the package's own files (:data:`TOP_FILES`) in the build (the wheel's
    files)."""

    def run(self) -> None:
        super().run()
        top = Path(self.build_lib) / "rummyzoo"
        top.mkdir(parents=True, exist_ok=True)
        for name, text in TOP_FILES.items():
            (top / name).write_text(text)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        top = Path(self.build_lib) / "rummyzoo"
        return [*super().get_outputs(include_bytecode), *(str(top / n) for n in TOP_FILES)]


setup(
    cmdclass={"build_py": BuildWithTop},
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
    ],
)
