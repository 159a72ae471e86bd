"""Compiled dataclass methods (and annotation expressions) kept between runs, as Python keeps compiled modules.

``@dataclass`` writes the source of ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and, for a
frozen class, ``__setattr__``/``__delattr__``, and compiles it with ``exec`` each time a module is
imported: ~0.9 ms per frozen class on the reference machine, 80% of it compiling. ``wanka plan``
creates ~110 dataclasses (wanka's, pydantic's, typer's, rich's), ~90 ms of its start. The bytecode of
the modules is cached by Python; this caches the bytecode of those generated methods.

:func:`install` gives the ``dataclasses`` module an ``exec`` that looks the source text up in a table
of code objects (compiled exactly as ``exec`` would: file name ``<string>``, no ``__future__`` flags
inherited, as the ``dataclasses`` module has none) and runs the code object; the class it builds is
the same. :func:`save` writes the table, with what this run compiled, beside the bytecode
(``cli/__pycache__/codecache.TAG.marshal``, or under ``PYTHONPYCACHEPREFIX``) through a temporary
file and a rename; it writes nothing where Python writes no bytecode (``PYTHONDONTWRITEBYTECODE``).
The file is keyed by the Python version (marshal's format and the compiler's output belong to it)
and checked by its SHA-256: a damaged, truncated or foreign file is ignored, as is any entry that is
not a code object. At most :data:`MAX_ENTRIES` entries are kept, the oldest dropped first.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import importlib.util
import marshal
import os
import sys
import types
from pathlib import Path
from typing import Any

__all__ = ["MAX_ENTRIES", "cache_file", "install", "save", "uninstall"]

MAX_ENTRIES = 8192
_MAGIC = f"wanka-code-cache 1 {sys.version} {sys.implementation.cache_tag}\n".encode()
_DIGEST = 32
_table: dict[str, types.CodeType] = {}
_compiled = 0  # entries this process added


def cache_file() -> Path | None:
    """Where the table is kept; None where Python keeps no bytecode cache."""
    try:
        pyc = importlib.util.cache_from_source(str(Path(__file__).with_name("codecache.py")))
    except (NotImplementedError, ValueError):
        return None
    return Path(pyc[: -len(".pyc")] + ".marshal")


def _load() -> dict[str, types.CodeType]:
    path = cache_file()
    if path is None:
        return {}
    try:
        blob = path.read_bytes()
    except OSError:
        return {}
    head = len(_MAGIC)
    if blob[:head] != _MAGIC or len(blob) < head + _DIGEST:
        return {}
    payload = blob[head + _DIGEST :]
    if hashlib.sha256(payload).digest() != blob[head : head + _DIGEST]:
        return {}  # truncated or damaged
    try:
        data = marshal.loads(payload)
    except Exception:  # whatever a foreign payload raises, it is only a miss
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, types.CodeType)}


def _exec(source: Any, globals: dict[str, Any] | None = None, locals: Any = None, /) -> None:
    """``exec`` with compiled source texts looked up in the table first."""
    global _compiled
    if type(source) is str:
        code = _table.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            _table[source] = code
            _compiled += 1
        source = code
    builtins.exec(source, globals, locals)


def _compile(
    source: Any, filename: Any, mode: str, flags: int = 0, dont_inherit: bool = False, optimize: int = -1
) -> Any:
    """``compile`` with the forward references' expressions (``typing.ForwardRef``) looked up first."""
    global _compiled
    if type(source) is not str or mode != "eval" or filename != "<string>" or flags or dont_inherit or optimize != -1:
        return builtins.compile(source, filename, mode, flags, dont_inherit, optimize)
    key = "\0eval\0" + source  # never the text of a dataclass method, which starts with "def"
    code = _table.get(key)
    if code is None:
        code = builtins.compile(source, filename, mode, dont_inherit=True)
        _table[key] = code
        _compiled += 1
    return code


def install() -> None:
    """Route the ``exec`` of ``dataclasses`` and the ``compile`` of ``typing`` through the table (loaded
    once per process). Neither module has ``__future__`` imports, so compiling without inheriting
    flags is what they do. ``typing.ForwardRef`` compiles every string annotation pydantic resolves
    (~1,100 in ``wanka plan``, ~10 ms)."""
    import dataclasses
    import typing

    if getattr(dataclasses, "exec", None) is _exec:
        return
    if not _table:
        _table.update(_load())
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # a module global shadows the builtin
    typing.compile = _compile  # type: ignore[attr-defined]


def uninstall() -> None:
    """Give ``dataclasses`` and ``typing`` the builtins back."""
    import dataclasses
    import typing

    if getattr(dataclasses, "exec", None) is _exec:
        del dataclasses.exec  # type: ignore[attr-defined]
    if getattr(typing, "compile", None) is _compile:
        del typing.compile  # type: ignore[attr-defined]


def save() -> None:
    """Write the table when this process compiled something new; any failure writes nothing."""
    global _compiled
    path = cache_file()
    if not _compiled or path is None or sys.dont_write_bytecode:
        return
    merged = {**_load(), **_table}
    if len(merged) > MAX_ENTRIES:
        merged = dict(list(merged.items())[-MAX_ENTRIES:])
    try:
        payload = marshal.dumps(merged)
    except ValueError:
        return
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(_MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, path)
        _compiled = 0
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
