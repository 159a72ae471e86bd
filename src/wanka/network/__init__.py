"""Networks (基础设施层): collectives, scale-up domains, scale-out fabrics, contention.

``collectives`` is the only source of collective times in wanka; ``topology`` and ``bom`` build
fat-tree fabrics and their bill of materials; ``flow`` simulates flow-level contention (ECMP vs
adaptive routing) and feeds a slowdown back to the engine through ``groups.fabric_slowdowns``.
"""

from wanka.network.bom import BillOfMaterials, bill_of_materials
from wanka.network.collectives import OPS, CollectiveResult, CommGroup, bus_factor, collective_time
from wanka.network.flow import FlowResult, collective_traffic, contention_factor, simulate
from wanka.network.groups import comm_group, fabric_slowdowns
from wanka.network.nccl_tests import collective_sweep
from wanka.network.topology import Topology, build_topology, fat_tree, max_endpoints

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
