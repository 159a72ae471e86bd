"""Infrastructure layer (基础设施层): what a cluster spec adds up to -- accelerators, nodes, scale-up
domains, racks, peak compute, memory and the fabric in one typed inventory.

>>> from wanka.spec import load_scenario
>>> inventory(load_scenario("meta-24k-h100-roce").cluster).accelerators
24576
"""

from wanka.infra.inventory import (
    TYPICAL_RACK_POWER_W,
    FabricSummary,
    Inventory,
    RackLayout,
    ScaleUpSummary,
    StorageSummary,
    inventory,
)

__all__ = [
    "TYPICAL_RACK_POWER_W",
    "FabricSummary",
    "Inventory",
    "RackLayout",
    "ScaleUpSummary",
    "StorageSummary",
    "inventory",
]
