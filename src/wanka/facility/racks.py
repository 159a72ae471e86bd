"""Racks: how many nodes a rack's power budget (by cooling type) holds, and how many racks.

Racks are provisioned for peak draw: ``nodes per rack = floor(budget / node full-load power)``
(``facility.gpus_per_rack`` overrides), rounded down to whole scale-up domains when a domain spans
several nodes but fits a rack (an NVL72 rack is 18 compute trays plus its 9 NVLink switch trays).
A node above the budget gets a rack of its own (noted). Network and storage racks are not counted.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from wanka.errors import SpecError
from wanka.spec import ClusterSpec, FacilitySpec

__all__ = ["RackPlan", "rack_plan"]


@dataclass(frozen=True)
class RackPlan:
    racks: int
    nodes_per_rack: int
    rack_budget_w: float
    rack_power_w: float  # per rack at full load (compute nodes + in-rack scale-up switches)
    assumptions: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["assumptions"] = list(self.assumptions)
        return d


def rack_plan(
    cluster: ClusterSpec,
    facility: FacilitySpec,
    *,
    node_peak_w: float,
    budget_w: float,
    scale_up_peak_w: float = 0.0,
) -> RackPlan:
    """Racks for ``cluster`` given one node's full-load draw and the rack budget (both W)."""
    g = cluster.gpus_per_node
    domain_nodes = max(1, cluster.scale_up.domain_size // g)
    domains = math.ceil(cluster.nodes / domain_nodes)
    tray_w_per_node = scale_up_peak_w / (domains * domain_nodes) if scale_up_peak_w else 0.0
    per_node = node_peak_w + tray_w_per_node
    notes: list[str] = []
    if facility.gpus_per_rack is not None:
        if facility.gpus_per_rack < g:
            raise SpecError(
                f"= {facility.gpus_per_rack}: must be at least gpus_per_node = {g}",
                field="facility.gpus_per_rack",
            )
        n = facility.gpus_per_rack // g
    else:
        n = int(budget_w // per_node)
        if n == 0:
            n = 1
            notes.append(f"one node ({per_node / 1e3:.1f} kW) exceeds the {budget_w / 1e3:.0f} kW budget")
        elif domain_nodes > 1 and n >= domain_nodes:
            n -= n % domain_nodes  # whole scale-up domains per rack
    n = min(n, cluster.nodes)
    return RackPlan(
        racks=math.ceil(cluster.nodes / n),
        nodes_per_rack=n,
        rack_budget_w=budget_w,
        rack_power_w=n * per_node,
        assumptions=tuple(notes),
    )
