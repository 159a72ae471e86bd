"""Contention factors of the flow model kept between runs, beside the bytecode.

:func:`wanka.network.flow.contention_factor` simulates the whole cluster's traffic (10-60 ms and the
import of ``numpy.random`` and ``numpy.ma``, ~15 ms) on every ``wanka plan``, although the answer depends
only on its inputs. Its results are kept in one file beside ``flow``'s bytecode
(``network/__pycache__/flow.TAG.contention.marshal``, or under ``PYTHONPYCACHEPREFIX``): a map from
the SHA-256 of the inputs (the cluster as JSON, the collective, the group, the routing, the placement,
the seed) to the factor. The file as a whole is keyed by :func:`rules`, the SHA-256 of everything the
simulation reads besides its inputs (the source of ``wanka.network``, ``wanka.catalog`` with its data
files, ``wanka.spec``, ``wanka.units``, ``wanka.yamlio``, and the versions of Python, numpy and
pydantic): a change to any of them drops every entry. Reading goes through
:func:`wanka.yamlio.read_cache` (a truncated, damaged or foreign file is a miss) and every value is
checked (a finite float ≥ 1) before it is used; a bad one is a miss and is simulated again. Nothing
is written where bytecode is not (``PYTHONDONTWRITEBYTECODE``) or the folder is read-only; writes go
through a temporary file and a rename, so two processes never leave a half-written file (the last
one's entries win). At most :data:`MAX_ENTRIES` factors are kept, the oldest dropped first.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

from wanka import yamlio

__all__ = ["MAX_ENTRIES", "cache_file", "get", "inputs_key", "put", "rules"]

MAX_ENTRIES = 4096
_MAGIC = b"wanka-contention-cache 1\n"  # bump when the file's layout changes
_PACKAGE = Path(__file__).resolve().parents[1]  # src/wanka
_SOURCES = ("network/*.py", "catalog/*.py", "catalog/data/*.yaml", "spec/*.py", "units.py", "yamlio.py")


@functools.cache
def rules() -> bytes | None:
    """What a factor depends on besides its inputs (see the module's note); None where the source
    cannot be read (then nothing is cached)."""
    import numpy
    import pydantic

    h = hashlib.sha256(_MAGIC)
    h.update(f"{sys.version}\0{numpy.__version__}\0{pydantic.VERSION}\0".encode())
    try:
        for pattern in _SOURCES:
            for f in sorted(_PACKAGE.glob(pattern)):
                h.update(f.relative_to(_PACKAGE).as_posix().encode() + b"\0")
                h.update(f.read_bytes())
    except OSError:
        return None
    return h.digest()


def cache_file() -> Path | None:
    """Where the factors are kept; None where Python keeps no bytecode cache."""
    return yamlio.cache_path(_PACKAGE / "network" / "flow", ".contention.marshal")


def inputs_key(*inputs: Any) -> str:
    """The SHA-256 (hex) of the simulation's inputs (JSON-serialisable values)."""
    return hashlib.sha256(json.dumps(inputs, separators=(",", ":")).encode()).hexdigest()


def _valid(value: object) -> bool:
    return type(value) is float and math.isfinite(value) and value >= 1.0


def _read() -> dict[str, float]:
    key, cache = rules(), cache_file()
    if key is None or cache is None:
        return {}
    hit, data = yamlio.read_cache(cache, key)
    if not hit or not isinstance(data, dict):
        return {}
    return data


def get(key: str) -> float | None:
    """The cached factor of ``key`` (from :func:`inputs_key`), or None (absent, or not a valid factor)."""
    value = _read().get(key)
    return value if _valid(value) else None


def put(key: str, value: float) -> None:
    """Keep ``value`` for ``key``, beside the other processes' entries; a failure keeps nothing."""
    rkey, cache = rules(), cache_file()
    if rkey is None or cache is None or sys.dont_write_bytecode or not _valid(value):
        return
    data = {k: v for k, v in _read().items() if isinstance(k, str) and _valid(v) and k != key}
    data[key] = value
    if len(data) > MAX_ENTRIES:
        data = dict(list(data.items())[-MAX_ENTRIES:])
    yamlio.write_cache(cache, rkey, data)
