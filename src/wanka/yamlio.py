"""YAML reading with YAML 1.2 number rules, libyaml's C parser and limits for hostile input.

PyYAML follows YAML 1.1, where a float needs a dot and a signed exponent (``1.0e+13``); users write
``15.6e12``. The loaders here add the YAML 1.2 core-schema float pattern. The C parser (libyaml,
``yaml.CSafeLoader``) is used where PyYAML was built with it (8-10x faster); the pure-Python loader
gives identical results (tested) and is the fallback.

:func:`parse` composes the node tree once, refuses nesting deeper than :data:`MAX_DEPTH` and alias
expansion beyond :data:`MAX_NODES` nodes ("billion laughs") and a key given twice in one mapping (PyYAML
would keep the last silently), then builds the Python data from the
same tree, so line numbers come for free.

:func:`load_data` reads one of the package's own data files through a cache of the parsed data kept
beside the bytecode (``__pycache__/NAME.yaml.TAG.marshal``, or under ``PYTHONPYCACHEPREFIX``), keyed
by the SHA-256 of the file's bytes: a changed file is parsed again, a corrupt, truncated or foreign
cache file is ignored, and where bytecode is not written (``PYTHONDONTWRITEBYTECODE``) or the folder
is read-only nothing is written. Parsing the catalog, calibration, failure and facility files took
~50-80 ms of every command's start; reading the cache takes ~1 ms.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import marshal
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from wanka.errors import SpecError

__all__ = ["MAX_DEPTH", "MAX_NODES", "SafeLoader12", "compose", "load", "load_data", "parse"]

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


_CACHE_MAGIC = b"wanka-yaml-cache 1\n"  # bump when the parsing rules change
_DIGEST = 32  # bytes of SHA-256


def cache_path(path: Path, suffix: str) -> Path | None:
    """Where data derived from ``path`` is cached: beside its bytecode (``__pycache__/NAME.TAG.suffix``,
    or under ``sys.pycache_prefix``); None where Python keeps no bytecode cache."""
    import importlib.util

    try:
        pyc = importlib.util.cache_from_source(str(path) + ".py")  # honours sys.pycache_prefix
    except (NotImplementedError, ValueError):
        return None
    return Path(pyc[: -len(".pyc")] + suffix)


def _cache_file(path: Path, yaml11: bool) -> Path | None:
    return cache_path(path, ".yaml11.marshal" if yaml11 else ".marshal")


def read_cache(cache: Path, key: bytes, loads: Callable[[bytes], Any] = marshal.loads) -> tuple[bool, Any]:
    """(True, data) if ``cache`` holds data for the source whose key is ``key``; (False, None) otherwise.

    A cache of another format version, another key, or whose payload fails its SHA-256 (truncated,
    damaged) is a miss, as is one ``loads`` cannot read."""
    try:
        blob = cache.read_bytes()
    except OSError:
        return False, None
    head = len(_CACHE_MAGIC)
    if len(blob) < head + 2 * _DIGEST or blob[:head] != _CACHE_MAGIC or blob[head : head + _DIGEST] != key:
        return False, None
    payload = blob[head + 2 * _DIGEST :]
    if hashlib.sha256(payload).digest() != blob[head + _DIGEST : head + 2 * _DIGEST]:
        return False, None  # truncated or damaged
    try:
        return True, loads(payload)
    except Exception:  # whatever a stale or foreign payload raises, it is only a miss
        return False, None


def write_cache(cache: Path, key: bytes, data: Any, dumps: Callable[[Any], bytes] = marshal.dumps) -> None:
    """Write the cache through a temporary file and a rename; any failure leaves no cache, nothing else.
    Nothing is written where bytecode is not (``PYTHONDONTWRITEBYTECODE``)."""
    if sys.dont_write_bytecode:
        return
    try:
        payload = dumps(data)
    except Exception:  # a type the codec does not hold (a YAML timestamp for marshal): no cache
        return
    tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(_CACHE_MAGIC + key + hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, cache)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


@functools.cache
def rules() -> bytes:
    """What the parsed data depends on besides the file: this module's code and PyYAML's version."""
    try:
        code = Path(__file__).read_bytes()
    except OSError:  # pragma: no cover - no source (a zip); the format version still applies
        code = b""
    return hashlib.sha256(_CACHE_MAGIC + yaml.__version__.encode() + code).digest()


def load_data(path: str | os.PathLike[str] | Any, *, yaml11: bool = False) -> Any:
    """Parse one of the package's own YAML data files (trusted), through the parsed-data cache.

    ``path``: a file path or an ``importlib.resources`` Traversable (one not on the file system is
    parsed without a cache). ``yaml11=True`` gives exactly ``yaml.safe_load``'s result (YAML 1.1, no
    duplicate-key check; libyaml's parser where available) for files written for it; otherwise
    :func:`load` (YAML 1.2 floats, limits, duplicate keys refused; SpecError on malformed input).
    The result is a fresh object on every call, as from parsing.
    """
    src: Any = Path(path) if isinstance(path, (str, os.PathLike)) else path
    raw: bytes = src.read_bytes()
    cache = _cache_file(src, yaml11) if isinstance(src, Path) else None
    key = hashlib.sha256(rules() + raw).digest()
    if cache is not None:
        hit, data = read_cache(cache, key)
        if hit:
            return data
    text = raw.decode("utf-8")
    # yaml.load with a safe loader (CSafeLoader = libyaml + SafeConstructor): safe_load's result
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if yaml11 else load(text)
    if cache is not None:
        write_cache(cache, key, data)
    return data
