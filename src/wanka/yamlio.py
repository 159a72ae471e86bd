"""YAML reading with YAML 1.2 number rules, libyaml's C parser and limits for hostile input.

PyYAML follows YAML 1.1, where a float needs a dot and a signed exponent (``1.0e+13``); users write
``15.6e12``. The loaders here add the YAML 1.2 core-schema float pattern. The C parser (libyaml,
``yaml.CSafeLoader``) is used where PyYAML was built with it (8-10x faster); the pure-Python loader
gives identical results (tested) and is the fallback.

:func:`parse` composes the node tree once, refuses nesting deeper than :data:`MAX_DEPTH` and alias
expansion beyond :data:`MAX_NODES` nodes ("billion laughs") and a key given twice in one mapping (PyYAML
would keep the last silently), then builds the Python data from the
same tree, so line numbers come for free.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from wanka.errors import SpecError

__all__ = ["MAX_DEPTH", "MAX_NODES", "SafeLoader12", "compose", "load", "parse"]

MAX_DEPTH = 64
MAX_NODES = 200_000  # nodes after alias expansion

_FLOAT12 = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)


class SafeLoader12(yaml.SafeLoader):
    """``yaml.SafeLoader`` (pure Python) with YAML 1.2 floats."""


SafeLoader12.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT12, list("-+0123456789."))

if getattr(yaml, "__with_libyaml__", False):

    class CSafeLoader12(yaml.CSafeLoader):
        """libyaml's parser with the same resolvers and constructors as :class:`SafeLoader12`."""

    CSafeLoader12.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT12, list("-+0123456789."))
    FastLoader: type = CSafeLoader12
else:  # pragma: no cover - PyYAML without libyaml
    FastLoader = SafeLoader12


def _check_tree(root: yaml.Node, source: str | None) -> None:
    """Depth and expanded size of a composed tree, iteratively (aliases share node objects)."""
    size: dict[int, int] = {}
    depth_stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while depth_stack:
        node, d, done = depth_stack.pop()
        if d > MAX_DEPTH:
            raise SpecError(f"nested more than {MAX_DEPTH} levels deep", source=source, line=node.start_mark.line + 1)
        if isinstance(node, yaml.SequenceNode):
            children: list[yaml.Node] = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [x for kv in node.value for x in kv]
            if not done:
                seen: dict[str, int] = {}
                for k, _ in node.value:
                    if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge":
                        if k.value in seen:
                            raise SpecError(
                                f"key {k.value!r} appears twice in one mapping (first on line {seen[k.value]}); "
                                "YAML would silently keep the last",
                                source=source,
                                line=k.start_mark.line + 1,
                            )
                        seen[k.value] = k.start_mark.line + 1
        else:
            size[id(node)] = 1
            continue
        if done:
            total = 1 + sum(size.get(id(c), 1) for c in children)
            if total > MAX_NODES:
                raise SpecError(
                    f"anchors and aliases expand to more than {MAX_NODES:,} values; write the data out or use fewer "
                    "aliases",
                    source=source,
                    line=node.start_mark.line + 1,
                )
            size[id(node)] = total
            continue
        if id(node) in size:
            continue
        depth_stack.append((node, d, True))
        depth_stack.extend((c, d + 1, False) for c in children if id(c) not in size)


def _yaml_error(e: Exception, source: str | None) -> SpecError:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return SpecError(f"malformed YAML: {problem}", source=source, line=line)


def parse(text: str, source: str | None = None, *, loader: type | None = None) -> tuple[Any, yaml.Node | None]:
    """Parse YAML text into (data, root node); every failure is a SpecError with the line."""
    ld = (loader or FastLoader)(text)
    try:
        try:
            node = ld.get_single_node()
        except RecursionError:
            raise SpecError(f"nested more than {MAX_DEPTH} levels deep", source=source) from None
        if node is None:
            return None, None
        _check_tree(node, source)
        try:
            data = ld.construct_document(node)
        except ValueError as e:  # e.g. an integer of more than 4,300 digits
            what = "an integer of more than 4,300 digits" if "digits" in str(e) else str(e)[:80]
            raise SpecError(f"{what}: not a number wanka reads", source=source) from None
        return data, node
    except yaml.YAMLError as e:
        raise _yaml_error(e, source) from None
    finally:
        ld.dispose()


def load(text: str) -> Any:
    """Parse trusted YAML text (the package's own data files); raises SpecError on malformed input."""
    return parse(text)[0]


def compose(text: str) -> yaml.Node | None:
    return parse(text)[1]
