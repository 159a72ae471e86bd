"""YAML reading with YAML 1.2 number rules: ``1e13`` and ``1.56e13`` are numbers, not strings.

PyYAML follows YAML 1.1, where a float needs a dot and a signed exponent (``1.0e+13``); users write
``15.6e12``. This loader adds the YAML 1.2 core-schema float pattern.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["SafeLoader12", "compose", "load"]


class SafeLoader12(yaml.SafeLoader):
    """``yaml.SafeLoader`` with YAML 1.2 floats."""


SafeLoader12.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)


def load(text: str) -> Any:
    """Parse YAML text (raises ``yaml.YAMLError`` on malformed input)."""
    return yaml.load(text, Loader=SafeLoader12)


def compose(text: str) -> yaml.Node | None:
    return yaml.compose(text, Loader=SafeLoader12)
