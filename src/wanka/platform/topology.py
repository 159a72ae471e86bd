"""Placement domains of a cluster: how many nodes share a leaf, how many leaves share a pod.

The scheduler needs only the grouping, not the links: a job inside one leaf crosses no spine, a
job inside one pod crosses no core. :func:`placement_domains` derives the grouping from the
cluster's fabric with the folded-Clos (fat-tree) port count, and is the one place to swap in the
network layer's topology builder later.

>>> from wanka.spec import ClusterSpec
>>> d = placement_domains(ClusterSpec(accelerator="H100", nodes=2048))
>>> d.nodes_per_leaf, d.leaves_per_pod
(32, 64)

Derivation (Leiserson, "Fat-trees", IEEE ToC 1985; Al-Fares et al., SIGCOMM 2008):

- ports at the NIC speed: ``radix = ports × floor(port_gbps / nic_gbps)`` (breakout; a 64×800G
  switch is 128×400G), at least ``ports``;
- a leaf with oversubscription ``o`` (down:up) gives ``floor(radix · o / (o + 1))`` ports down
  (``radix / 2`` when non-blocking); a one-tier fabric has every port down;
- nodes per leaf = ``floor(downlinks / nics_per_node)``. In a rail-optimised fabric each node's
  NIC *r* goes to the leaf of rail *r*; the ``nics_per_node`` rail leaves that serve the same nodes
  form a *leaf group*, which serves ``downlinks`` nodes and is treated as the leaf here;
- leaves per pod: in two tiers every spine port goes down, so ``radix`` leaves share the spines;
  in three or more tiers a spine keeps half its ports for the core, so ``radix // 2``;
- nodes per scale-up domain = ``domain_size / gpus_per_node`` (at least 1).

Switch radix comes from ``wanka.catalog.switch(cluster.fabric.switch)``. Where the fabric names no
switch, or the catalog lacks it, the documented defaults below are used (explicit fallback, listed
in :attr:`PlacementDomains.assumptions`).
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


def _switch_ports(cluster: ClusterSpec, notes: list[str]) -> tuple[str, int, float]:
    """(name, ports, port Gb/s) of the fabric's switch: catalog first, documented default second."""
    default = DEFAULT_SWITCHES[cluster.fabric.kind]
    name = cluster.fabric.switch or default.catalog_name
    try:
        sw = catalog_switch(name)
        return sw.name, sw.radix, sw.port_bandwidth * 8 / 1e9
    except CatalogError:
        if cluster.fabric.switch:
            notes.append(f"switch {name!r} not in the catalog; assumed {default.source}")
        else:
            notes.append(f"no switch named; assumed {default.source}")
        return default.catalog_name, default.ports, default.port_gbps


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
    """Leaf, pod and scale-up grouping of ``cluster`` derived from its fabric (see module docstring)."""
    notes: list[str] = []
    fabric = cluster.fabric
    name, ports, port_gbps = _switch_ports(cluster, notes)
    nics = _nics_per_node(cluster, notes)
    nic_gbps = fabric.nic_gbps_per_gpu * cluster.gpus_per_node / nics
    radix = ports * max(1, math.floor(port_gbps / nic_gbps))  # breakout to the NIC speed
    ports_per_nic = max(1, math.ceil(nic_gbps / port_gbps))  # a NIC faster than a port takes several
    if fabric.tiers == 1:
        downlinks = radix
    else:
        o = fabric.oversubscription
        downlinks = max(1, math.floor(radix * o / (o + 1)))  # down:up = o:1
    node_ports = ports_per_nic if fabric.rail_optimized else nics * ports_per_nic
    nodes_per_leaf = max(1, downlinks // node_ports)
    if fabric.tiers == 1:
        leaves_per_pod = 1
    elif fabric.tiers == 2:
        leaves_per_pod = radix  # spine ports all face leaves
    else:
        leaves_per_pod = max(1, radix // 2)  # half the spine ports face the core
    d = cluster.scale_up.domain_size
    nodes_per_domain = max(1, d // cluster.gpus_per_node)
    if fabric.planes > 1:
        notes.append(f"{fabric.planes} fabric planes treated as one for placement")
    return PlacementDomains(
        nodes_per_leaf=nodes_per_leaf,
        leaves_per_pod=leaves_per_pod,
        nodes_per_domain=nodes_per_domain,
        radix=radix,
        downlinks=downlinks,
        nics_per_node=nics,
        switch=name,
        rail_optimized=fabric.rail_optimized,
        assumptions=tuple(notes),
    )
