"""Scale-out fabric topologies: single switch, 2- and 3-tier fat-trees (leaf, spine, core), rail-optimised
or top-of-rack, any leaf oversubscription, several identical planes; plus the scale-up domains they join.

A fat-tree (folded Clos) of radix-``k`` switches, non-blocking, reaches ``2 (k/2)^t`` endpoints with ``t``
tiers: ``k`` on one switch, ``k²/2`` with two tiers and ``k³/4`` with three (Al-Fares et al., "A Scalable,
Commodity Data Center Network Architecture", SIGCOMM 2008). Construction used here:

* **leaf**: ``d`` down-ports and ``u = d / o`` up-ports (``o`` = oversubscription), ``d + u <= k``; it
  serves ``h = d / ports_per_endpoint`` endpoints (one per GPU per plane).
* **2-tier**: leaf uplink ``p`` goes to spine ``p mod S`` (every leaf reaches every spine, with
  ``~u / S`` parallel links); ``S`` is the fewest spines with enough ports, so ``leaves <= k``.
* **3-tier**: a *pod* is ``k/2`` leaves and the fewest spines (``u`` at full size) whose ``k/2``
  down-ports take every leaf's uplinks; a spine has as many up-ports as down-ports. Spine
  ``j`` of every pod joins core group ``j`` (``C`` cores, uplink ``q`` to core ``q mod C``); at most
  ``k`` pods.
* **rails**: rail-optimised, GPU ``r`` of every node hangs off the rail-``r`` leaf of its *rail group*
  (``h`` nodes, ``rails`` leaves, NVIDIA DGX SuperPOD reference architecture); otherwise a leaf is a
  top-of-rack switch of ``h / gpus_per_node`` whole nodes.
* **link speed**: a switch port faster than the NIC is split (breakout: 800G -> 2x400G), so the fabric
  runs at ``s = port / floor(port / nic)`` with radix ``k * port / s``; a NIC faster than a port takes
  ``ceil(nic / s)`` ports.

Planes are identical copies; each GPU has one NIC port per plane carrying ``1/planes`` of its traffic.
The graph (``Topology.graph()``) holds one plane as numpy arrays (link endpoints, capacities, CSR).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from wanka.catalog import Switch, catalog, switch
from wanka.errors import CatalogError, SpecError
from wanka.network.groups import scale_out_bw, scale_up_bw
from wanka.spec.cluster import ClusterSpec

__all__ = [
    "DEFAULT_SWITCHES",
    "FabricGraph",
    "ScaleUpDomains",
    "Topology",
    "build_topology",
    "default_switch",
    "fat_tree",
    "max_endpoints",
]

TIER_NAMES = ("leaf", "spine", "core")
# Catalog names tried, in order, when a cluster names no switch (names only; the facts are in the catalog).
DEFAULT_SWITCHES: dict[str, tuple[str, ...]] = {
    "infiniband": ("QM9700", "Quantum-2"),  # 64 x 400G NDR
    "roce": ("SN5600-400G", "TH5-128x400G", "SN5600", "TH5-64x800G"),  # 51.2 Tb/s
    "ethernet": ("TH5-128x400G", "SN5600-400G", "TH5-64x800G", "SN5600"),
}
_PROTOCOL = {"infiniband": "infiniband", "roce": "ethernet", "ethernet": "ethernet"}
IntArray = npt.NDArray[np.int64]


def _upper_switches(sources: int, links: int, radix: int) -> int:
    """Fewest upper switches that take ``links`` links from each of ``sources`` lower switches, spread
    round-robin (link ``p`` to switch ``p mod S``), with no switch needing more than ``radix`` ports."""
    s = max(1, math.ceil(sources * links / radix))
    while s < links and sources * math.ceil(links / s) > radix:
        s += 1
    return min(s, links)


def _link_geometry(radix: int, port_bw: float, endpoint_bw: float) -> tuple[int, float, int, int]:
    """(split, link speed, effective radix, ports per endpoint) for NICs of ``endpoint_bw`` on the switch."""
    split = max(1, math.floor(port_bw / endpoint_bw + 1e-9)) if endpoint_bw < port_bw else 1
    speed = port_bw / split
    return split, speed, radix * split, max(1, math.ceil(endpoint_bw / speed - 1e-9))


def _leaf_ports(radix: int, oversubscription: float, ppe: int) -> tuple[int, int]:
    """(endpoints per leaf, uplinks per leaf) at full leaf population."""
    down = math.floor(radix * oversubscription / (1.0 + oversubscription) + 1e-9)
    h = max(1, down // ppe)
    up = max(1, math.ceil(h * ppe / oversubscription - 1e-9))
    while h > 1 and h * ppe + up > radix:
        h -= 1
        up = max(1, math.ceil(h * ppe / oversubscription - 1e-9))
    return h, up


def max_endpoints(radix: int, tiers: int, oversubscription: float = 1.0, ports_per_endpoint: int = 1) -> int:
    """Largest number of endpoints a fat-tree of ``tiers`` tiers of radix-``radix`` switches reaches.

    >>> max_endpoints(64, 2), max_endpoints(64, 3)   # k²/2 and k³/4
    (2048, 65536)
    """
    if tiers == 1:
        return radix // ports_per_endpoint
    h, _ = _leaf_ports(radix, oversubscription, ports_per_endpoint)
    if tiers == 2:
        return radix * h
    if tiers == 3:
        return radix * (radix // 2) * h
    raise SpecError(f"= {tiers}: the topology builder models 1, 2 or 3 tiers", field="fabric.tiers")


@dataclass(frozen=True)
class ScaleUpDomains:
    """GPUs joined by NVLink/HCCS-class links (8-GPU boards, NVL72 racks, 384-NPU supernodes)."""

    size: int
    count: int
    bandwidth_per_gpu: float  # B/s, one direction
    nodes_per_domain: float
    supernode: bool  # the domain spans more than one server

    @property
    def bisection_bytes_per_s(self) -> float:
        """One direction across a cut of each domain into halves, all domains together (non-blocking)."""
        return self.count * (self.size / 2) * self.bandwidth_per_gpu


@dataclass(frozen=True)
class FabricGraph:
    """One plane of the fabric as arrays. Nodes: endpoints ``[0, E)``, then leaves, spines, cores.

    Each physical link appears once (``link_src`` the lower tier); ``link_tier`` 0 = endpoint–leaf,
    1 = leaf–spine, 2 = spine–core; ``indptr``/``indices``/``link_of`` are a CSR adjacency over both
    directions (``link_of`` gives the link id of each adjacency entry).
    """

    node_tier: npt.NDArray[np.int8]  # 0 endpoint, 1 leaf, 2 spine, 3 core
    link_src: IntArray
    link_dst: IntArray
    link_capacity: npt.NDArray[np.float64]  # B/s, one direction
    link_tier: npt.NDArray[np.int8]
    indptr: IntArray
    indices: IntArray
    link_of: IntArray

    @property
    def num_nodes(self) -> int:
        return int(self.node_tier.size)

    @property
    def num_links(self) -> int:
        return int(self.link_src.size)

    def neighbours(self, node: int) -> IntArray:
        return self.indices[self.indptr[node] : self.indptr[node + 1]]

    def degree(self) -> IntArray:
        return np.diff(self.indptr)


@dataclass(frozen=True)
class Topology:
    """A scale-out fabric and the scale-up domains it joins. Bandwidths B/s, one direction, per plane."""

    endpoints: int  # GPUs; each has one fabric port per plane
    gpus_per_node: int
    tiers: int
    radix: int  # effective radix at the link speed
    link_bandwidth: float  # switch–switch link (B/s)
    endpoint_bandwidth: float  # GPU–leaf link per plane (B/s)
    port_bandwidth: float  # physical switch port (B/s)
    split: int  # logical links per physical switch port (breakout)
    ports_per_endpoint: int
    planes: int
    rail_optimized: bool
    oversubscription: float
    endpoints_per_leaf: int
    uplinks_per_leaf: int
    leaves: int  # per plane
    spines_per_pod: int
    leaves_per_pod: int
    pods: int
    cores_per_group: int
    switch_name: str | None = None
    scale_up: ScaleUpDomains | None = None
    spine_oversubscription: float = 1.0  # spine down:up (3 tiers): the pods' share of the core
    spine_radix: int | None = None  # at the link speed; None = the leaf's
    core_radix: int | None = None
    spine_switch_name: str | None = None  # None = the leaf's switch
    core_switch_name: str | None = None
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    # ------------------------------------------------------------------ placement
    @property
    def nodes(self) -> int:
        return math.ceil(self.endpoints / self.gpus_per_node)

    @property
    def nodes_per_leaf(self) -> int:
        """Nodes whose rail-aligned traffic stays on one leaf: a rail group when rail-optimised, a rack otherwise."""
        if self.rail_optimized:
            return self.endpoints_per_leaf
        return max(1, self.endpoints_per_leaf // self.gpus_per_node)

    def leaf_of(self, gpu: npt.ArrayLike) -> IntArray:
        """Leaf (per plane) of each GPU id."""
        g = np.asarray(gpu, dtype=np.int64)
        nd, r = np.divmod(g, self.gpus_per_node)
        if self.tiers == 1:
            return np.zeros_like(g)
        if self.rail_optimized:
            return (nd // self.endpoints_per_leaf) * self.gpus_per_node + r
        return nd // self.nodes_per_leaf

    def pod_of_leaf(self, leaf: npt.ArrayLike) -> IntArray:
        return np.asarray(leaf, dtype=np.int64) // self.leaves_per_pod

    def endpoints_on_leaf(self) -> IntArray:
        return np.bincount(self.leaf_of(np.arange(self.endpoints)), minlength=self.leaves)

    # ------------------------------------------------------------------ counts
    @property
    def spines(self) -> int:
        """Spines per plane."""
        if self.tiers == 1:
            return 0
        return self.spines_per_pod * (self.pods if self.tiers == 3 else 1)

    @property
    def cores(self) -> int:
        return self.spines_per_pod * self.cores_per_group if self.tiers == 3 else 0

    def spine_uplinks(self) -> IntArray:
        """Up-ports used on each spine, shape (pods, spines_per_pod): one per leaf link below it (3-tier)."""
        if self.tiers < 3:
            return np.zeros((0, 0), dtype=np.int64)
        per_pod = np.bincount(self.pod_of_leaf(np.arange(self.leaves)), minlength=self.pods)
        s, u = self.spines_per_pod, self.uplinks_per_leaf
        per_leaf = u // s + (np.arange(s) < u % s)  # leaf uplink p goes to spine p mod s
        down = per_pod[:, None] * per_leaf[None, :]
        return np.asarray(np.ceil(down / self.spine_oversubscription - 1e-9), dtype=np.int64)

    @property
    def switches_per_tier(self) -> dict[str, int]:
        """Switches per tier, all planes."""
        counts = (self.leaves, self.spines, self.cores)[: self.tiers]
        return {TIER_NAMES[i]: c * self.planes for i, c in enumerate(counts)}

    @property
    def switches(self) -> int:
        return sum(self.switches_per_tier.values())

    @property
    def links_per_tier(self) -> dict[str, int]:
        """Logical links per tier (at the link speed), all planes: endpoint–leaf, leaf–spine, spine–core."""
        out = {"endpoint-leaf": self.endpoints * self.ports_per_endpoint * self.planes}
        if self.tiers >= 2:
            out["leaf-spine"] = self.leaves * self.uplinks_per_leaf * self.planes
        if self.tiers >= 3:
            out["spine-core"] = int(self.spine_uplinks().sum()) * self.planes
        return out

    @property
    def bisection_bytes_per_s(self) -> float:
        """Bisection bandwidth, one direction, all planes: the least of each tier's capacity across a halving cut."""
        cands = [self.endpoints / 2 * self.endpoint_bandwidth]
        if self.tiers >= 2 and self.leaves > 1:
            cands.append(self.leaves * self.uplinks_per_leaf * self.link_bandwidth / 2)
        if self.tiers >= 3 and self.pods > 1:
            cands.append(float(self.spine_uplinks().sum()) * self.link_bandwidth / 2)
        return min(cands) * self.planes

    def per_tier(self) -> list[dict[str, Any]]:
        """Each tier: switch, radix (at the link speed), switches (all planes), ports down and up per switch,
        and its oversubscription (down:up)."""
        rows: list[dict[str, Any]] = []
        sw = self.switches_per_tier
        down_leaf = self.endpoints_per_leaf * self.ports_per_endpoint
        rows.append(
            {
                "tier": "leaf",
                "switch": self.switch_name,
                "radix": self.radix,
                "switches": sw["leaf"],
                "down_ports": down_leaf,
                "up_ports": self.uplinks_per_leaf if self.tiers > 1 else 0,
                "oversubscription": down_leaf / self.uplinks_per_leaf if self.tiers > 1 else 1.0,
            }
        )
        if self.tiers >= 2:
            per_spine_down = min(self.leaves_per_pod, self.leaves) * math.ceil(
                self.uplinks_per_leaf / self.spines_per_pod
            )
            up = int(self.spine_uplinks().max()) if self.tiers == 3 else 0
            rows.append(
                {
                    "tier": "spine",
                    "switch": self.spine_switch_name or self.switch_name,
                    "radix": self.spine_radix or self.radix,
                    "switches": sw["spine"],
                    "down_ports": per_spine_down,
                    "up_ports": up,
                    "oversubscription": per_spine_down / up if up else 1.0,
                }
            )
        if self.tiers == 3:
            rows.append(
                {
                    "tier": "core",
                    "switch": self.core_switch_name or self.switch_name,
                    "radix": self.core_radix or self.radix,
                    "switches": sw["core"],
                    "down_ports": int(self.spine_uplinks().sum()) // max(1, self.cores),
                    "up_ports": 0,
                    "oversubscription": 1.0,
                }
            )
        return rows

    def max_endpoints_for_tiers(self) -> dict[int, int]:
        """The largest cluster (GPUs) each tier count reaches with this switch, oversubscription and NIC speed."""
        return {t: max_endpoints(self.radix, t, self.oversubscription, self.ports_per_endpoint) for t in (1, 2, 3)}

    # ------------------------------------------------------------------ graph
    def graph(self) -> FabricGraph:
        """The compact graph of one plane (built once, cached)."""
        if "graph" not in self._cache:
            self._cache["graph"] = _build_graph(self)
        g: FabricGraph = self._cache["graph"]
        return g

    def to_dict(self) -> dict[str, Any]:
        su = self.scale_up
        return {
            "endpoints": self.endpoints,
            "tiers": self.tiers,
            "radix": self.radix,
            "switch": self.switch_name,
            "link_bytes_per_s": self.link_bandwidth,
            "endpoint_bytes_per_s": self.endpoint_bandwidth,
            "planes": self.planes,
            "rail_optimized": self.rail_optimized,
            "oversubscription": self.oversubscription,
            "endpoints_per_leaf": self.endpoints_per_leaf,
            "uplinks_per_leaf": self.uplinks_per_leaf,
            "nodes_per_leaf": self.nodes_per_leaf,
            "leaves_per_pod": self.leaves_per_pod,
            "pods": self.pods,
            "switches": {**self.switches_per_tier, "total": self.switches},
            "links": self.links_per_tier,
            "bisection_bytes_per_s": self.bisection_bytes_per_s,
            "max_accelerators_for_tiers": {str(k): v for k, v in self.max_endpoints_for_tiers().items()},
            "gpus_per_leaf": self.endpoints_per_leaf,
            "gpus_per_pod": self.endpoints_per_leaf
            * self.leaves_per_pod
            // (self.gpus_per_node if self.rail_optimized else 1)
            if self.tiers == 3
            else self.endpoints,
            "per_tier": self.per_tier(),
            "scale_up": None
            if su is None
            else {
                "domain_size": su.size,
                "domains": su.count,
                "bytes_per_s_per_gpu": su.bandwidth_per_gpu,
                "supernode": su.supernode,
                "bisection_bytes_per_s": su.bisection_bytes_per_s,
            },
        }


def fat_tree(
    endpoints: int,
    radix: int,
    tiers: int,
    oversubscription: float = 1.0,
    rails: int = 1,
    planes: int = 1,
    port_bandwidth: float = 50e9,
    *,
    endpoint_bandwidth: float | None = None,
    gpus_per_node: int | None = None,
    endpoints_per_leaf: int | None = None,
    switch_name: str | None = None,
    scale_up: ScaleUpDomains | None = None,
    spine_radix: int | None = None,
    core_radix: int | None = None,
    spine_oversubscription: float = 1.0,
    leaves_per_pod: int | None = None,
    spine_switch_name: str | None = None,
    core_switch_name: str | None = None,
) -> Topology:
    """A fat-tree of ``tiers`` tiers (1 = single switch) for ``endpoints`` GPUs.

    Per tier: ``spine_radix`` / ``core_radix`` (ports at the link speed; default the leaf's ``radix``),
    ``spine_oversubscription`` (spine down:up, i.e. what the pods share of the core; Meta's 1:7 at the
    aggregation layer) and ``leaves_per_pod`` (default: every down-port of a spine takes one leaf).

    ``rails > 1`` makes it rail-optimised with ``rails`` GPUs per node (``gpus_per_node`` defaults to
    ``rails``); ``endpoint_bandwidth`` is the NIC port per plane (defaults to the switch port);
    ``endpoints_per_leaf`` pins the leaf population (else as many as the radix allows).

    >>> t = fat_tree(2048, 64, 2, port_bandwidth=50e9)
    >>> t.switches_per_tier, t.bisection_bytes_per_s / 1e12
    ({'leaf': 64, 'spine': 32}, 51.2)
    """
    if endpoints < 1 or radix < 2:
        raise SpecError(f"endpoints = {endpoints}, radix = {radix}: need endpoints >= 1 and radix >= 2")
    if tiers not in (1, 2, 3):
        raise SpecError(f"= {tiers}: the topology builder models 1, 2 or 3 tiers", field="fabric.tiers")
    gpn = gpus_per_node if gpus_per_node is not None else max(1, rails)
    rail_opt = rails > 1
    ep_bw = endpoint_bandwidth if endpoint_bandwidth is not None else port_bandwidth
    split, speed, k, ppe = _link_geometry(radix, port_bandwidth, ep_bw)
    common: dict[str, Any] = dict(
        endpoints=endpoints,
        gpus_per_node=gpn,
        tiers=tiers,
        radix=k,
        link_bandwidth=speed,
        endpoint_bandwidth=ep_bw,
        port_bandwidth=port_bandwidth,
        split=split,
        ports_per_endpoint=ppe,
        planes=planes,
        rail_optimized=rail_opt,
        oversubscription=float(oversubscription),
        switch_name=switch_name,
        scale_up=scale_up,
        spine_oversubscription=float(spine_oversubscription),
        spine_radix=spine_radix,
        core_radix=core_radix,
        spine_switch_name=spine_switch_name,
        core_switch_name=core_switch_name,
    )
    ks, kc = spine_radix or k, core_radix or k
    if spine_oversubscription < 1.0:
        raise SpecError(f"= {spine_oversubscription:g}: must be >= 1", field="fabric.spine_oversubscription")
    if tiers == 1:
        if endpoints * ppe > k:
            raise SpecError(
                f"= 1 puts {endpoints:,} endpoints on one {k}-port switch; use more tiers", field="fabric.tiers"
            )
        return Topology(
            endpoints_per_leaf=endpoints,
            uplinks_per_leaf=0,
            leaves=1,
            spines_per_pod=0,
            leaves_per_pod=1,
            pods=1,
            cores_per_group=0,
            **common,
        )
    h, u = _leaf_ports(k, oversubscription, ppe)
    if endpoints_per_leaf is not None:
        h = max(1, min(endpoints_per_leaf, h if h * ppe <= k else k // ppe))
        u = max(1, min(k - h * ppe, math.ceil(h * ppe / oversubscription - 1e-9)))
    if not rail_opt:
        h = max(gpn, (h // gpn) * gpn)  # whole nodes under a top-of-rack leaf
        if h * ppe + u > k:
            raise SpecError(f"gpus_per_node = {gpn} does not fit a {k}-port leaf", field="gpus_per_node")
    nodes = math.ceil(endpoints / gpn)
    leaves = math.ceil(nodes / h) * gpn if rail_opt else math.ceil(nodes / (h // gpn))
    if endpoints_per_leaf is None:  # spread the nodes evenly over the leaves and wire only the uplinks used
        h = math.ceil(nodes / (leaves // gpn)) if rail_opt else math.ceil(nodes / leaves) * gpn
        u = max(1, math.ceil(h * ppe / oversubscription - 1e-9))
    reach = max_endpoints(k, tiers, oversubscription, ppe) if endpoints_per_leaf is None else None
    if tiers == 2:
        if leaves > ks:
            raise SpecError(
                f"= 2 reaches at most {reach or k * h:,} endpoints with radix {k} (the cluster has "
                f"{endpoints:,}); use 3 tiers or a larger switch",
                field="fabric.tiers",
            )
        s = _upper_switches(leaves, u, ks)
        return Topology(
            endpoints_per_leaf=h,
            uplinks_per_leaf=u,
            leaves=leaves,
            spines_per_pod=s,
            leaves_per_pod=leaves,
            pods=1,
            cores_per_group=0,
            **common,
        )
    down_s = max(1, math.floor(ks * spine_oversubscription / (1.0 + spine_oversubscription) + 1e-9))
    lpp = leaves_per_pod or down_s  # half of a non-blocking spine's ports face down
    spines = _upper_switches(min(lpp, leaves), u, down_s)
    if min(lpp, leaves) * math.ceil(u / spines) > down_s:
        raise SpecError(
            f"= {lpp} leaves per pod need {min(lpp, leaves) * math.ceil(u / spines)} down-ports per spine; a "
            f"{ks}-port spine at {spine_oversubscription:g}:1 has {down_s}: use fewer GPUs per pod or a larger "
            "spine switch",
            field="fabric.gpus_per_pod",
        )
    pods = math.ceil(leaves / lpp)
    if pods > kc:
        raise SpecError(
            f"= 3 reaches at most {reach or kc * lpp * h:,} endpoints with radix {k} (the cluster has "
            f"{endpoints:,}); use a larger switch",
            field="fabric.tiers",
        )
    per_spine_up = math.ceil(min(lpp, leaves) * math.ceil(u / spines) / spine_oversubscription - 1e-9)
    cores = _upper_switches(pods, per_spine_up, kc)
    return Topology(
        endpoints_per_leaf=h,
        uplinks_per_leaf=u,
        leaves=leaves,
        spines_per_pod=spines,
        leaves_per_pod=lpp,
        pods=pods,
        cores_per_group=cores,
        **common,
    )


def default_switch(kind: str) -> Switch:
    """The catalog switch a fabric of ``kind`` uses when the cluster names none."""
    cat = catalog().switches
    for name in DEFAULT_SWITCHES.get(kind, ()):
        if name in cat:
            return cat[name]
    proto = _PROTOCOL.get(kind, kind)
    fits = [s for s in cat if s.protocol == proto]
    if not fits:
        raise CatalogError(f"no catalog switch speaks {proto} (fabric.kind = {kind!r}); name one in fabric.switch")
    return max(fits, key=lambda s: (s.radix * s.port_bandwidth, s.radix))


def _scale_up(cluster: ClusterSpec) -> ScaleUpDomains:
    d = cluster.scale_up.domain_size
    return ScaleUpDomains(
        size=d,
        count=cluster.accelerators // d,
        bandwidth_per_gpu=scale_up_bw(cluster),
        nodes_per_domain=d / cluster.gpus_per_node,
        supernode=d > cluster.gpus_per_node,
    )


def _reach(sw: Switch, tiers: int, oversubscription: float, endpoint_bw: float) -> int:
    _, _, k, ppe = _link_geometry(sw.radix, sw.port_bandwidth, endpoint_bw)
    return max_endpoints(k, tiers, oversubscription, ppe)


def _larger_switches(sw: Switch, need: int, oversubscription: float, endpoint_bw: float) -> str:
    """Catalog switches of the same protocol whose 3-tier fat-tree reaches ``need`` endpoints."""
    fits = [
        (s, _reach(s, 3, oversubscription, endpoint_bw))
        for s in catalog().switches
        if s.protocol == sw.protocol and s.name != sw.name
    ]
    ok = sorted((r, s.name) for s, r in fits if r >= need)
    if not ok:
        return "no catalog switch of this protocol reaches it with 3 tiers; split the cluster into fabrics"
    return "e.g. fabric.switch = " + ", ".join(f"{n} (3 tiers reach {r:,})" for r, n in ok[:3])


def build_topology(cluster: ClusterSpec, *, switch_override: Switch | None = None) -> Topology:
    """The fabric of ``cluster``: its switch (``fabric.switch`` or the default for its kind), tiers,
    oversubscription, rails and planes.

    Where the scenario does not set ``fabric.tiers``, the fewest tiers that reach the cluster are used.
    A fabric that cannot be built (the tiers set, or three tiers of the switch, cannot reach the
    cluster) raises :class:`~wanka.errors.SpecError` naming the limit and the fix; nothing falls back.
    """
    f = cluster.fabric
    if switch_override is not None:
        sw = switch_override
    elif f.switch is not None:
        try:
            sw = switch(f.switch)
        except CatalogError as e:
            raise CatalogError(f"cluster.fabric.switch = {f.switch!r}: {e}") from None
    else:
        sw = default_switch(f.kind)
    per_plane = scale_out_bw(cluster) / f.planes
    gpn = cluster.gpus_per_node
    n = cluster.accelerators
    o = f.oversubscription
    if "tiers" in f.model_fields_set:
        tiers = f.tiers
    else:  # fewest tiers that reach the cluster
        tiers = next((t for t in (1, 2, 3) if _reach(sw, t, o, per_plane) >= n), 3)
    uniform = f.spine_switch is None and f.core_switch is None and f.gpus_per_pod is None
    if uniform and tiers in (1, 2, 3) and _reach(sw, 3, o, per_plane) < n:
        raise SpecError(
            f"= {sw.name}: a fat-tree of {sw.radix}-port switches reaches at most {_reach(sw, 3, o, per_plane):,} "
            f"GPUs with 3 tiers at {o:g}:1 (the cluster has {n:,}); use a larger switch "
            f"({_larger_switches(sw, n, o, per_plane)}) [{cluster.name}]",
            field="cluster.fabric.switch",
        )
    link_speed = _link_geometry(sw.radix, sw.port_bandwidth, per_plane)[1]
    tier_sw: dict[str, Switch | None] = {"spine": None, "core": None}
    for tier, name in (("spine", f.spine_switch), ("core", f.core_switch)):
        if name is not None:
            try:
                tier_sw[tier] = switch(name)
            except CatalogError as e:
                raise CatalogError(f"cluster.fabric.{tier}_switch = {name!r}: {e}") from None

    def radix_at(s: Switch | None) -> int | None:  # ports at the fabric's link speed (breakout)
        return None if s is None else s.radix * max(1, math.floor(s.port_bandwidth / link_speed + 1e-9))

    h = f.gpus_per_leaf
    lpp = None
    if f.gpus_per_pod is not None:
        if h is None:
            raise SpecError("gpus_per_pod needs gpus_per_leaf", field="cluster.fabric.gpus_per_leaf")
        lpp = max(1, f.gpus_per_pod // h)  # every leaf holds h GPUs, rail-optimised or not
    try:
        return fat_tree(
            n,
            sw.radix,
            tiers,
            o,
            rails=gpn if f.rail_optimized else 1,
            planes=f.planes,
            port_bandwidth=sw.port_bandwidth,
            endpoint_bandwidth=per_plane,
            gpus_per_node=gpn,
            endpoints_per_leaf=h,
            switch_name=sw.name,
            scale_up=_scale_up(cluster),
            spine_radix=radix_at(tier_sw["spine"]),
            core_radix=radix_at(tier_sw["core"]),
            spine_oversubscription=f.spine_oversubscription,
            leaves_per_pod=lpp,
            spine_switch_name=None if tier_sw["spine"] is None else tier_sw["spine"].name,
            core_switch_name=None if tier_sw["core"] is None else tier_sw["core"].name,
        )
    except SpecError as e:
        raise SpecError(f"{e.detail} [{cluster.name}, switch {sw.name}]", field=f"cluster.{e.field}") from None


def _build_graph(t: Topology) -> FabricGraph:
    e, nl = t.endpoints, t.leaves
    ns, nc = t.spines, t.cores
    leaf0, spine0, core0 = e, e + nl, e + nl + ns
    tier = np.concatenate(
        [np.zeros(e, np.int8), np.full(nl, 1, np.int8), np.full(ns, 2, np.int8), np.full(nc, 3, np.int8)]
    )
    src = [np.arange(e, dtype=np.int64)]
    dst = [leaf0 + t.leaf_of(np.arange(e))]
    cap = [np.full(e, t.endpoint_bandwidth)]
    ltier = [np.zeros(e, np.int8)]
    if t.tiers >= 2:
        u, s = t.uplinks_per_leaf, t.spines_per_pod
        leaf = np.repeat(np.arange(nl, dtype=np.int64), u)
        port = np.tile(np.arange(u, dtype=np.int64), nl)
        pod = leaf // t.leaves_per_pod if t.tiers == 3 else np.zeros_like(leaf)
        src.append(leaf0 + leaf)
        dst.append(spine0 + pod * s + port % s)
        cap.append(np.full(leaf.size, t.link_bandwidth))
        ltier.append(np.ones(leaf.size, np.int8))
    if t.tiers == 3:
        s, c = t.spines_per_pod, t.cores_per_group
        per_spine = t.spine_uplinks().ravel()  # spines in id order (pod-major)
        spine = np.repeat(np.arange(ns, dtype=np.int64), per_spine)
        starts = np.repeat(np.cumsum(per_spine) - per_spine, per_spine)
        q = np.arange(spine.size, dtype=np.int64) - starts
        src.append(spine0 + spine)
        dst.append(core0 + (spine % s) * c + q % c)
        cap.append(np.full(spine.size, t.link_bandwidth))
        ltier.append(np.full(spine.size, 2, np.int8))
    a, b = np.concatenate(src), np.concatenate(dst)
    nodes = tier.size
    ends = np.concatenate([a, b])
    other = np.concatenate([b, a])
    link = np.concatenate([np.arange(a.size), np.arange(a.size)])
    order = np.argsort(ends, kind="stable")
    indptr = np.zeros(nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(ends, minlength=nodes), out=indptr[1:])
    return FabricGraph(
        node_tier=tier,
        link_src=a,
        link_dst=b,
        link_capacity=np.concatenate(cap),
        link_tier=np.concatenate(ltier),
        indptr=indptr,
        indices=other[order],
        link_of=link[order],
    )
