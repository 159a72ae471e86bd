"""Networks (基础设施层): collectives, scale-up domains, scale-out fabrics, contention.

``collectives`` is the only source of collective times in wanka; ``topology`` and ``bom`` build
fat-tree fabrics and their bill of materials; ``flow`` simulates flow-level contention (ECMP vs
adaptive routing) and feeds a slowdown back to the engine through ``groups.fabric_slowdowns``.

The names below are imported from their modules on first use (PEP 562): the engine needs
``groups`` and ``collectives`` only, and ``bom``, ``topology``, ``flow`` and ``nccl_tests`` cost
~20 ms of every command's start. No name here is also a module's name, so a submodule imported
first never shadows one.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wanka.network.bom import BillOfMaterials, bill_of_materials
    from wanka.network.collectives import OPS, CollectiveResult, CommGroup, bus_factor, collective_time
    from wanka.network.flow import FlowResult, collective_traffic, contention_factor, simulate
    from wanka.network.groups import comm_group, fabric_slowdowns
    from wanka.network.nccl_tests import collective_sweep
    from wanka.network.topology import Topology, build_topology, fat_tree, max_endpoints

_WHERE: dict[str, str] = {
    "BillOfMaterials": "bom",
    "bill_of_materials": "bom",
    "OPS": "collectives",
    "CollectiveResult": "collectives",
    "CommGroup": "collectives",
    "bus_factor": "collectives",
    "collective_time": "collectives",
    "FlowResult": "flow",
    "collective_traffic": "flow",
    "contention_factor": "flow",
    "simulate": "flow",
    "comm_group": "groups",
    "fabric_slowdowns": "groups",
    "collective_sweep": "nccl_tests",
    "Topology": "topology",
    "build_topology": "topology",
    "fat_tree": "topology",
    "max_endpoints": "topology",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


__all__ = [
    "OPS",
    "BillOfMaterials",
    "CollectiveResult",
    "CommGroup",
    "FlowResult",
    "Topology",
    "bill_of_materials",
    "build_topology",
    "bus_factor",
    "collective_sweep",
    "collective_time",
    "collective_traffic",
    "comm_group",
    "contention_factor",
    "fabric_slowdowns",
    "fat_tree",
    "max_endpoints",
    "simulate",
]
