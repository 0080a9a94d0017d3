"""Build of loopc's one optional C extension; everything else is in pyproject.toml.

``loopc.compiler._ycompose`` composes the strict YAML layer's tree straight
from libyaml's events (src/loopc/compiler/_ycompose.c).  It is optional: when
it cannot be built (no C compiler, no Python or libyaml headers) the install
goes on without it and loopc composes in pure Python, with identical results
(docs/architecture.md#the-yaml-layer).
"""
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "loopc.compiler._ycompose",
            ["src/loopc/compiler/_ycompose.c"],
            optional=True,
        )
    ]
)
