"""The inventory of a cluster spec: counts, scale-up domains, racks, peaks, memory, fabric, storage.

Every hardware number comes from :mod:`wanka.catalog`; this module only multiplies and counts. The
rack figure is deliberately simple (the facility layer refines it): a scenario's
``facility.gpus_per_rack`` when given, otherwise as many nodes as fit the rack power budget
(``facility.rack_power_kw`` or the typical budget for the cooling type), keeping multi-node scale-up
domains (NVL72) whole inside a rack when they fit.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from wanka.catalog import (
    Accelerator,
    Node,
    ScaleUpFabric,
    accelerator,
    catalog,
    cluster_scale_up_fabric,
    nic,
    node_or_default,
    storage_server,
    switch,
)
from wanka.errors import CatalogError
from wanka.spec import ClusterSpec, FacilitySpec
from wanka.units import GIGA, TERA, gbps_to_bytes_per_s

__all__ = [
    "TYPICAL_RACK_POWER_W",
    "FabricSummary",
    "Inventory",
    "RackLayout",
    "ScaleUpSummary",
    "StorageSummary",
    "inventory",
]

# Rack power budget (W) per cooling type when the scenario gives none. A facility assumption, not a
# hardware fact; the facility layer owns the refined model.
TYPICAL_RACK_POWER_W: dict[str, float] = {
    "air": 41_000.0,  # NVIDIA DGX SuperPOD H100 reference architecture: 4 DGX H100 (4 x 10.2 kW) per rack
    "liquid": 132_000.0,  # NVIDIA GB200 NVL72: ~120 kW rack on 132 kW of power shelves
    "immersion": 100_000.0,  # single-phase immersion tanks are typically rated 50-100+ kW (assumption)
}

_PROTOCOLS = {
    "infiniband": ("infiniband", "vpi"),
    "roce": ("roce", "vpi"),
    "ethernet": ("roce", "ethernet", "vpi"),
}
_SWITCH_PROTOCOL = {"infiniband": "infiniband", "roce": "ethernet", "ethernet": "ethernet"}


@dataclass(frozen=True)
class RackLayout:
    """How the nodes are racked: a simple power-budget figure, refined by the facility layer."""

    racks: int
    nodes_per_rack: int
    gpus_per_rack: int
    rack_power_w: float  # IT power of a full rack of nodes (network and storage racks excluded)
    basis: str  # where nodes_per_rack came from


@dataclass(frozen=True)
class FabricSummary:
    """The scale-out fabric as specified, with the catalog parts it resolves to."""

    kind: str
    tiers: int
    oversubscription: float
    nic_gbps_per_gpu: float
    nic_bandwidth_per_gpu: float  # B/s, one direction
    injection_bandwidth: float  # B/s, all GPUs together, one direction
    rail_optimized: bool
    rails: int
    planes: int
    sharp: bool
    switch: str | None
    switch_radix: int | None
    switch_port_gbps: float | None
    nic: str | None
    nics_per_node: int | None


@dataclass(frozen=True)
class ScaleUpSummary:
    """The scale-up domain as a topology: the catalog fabric it names, or the legacy one-number domain."""

    fabric: str | None  # catalog scale-up fabric; None = domain_size GPUs on one switched tier
    kind: str | None  # nvlink, ub, hccs, xgmi, mtlink (None without a fabric)
    topology: str  # switched | full_mesh
    domain_size: int
    bandwidth_per_gpu: float  # B/s, one direction
    per_peer_bandwidth: float  # B/s, one direction, to one peer when all peers are busy (full mesh: 1/(D-1))
    domain_bandwidth: float  # B/s, one direction, all GPUs of one domain together
    first_tier_size: int  # GPUs under the first switch tier (= domain_size for one tier)
    upper_tier_latency_s: float  # added per hop once a group crosses the upper tier
    upper_tier_bandwidth_fraction: float
    in_switch_reduction: bool
    source: str | None
    assumptions: tuple[str, ...] = ()


@dataclass(frozen=True)
class StorageSummary:
    kind: str
    servers: int
    server: str | None
    read_bandwidth: float | None  # B/s aggregate
    write_bandwidth: float | None  # B/s aggregate
    capacity_bytes: float | None
    local_nvme_bytes: float  # all nodes together


@dataclass(frozen=True)
class Inventory:
    """What a cluster spec adds up to, in SI units (FLOP/s, bytes, B/s, W)."""

    name: str
    accelerator: str
    vendor: str
    accelerators: int
    nodes: int
    gpus_per_node: int
    node: str | None
    scale_up_domain_size: int
    scale_up_domains: int  # whole domains
    scale_up_remainder: int  # accelerators outside a whole domain
    scale_up_bandwidth_per_gpu: float  # B/s, one direction
    racks: RackLayout
    peak_flops: dict[str, float]  # dense, whole cluster, per dtype
    hbm_bytes: float
    hbm_bandwidth: float  # B/s, whole cluster
    host_memory_bytes: float | None
    node_power_w: float  # one node at full load
    it_power_w: float  # all compute nodes at full load (no network, storage, cooling)
    fabric: FabricSummary
    storage: StorageSummary
    notes: list[str] = field(default_factory=list)
    scale_up: ScaleUpSummary | None = None  # the domain's fabric (always set by inventory())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _node_power_w(nd: Node | None, acc: Accelerator, gpus_per_node: int) -> float:
    if nd is None:
        return gpus_per_node * acc.tdp_w
    if nd.max_power_w is not None:
        return nd.max_power_w
    return nd.gpus * acc.tdp_w + nd.cpus * nd.cpu_tdp_w + nd.other_w


def _racks(cluster: ClusterSpec, facility: FacilitySpec, node_w: float) -> RackLayout:
    gpn = cluster.gpus_per_node
    if facility.gpus_per_rack is not None:
        per_rack = max(1, facility.gpus_per_rack // gpn)
        basis = f"facility.gpus_per_rack = {facility.gpus_per_rack}"
    else:
        if facility.rack_power_kw is not None:
            budget, why = facility.rack_power_kw * 1e3, "facility.rack_power_kw"
        else:
            budget, why = TYPICAL_RACK_POWER_W[facility.cooling], f"typical {facility.cooling}-cooled rack"
        per_rack = max(1, math.floor(budget / node_w + 1e-9))
        domain_nodes = cluster.scale_up.domain_size // gpn if cluster.scale_up.domain_size > gpn else 1
        if domain_nodes > 1 and per_rack >= domain_nodes:
            per_rack -= per_rack % domain_nodes  # keep NVL72-style domains inside one rack
        basis = f"{why}: {budget / 1e3:g} kW / {node_w / 1e3:g} kW per node"
    per_rack = min(per_rack, cluster.nodes)
    return RackLayout(
        racks=math.ceil(cluster.nodes / per_rack),
        nodes_per_rack=per_rack,
        gpus_per_rack=per_rack * gpn,
        rack_power_w=per_rack * node_w,
        basis=basis,
    )


def _typical_switch(kind: str, gbps: float) -> str | None:
    """The first catalog switch of the fabric's protocol whose port speed is the smallest >= the NIC's."""
    proto, need = _SWITCH_PROTOCOL[kind], gbps_to_bytes_per_s(gbps)
    fits = [s for s in catalog().switches if s.protocol == proto and s.port_bandwidth >= need]
    if not fits:
        return None
    best = min(s.port_bandwidth for s in fits)
    return next(s.name for s in fits if s.port_bandwidth == best)


def _typical_nic(kind: str, gbps: float) -> str | None:
    need = gbps_to_bytes_per_s(gbps)
    fits = [n for n in catalog().nics if n.protocol in _PROTOCOLS[kind] and n.bandwidth >= need]
    if not fits:
        return None
    best = min(n.bandwidth for n in fits)
    return next(n.name for n in fits if n.bandwidth == best)


def _fabric(cluster: ClusterSpec, nd: Node | None, notes: list[str]) -> FabricSummary:
    f = cluster.fabric
    sw_name = switch(f.switch).name if f.switch is not None else _typical_switch(f.kind, f.nic_gbps_per_gpu)
    nic_name = nic(f.nic).name if f.nic is not None else _typical_nic(f.kind, f.nic_gbps_per_gpu)
    sw = switch(sw_name) if sw_name else None
    if sw is not None and sw.protocol != _SWITCH_PROTOCOL[f.kind]:
        notes.append(f"fabric.switch {sw.name} speaks {sw.protocol}, the fabric is {f.kind}")
    if nic_name is not None:
        n = nic(nic_name)
        if n.protocol not in _PROTOCOLS[f.kind]:
            notes.append(f"fabric.nic {n.name} speaks {n.protocol}, the fabric is {f.kind}")
        if nd is not None and nd.scale_out_nics:
            have = nd.scale_out_nics * n.bandwidth
            need = cluster.gpus_per_node * gbps_to_bytes_per_s(f.nic_gbps_per_gpu)
            if have < need * (1 - 1e-9):
                got = have * 8 / GIGA / cluster.gpus_per_node
                notes.append(
                    f"{nd.scale_out_nics} x {n.name} per node give {got:g} Gb/s per GPU, "
                    f"below fabric.nic_gbps_per_gpu = {f.nic_gbps_per_gpu:g}"
                )
    per_gpu = gbps_to_bytes_per_s(f.nic_gbps_per_gpu)
    return FabricSummary(
        kind=f.kind,
        tiers=f.tiers,
        oversubscription=f.oversubscription,
        nic_gbps_per_gpu=f.nic_gbps_per_gpu,
        nic_bandwidth_per_gpu=per_gpu,
        injection_bandwidth=per_gpu * cluster.accelerators,
        rail_optimized=f.rail_optimized,
        rails=cluster.gpus_per_node if f.rail_optimized else 1,
        planes=f.planes,
        sharp=f.sharp,
        switch=sw_name,
        switch_radix=sw.radix if sw else None,
        switch_port_gbps=sw.port_bandwidth * 8 / GIGA if sw else None,
        nic=nic_name,
        nics_per_node=nd.scale_out_nics if nd is not None else None,
    )


def _scale_up(cluster: ClusterSpec, acc: Accelerator, notes: list[str]) -> ScaleUpSummary:
    su = cluster.scale_up
    d = su.domain_size
    fab: ScaleUpFabric | None = cluster_scale_up_fabric(su.fabric, acc.name, d)
    assumed: tuple[str, ...] = ()
    if su.fabric is None and fab is not None:
        assumed = (f"scale_up.fabric not given: {fab.name}, the full mesh {acc.name} is built into at {d} GPUs",)
    if su.gbytes_per_s_per_direction is not None:
        bw = su.gbytes_per_s_per_direction * GIGA
    else:
        bw = fab.bandwidth if fab is not None else acc.scale_up_bandwidth
    if fab is None:
        return ScaleUpSummary(None, None, "switched", d, bw, bw, bw * d, d, 0.0, 1.0, su.in_switch_reduction, None)
    if fab.accelerators and acc.name not in fab.accelerators:
        notes.append(
            f"scale_up.fabric {fab.name} is built for {', '.join(fab.accelerators)}, the cluster uses {acc.name}"
        )
    if d != fab.domain_size:
        notes.append(f"scale_up.domain_size = {d} overrides fabric {fab.name}'s {fab.domain_size} GPUs")
    mesh = fab.topology == "full_mesh"
    return ScaleUpSummary(
        fabric=fab.name,
        kind=fab.kind,
        topology=fab.topology,
        domain_size=d,
        bandwidth_per_gpu=bw,
        per_peer_bandwidth=bw / max(d - 1, 1) if mesh else bw,
        domain_bandwidth=bw * d,
        first_tier_size=min(fab.first_tier_size, d),
        upper_tier_latency_s=fab.upper_tier_latency_s,
        upper_tier_bandwidth_fraction=fab.upper_tier_bandwidth_fraction,
        in_switch_reduction=su.in_switch_reduction,
        source=fab.source,
        assumptions=assumed + tuple(fab.assumptions),
    )


def _storage(cluster: ClusterSpec, nd: Node | None) -> StorageSummary:
    s = cluster.storage
    srv = storage_server(s.server) if s.server is not None else None
    read = s.read_gbytes_per_s_per_server * GIGA if s.read_gbytes_per_s_per_server else None
    write = s.write_gbytes_per_s_per_server * GIGA if s.write_gbytes_per_s_per_server else None
    cap = s.capacity_tb * TERA if s.capacity_tb else None
    if srv is not None:
        read = read if read is not None else srv.read_bandwidth
        write = write if write is not None else srv.write_bandwidth
        cap = cap if cap is not None else srv.capacity_bytes * s.servers
    local = nd.local_nvme_bytes if nd else 0.0
    if s.local_nvme_tb_per_node:
        local = s.local_nvme_tb_per_node * TERA
    return StorageSummary(
        kind=s.kind,
        servers=s.servers,
        server=srv.name if srv else None,
        read_bandwidth=read * s.servers if read is not None else None,
        write_bandwidth=write * s.servers if write is not None else None,
        capacity_bytes=cap,
        local_nvme_bytes=local * cluster.nodes,
    )


def inventory(cluster: ClusterSpec, facility: FacilitySpec | None = None) -> Inventory:
    """Count and sum a cluster. Unknown catalog names raise :class:`~wanka.errors.CatalogError`.

    >>> from wanka.spec import ClusterSpec
    >>> inv = inventory(ClusterSpec(accelerator="H100", nodes=2))
    >>> inv.accelerators, inv.peak_flops["bf16"] / 1e15
    (16, 15.8304)
    """
    facility = facility if facility is not None else FacilitySpec()
    try:
        acc = accelerator(cluster.accelerator)
    except CatalogError as e:
        raise CatalogError(f"cluster.accelerator = {cluster.accelerator!r}: {e}") from None
    try:
        nd = node_or_default(cluster.node, acc.name)
    except CatalogError as e:
        raise CatalogError(f"cluster.node = {cluster.node!r}: {e}") from None
    notes: list[str] = []
    if nd is not None:
        if nd.gpus != cluster.gpus_per_node:
            notes.append(f"node {nd.name} holds {nd.gpus} GPUs, gpus_per_node = {cluster.gpus_per_node}")
        if accelerator(nd.accelerator).name != acc.name:
            notes.append(f"node {nd.name} is built for {nd.accelerator}, the cluster uses {acc.name}")
    d = cluster.scale_up.domain_size
    fab = cluster_scale_up_fabric(cluster.scale_up.fabric, acc.name, d)
    by_fabric = fab is not None and acc.name in fab.accelerators and d == fab.domain_size  # its entry documents it
    if d not in acc.scale_up_domains and not by_fabric:
        opts = ", ".join(str(x) for x in acc.scale_up_domains)
        notes.append(f"scale_up.domain_size = {d} is not a documented option for {acc.name} ({opts})")
    n = cluster.accelerators
    su = _scale_up(cluster, acc, notes)
    node_w = _node_power_w(nd, acc, cluster.gpus_per_node)
    try:
        fabric = _fabric(cluster, nd, notes)
    except CatalogError as e:
        raise CatalogError(f"cluster.fabric: {e}") from None
    try:
        storage = _storage(cluster, nd)
    except CatalogError as e:
        raise CatalogError(f"cluster.storage: {e}") from None
    return Inventory(
        name=cluster.name,
        accelerator=acc.name,
        vendor=acc.vendor,
        accelerators=n,
        nodes=cluster.nodes,
        gpus_per_node=cluster.gpus_per_node,
        node=nd.name if nd else None,
        scale_up_domain_size=d,
        scale_up_domains=n // d,
        scale_up_remainder=n % d,
        scale_up_bandwidth_per_gpu=su.bandwidth_per_gpu,
        racks=_racks(cluster, facility, node_w),
        peak_flops={k: v * n for k, v in acc.peak_flops.items()},
        hbm_bytes=acc.hbm_bytes * n,
        hbm_bandwidth=acc.hbm_bandwidth * n,
        host_memory_bytes=nd.host_memory_bytes * cluster.nodes if nd else None,
        node_power_w=node_w,
        it_power_w=node_w * cluster.nodes,
        fabric=fabric,
        storage=storage,
        notes=notes,
        scale_up=su,
    )
