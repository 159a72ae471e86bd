"""Loads the catalog data files once and looks entries up by name or alias (case-insensitive).

The built catalog (SI records and raw rows) is cached beside the bytecode
(``data/__pycache__/catalog.TAG.pickle``), keyed by the SHA-256 of its data files and of the code
that turns them into records (this module, ``entries.py``, ``wanka.units``, ``wanka.yamlio``): a changed
file or a changed conversion builds it again; a damaged cache is ignored; with a hit neither YAML
nor the entry models' validators are touched (they are built on first use: ``defer_build``). The
cache has the trust of the bytecode next to it (it is unpickled as the bytecode is executed).
"""

from __future__ import annotations

import functools
import hashlib
import pickle
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from wanka import yamlio
from wanka.catalog.entries import (
    Accelerator,
    AcceleratorEntry,
    Nic,
    NicEntry,
    Node,
    NodeEntry,
    Optic,
    OpticEntry,
    ScaleUpFabric,
    ScaleUpFabricEntry,
    StorageServer,
    StorageServerEntry,
    Switch,
    SwitchEntry,
)
from wanka.errors import CatalogError

__all__ = [
    "Catalog",
    "Table",
    "accelerator",
    "catalog",
    "nic",
    "node",
    "node_or_default",
    "optic",
    "scale_up_fabric",
    "storage_server",
    "switch",
]

R = TypeVar("R")

_FILES: dict[str, tuple[str, type[BaseModel], Any]] = {
    "accelerators": ("accelerators.yaml", AcceleratorEntry, Accelerator.from_entry),
    "nodes": ("nodes.yaml", NodeEntry, Node.from_entry),
    "nics": ("nics.yaml", NicEntry, Nic.from_entry),
    "switches": ("switches.yaml", SwitchEntry, Switch.from_entry),
    "optics": ("optics.yaml", OpticEntry, Optic.from_entry),
    "storage": ("storage.yaml", StorageServerEntry, StorageServer.from_entry),
    "scale_up_fabrics": ("scale_up.yaml", ScaleUpFabricEntry, ScaleUpFabric.from_entry),
}


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-")


class Table(Generic[R]):
    """Entries of one kind, looked up by name or alias."""

    def __init__(self, kind: str, records: list[R]) -> None:
        self.kind = kind
        self.records = records
        self._index: dict[str, R] = {}
        for r in records:
            for key in (r.name, *r.aliases):  # type: ignore[attr-defined]
                k = _norm(key)
                if k in self._index:
                    raise CatalogError(f"catalog {kind}: name or alias {key!r} is used twice")
                self._index[k] = r

    def __getitem__(self, name: str) -> R:
        try:
            return self._index[_norm(name)]
        except KeyError:
            known = ", ".join(r.name for r in self.records)  # type: ignore[attr-defined]
            raise CatalogError(
                f"unknown {self.kind[:-1] if self.kind.endswith('s') else self.kind} {name!r}; known: {known}"
            ) from None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _norm(name) in self._index

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)


@dataclass(frozen=True)
class Catalog:
    accelerators: Table[Accelerator]
    nodes: Table[Node]
    nics: Table[Nic]
    switches: Table[Switch]
    optics: Table[Optic]
    storage: Table[StorageServer]
    scale_up_fabrics: Table[ScaleUpFabric]
    raw: dict[str, list[dict[str, Any]]]


def _load_file(kind: str) -> tuple[list[Any], list[dict[str, Any]]]:
    fname, entry_cls, convert = _FILES[kind]
    data = yamlio.load_data(resources.files("wanka.catalog") / "data" / fname) or {}  # parsed-data cache
    rows = data.get(kind, [])
    out = []
    for i, row in enumerate(rows):
        try:
            out.append(convert(entry_cls.model_validate(row)))
        except ValidationError as e:
            err = e.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise CatalogError(
                f"catalog file {fname}: entry {i} ({row.get('name', '?')}): {loc}: {err['msg']}"
            ) from None
        except ValueError as e:  # a cross-field check of the SI record (from_entry)
            raise CatalogError(f"catalog file {fname}: entry {i} ({row.get('name', '?')}): {e}") from None
    return out, rows


def _build() -> Catalog:
    tables: dict[str, Any] = {}
    raw: dict[str, list[dict[str, Any]]] = {}
    for kind in _FILES:
        records, rows = _load_file(kind)
        tables[kind] = Table(kind, records)
        raw[kind] = rows
    return Catalog(raw=raw, **tables)


def _key(data: Path) -> bytes:
    """What the built catalog depends on: the data files and the code that converts them."""
    from wanka import units
    from wanka.catalog import entries

    h = hashlib.sha256(yamlio.rules())  # yamlio's code and PyYAML's version
    h.update(sys.version.encode())
    for f in (__file__, entries.__file__, units.__file__):
        h.update(Path(f).read_bytes())
    for fname, _, _ in _FILES.values():
        h.update(fname.encode() + b"\0")
        h.update((data / fname).read_bytes())
    return h.digest()


@lru_cache(maxsize=1)
def catalog() -> Catalog:
    """The whole catalog (loaded once per process; built once per change of its files, see above)."""
    data = resources.files("wanka.catalog") / "data"
    if not isinstance(data, Path):  # not on a file system (a zip): no cache
        return _build()
    try:
        key = _key(data)
    except OSError:
        return _build()
    cache = yamlio.cache_path(data / "catalog", ".pickle")
    if cache is not None:
        hit, cat = yamlio.read_cache(cache, key, pickle.loads)
        if hit and isinstance(cat, Catalog):
            return cat
    cat = _build()
    if cache is not None:
        yamlio.write_cache(cache, key, cat, lambda c: pickle.dumps(c, protocol=pickle.HIGHEST_PROTOCOL))
    return cat


def accelerator(name: str) -> Accelerator:
    return catalog().accelerators[name]


def node(name: str) -> Node:
    return catalog().nodes[name]


def node_or_default(name: str | None, accelerator_name: str) -> Node | None:
    """The catalog node a cluster runs on: the one it names, else its accelerator's default node (None
    when neither is known)."""
    if name is not None:
        return node(name)
    default = accelerator(accelerator_name).default_node
    return node(default) if default else None


def nic(name: str) -> Nic:
    return catalog().nics[name]


def switch(name: str) -> Switch:
    return catalog().switches[name]


def optic(name: str) -> Optic:
    return catalog().optics[name]


def storage_server(name: str) -> StorageServer:
    return catalog().storage[name]


def scale_up_fabric(name: str) -> ScaleUpFabric:
    return catalog().scale_up_fabrics[name]


@functools.cache
def default_scale_up_fabric(accelerator_name: str, domain_size: int) -> ScaleUpFabric | None:
    """The scale-up fabric a domain of ``domain_size`` of these accelerators is when a cluster names none:
    the one catalog full mesh built for them at that size (MI300X's xGMI board, Ascend 910B's HCCS mesh,
    ...), else None (a switched domain, where every group gets a GPU's whole bandwidth). A mesh has no
    switch to fall back to: a group of a ranks reaches its peers over a-1 of the D-1 links."""
    acc = accelerator(accelerator_name)
    found = [
        f
        for f in catalog().scale_up_fabrics
        if f.topology == "full_mesh" and acc.name in f.accelerators and f.domain_size == domain_size
    ]
    return found[0] if len(found) == 1 else None


def cluster_scale_up_fabric(name: str | None, accelerator_name: str, domain_size: int) -> ScaleUpFabric | None:
    """The fabric a cluster's scale-up domain is: the one it names, else :func:`default_scale_up_fabric`."""
    return scale_up_fabric(name) if name is not None else default_scale_up_fabric(accelerator_name, domain_size)
