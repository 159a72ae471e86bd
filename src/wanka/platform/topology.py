"""Placement domains of a cluster: how many nodes share a leaf, how many leaves share a pod.

The scheduler needs only the grouping, not the links: a job inside one leaf crosses no spine, a
job inside one pod crosses no core. :func:`placement_domains` reads the grouping off the network
layer's fabric (:func:`wanka.network.topology.build_topology`, the one topology model of wanka, also
used by the flow simulator and the facility's bill of materials), so the scheduler, the network and
the facility see the same leaves and pods:

- nodes per leaf: a rail-optimised fabric's *leaf group* (the ``gpus_per_node`` rail leaves that serve
  the same nodes) or a top-of-rack leaf's whole nodes, as the fabric builder populates them;
- leaves per pod: leaf groups under one pod's spines (3 tiers), all of them (2 tiers), 1 (1 tier);
- nodes per scale-up domain = ``domain_size / gpus_per_node`` (at least 1).

A switch the catalog lacks falls back to the default switch of the fabric's kind, listed in
:attr:`PlacementDomains.assumptions`; a fabric that cannot be built is an error, as everywhere.

>>> from wanka.spec import ClusterSpec
>>> d = placement_domains(ClusterSpec(accelerator="H100", nodes=2048))
>>> d.nodes_per_leaf, d.leaves_per_pod
(32, 4)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from wanka.catalog import switch as catalog_switch
from wanka.errors import CatalogError
from wanka.spec import ClusterSpec

__all__ = ["DEFAULT_SWITCHES", "DefaultSwitch", "PlacementDomains", "placement_domains"]


@dataclass(frozen=True)
class DefaultSwitch:
    """Fallback switch used when the catalog does not have the fabric's switch."""

    catalog_name: str
    ports: int
    port_gbps: float
    source: str


# Fallbacks, used only when the catalog lacks the switch (see module docstring).
DEFAULT_SWITCHES: dict[str, DefaultSwitch] = {
    # NVIDIA Quantum-2 QM9700: 64 ports of NDR 400 Gb/s (NVIDIA QM9700 datasheet, 2022).
    "infiniband": DefaultSwitch("QM9700", 64, 400.0, "NVIDIA Quantum-2 QM9700 datasheet: 64 × 400 Gb/s NDR"),
    # NVIDIA Spectrum-4 SN5600: 64 × 800 GbE, or 128 × 400 GbE with breakout (SN5600 datasheet, 2023).
    "roce": DefaultSwitch("SN5600", 64, 800.0, "NVIDIA Spectrum-4 SN5600 datasheet: 64 × 800 GbE / 128 × 400 GbE"),
    "ethernet": DefaultSwitch("SN5600", 64, 800.0, "NVIDIA Spectrum-4 SN5600 datasheet: 64 × 800 GbE / 128 × 400 GbE"),
}


@dataclass(frozen=True)
class PlacementDomains:
    """The grouping the scheduler places jobs by (node → leaf → pod; node → scale-up domain)."""

    nodes_per_leaf: int
    leaves_per_pod: int
    nodes_per_domain: int
    radix: int  # switch ports at the NIC speed
    downlinks: int  # leaf ports facing nodes
    nics_per_node: int
    switch: str
    rail_optimized: bool
    assumptions: tuple[str, ...] = field(default_factory=tuple)

    @property
    def nodes_per_pod(self) -> int:
        return self.nodes_per_leaf * self.leaves_per_pod

    def to_dict(self) -> dict[str, object]:
        return {
            "nodes_per_leaf": self.nodes_per_leaf,
            "leaves_per_pod": self.leaves_per_pod,
            "nodes_per_pod": self.nodes_per_pod,
            "nodes_per_domain": self.nodes_per_domain,
            "radix": self.radix,
            "downlinks": self.downlinks,
            "nics_per_node": self.nics_per_node,
            "switch": self.switch,
            "rail_optimized": self.rail_optimized,
            "assumptions": list(self.assumptions),
        }


def _nics_per_node(cluster: ClusterSpec, notes: list[str]) -> int:
    if cluster.node:
        from wanka.catalog import node as catalog_node

        try:
            n = catalog_node(cluster.node).scale_out_nics
            if n > 0:
                return n
        except CatalogError:
            pass
    notes.append("one scale-out NIC per GPU assumed (rail-optimised convention)")
    return cluster.gpus_per_node


def placement_domains(cluster: ClusterSpec) -> PlacementDomains:
    """Leaf, pod and scale-up grouping of ``cluster``, read off the network layer's fabric."""
    from wanka.network.topology import build_topology, default_switch

    notes: list[str] = []
    override = None
    if cluster.fabric.switch:
        try:
            catalog_switch(cluster.fabric.switch)
        except CatalogError:
            override = default_switch(cluster.fabric.kind)
            notes.append(f"switch {cluster.fabric.switch!r} not in the catalog; assumed {override.name}")
    t = build_topology(cluster, switch_override=override)
    nics = _nics_per_node(cluster, notes)
    gpn = cluster.gpus_per_node
    group = gpn if t.rail_optimized and t.tiers > 1 else 1  # rail leaves serving the same nodes
    if t.tiers == 1:
        nodes_per_leaf, leaves_per_pod = cluster.nodes, 1
    else:
        nodes_per_leaf = t.nodes_per_leaf
        per_pod = t.leaves if t.tiers == 2 else t.leaves_per_pod
        leaves_per_pod = max(1, math.ceil(per_pod / group))
    d = cluster.scale_up.domain_size
    if cluster.fabric.planes > 1:
        notes.append(f"{cluster.fabric.planes} fabric planes treated as one for placement")
    return PlacementDomains(
        nodes_per_leaf=nodes_per_leaf,
        leaves_per_pod=leaves_per_pod,
        nodes_per_domain=max(1, d // gpn),
        radix=t.radix,
        downlinks=t.endpoints_per_leaf * t.ports_per_endpoint,
        nics_per_node=nics,
        switch=t.switch_name or "",
        rail_optimized=t.rail_optimized,
        assumptions=tuple(notes),
    )
