"""Loads the catalog data files once and looks entries up by name or alias (case-insensitive)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
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
    StorageServer,
    StorageServerEntry,
    Switch,
    SwitchEntry,
)
from wanka.errors import CatalogError

__all__ = ["Catalog", "Table", "accelerator", "catalog", "nic", "node", "optic", "storage_server", "switch"]

R = TypeVar("R")

_FILES: dict[str, tuple[str, type[BaseModel], Any]] = {
    "accelerators": ("accelerators.yaml", AcceleratorEntry, Accelerator.from_entry),
    "nodes": ("nodes.yaml", NodeEntry, Node.from_entry),
    "nics": ("nics.yaml", NicEntry, Nic.from_entry),
    "switches": ("switches.yaml", SwitchEntry, Switch.from_entry),
    "optics": ("optics.yaml", OpticEntry, Optic.from_entry),
    "storage": ("storage.yaml", StorageServerEntry, StorageServer.from_entry),
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
    return out, rows


@lru_cache(maxsize=1)
def catalog() -> Catalog:
    """The whole catalog (loaded once)."""
    tables: dict[str, Any] = {}
    raw: dict[str, list[dict[str, Any]]] = {}
    for kind in _FILES:
        records, rows = _load_file(kind)
        tables[kind] = Table(kind, records)
        raw[kind] = rows
    return Catalog(raw=raw, **tables)


def accelerator(name: str) -> Accelerator:
    return catalog().accelerators[name]


def node(name: str) -> Node:
    return catalog().nodes[name]


def nic(name: str) -> Nic:
    return catalog().nics[name]


def switch(name: str) -> Switch:
    return catalog().switches[name]


def optic(name: str) -> Optic:
    return catalog().optics[name]


def storage_server(name: str) -> StorageServer:
    return catalog().storage[name]
