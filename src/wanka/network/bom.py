"""Bill of materials of a scale-out fabric: switches per tier, links, optics and cables, and their power.

Cabling rule (a layout assumption, not a datasheet fact; change it here):

* **endpoint–leaf**: a top-of-rack leaf (fabric not rail-optimised) sits in the servers' rack, so the
  link is a passive copper DAC (reach >= ``IN_RACK_REACH_M``); a rail-optimised leaf serves nodes in
  several racks (end of row), so the link is optical (reach >= ``ENDPOINT_LEAF_REACH_M``) with a
  transceiver at the NIC and one at the switch;
* **leaf–spine** and **spine–core** links are optical at both ends (reach >= ``LEAF_SPINE_REACH_M``,
  ``SPINE_CORE_REACH_M``), one fibre cable per link.

A module may carry several links (an 800G module in an 800G port split 2 x 400G); at a switch port the
catalog module with the lowest power per link that fits the port and reaches far enough is chosen, at a
NIC a module of the NIC port's speed. Where the catalog lists a switch at its logical port speed (QM9700
as 64 x 400G), modules are counted per logical port: a twin-port cage counts as two single-port modules.
Switch power is the catalog figure without optics (``Switch.power_w``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wanka.catalog import Optic, catalog
from wanka.network.topology import Topology, build_topology
from wanka.spec.cluster import ClusterSpec
from wanka.units import GIGA

__all__ = ["BillOfMaterials", "OpticsLine", "bill_of_materials"]

IN_RACK_REACH_M = 2.0
ENDPOINT_LEAF_REACH_M = 30.0
LEAF_SPINE_REACH_M = 50.0
SPINE_CORE_REACH_M = 100.0


@dataclass(frozen=True)
class OpticsLine:
    """Modules (or copper cables) of one kind at one end of one tier's links."""

    where: str  # e.g. "endpoint-leaf, NIC end"
    name: str | None  # catalog entry; None when the catalog has nothing that fits (then 0 W)
    kind: str  # optical, aoc, dac, acc
    count: int
    power_w: float  # all of them


@dataclass(frozen=True)
class BillOfMaterials:
    """What the fabric of a cluster is made of, and what it draws (W)."""

    cluster: str
    switch: str | None
    tiers: int
    planes: int
    switches_per_tier: dict[str, int]
    switch_count: int
    links_per_tier: dict[str, int]
    optics_lines: tuple[OpticsLine, ...]
    cables: dict[str, int]  # fibre / copper cable count
    switch_power_w: float
    optics_power_w: float
    bisection_bytes_per_s: float
    max_accelerators_for_tiers: dict[int, int]
    topology: Topology
    assumptions: tuple[str, ...] = ()

    @property
    def network_power_w(self) -> float:
        return self.switch_power_w + self.optics_power_w

    @property
    def optics_by_type(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for line in self.optics_lines:
            key = line.name or f"uncatalogued {line.kind}"
            out[key] = out.get(key, 0) + line.count
        return out

    @property
    def optics_count(self) -> int:
        """Transceivers and active cable ends (passive copper not counted)."""
        return sum(x.count for x in self.optics_lines if x.kind != "dac")

    def to_dict(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "switch": self.switch,
            "tiers": self.tiers,
            "planes": self.planes,
            "switches": {**self.switches_per_tier, "total": self.switch_count},
            "links": self.links_per_tier,
            "optics": {**self.optics_by_type, "total": self.optics_count},
            "optics_detail": [
                {"where": x.where, "name": x.name, "kind": x.kind, "count": x.count, "power_w": x.power_w}
                for x in self.optics_lines
            ],
            "cables": self.cables,
            "switch_power_w": self.switch_power_w,
            "optics_power_w": self.optics_power_w,
            "network_power_w": self.network_power_w,
            "bisection_bytes_per_s": self.bisection_bytes_per_s,
            "max_accelerators_for_tiers": {str(k): v for k, v in self.max_accelerators_for_tiers.items()},
            "topology": self.topology.to_dict(),
            "assumptions": list(self.assumptions),
        }


def _pick(
    optics: Sequence[Optic], speed: float, reach: float, kinds: tuple[str, ...], cage: float
) -> tuple[Optic | None, int]:
    """(module, links per module): lowest power per link among modules of ``kinds`` at least as fast
    as a link and no faster than the ``cage`` (port) it sits in, and long enough; the longest-reach one
    when none reaches."""
    fits = []
    for o in optics:
        if o.kind not in kinds or not speed * (1 - 1e-9) <= o.bandwidth <= cage * (1 + 1e-9):
            continue
        per = round(o.bandwidth / speed)
        if abs(per * speed - o.bandwidth) > 1e-6 * o.bandwidth:
            continue
        fits.append((o, per))
    if not fits:
        return None, 1
    long_enough = [f for f in fits if f[0].reach_m >= reach]
    if long_enough:
        return min(long_enough, key=lambda f: (f[0].power_w / f[1], f[0].reach_m))
    return max(fits, key=lambda f: (f[0].reach_m, -f[0].power_w / f[1]))


def bill_of_materials(
    cluster: ClusterSpec, *, topology: Topology | None = None, optics: Sequence[Optic] | None = None
) -> BillOfMaterials:
    """Switches, links, optics, cables and power of ``cluster``'s scale-out fabric.

    ``topology`` and ``optics`` (candidate modules) default to :func:`build_topology` and the catalog.
    """
    from wanka.catalog import switch as catalog_switch

    t = topology if topology is not None else build_topology(cluster)
    mods: Sequence[Optic] = list(optics) if optics is not None else list(catalog().optics)
    notes: list[str] = []
    lines: list[OpticsLine] = []
    cables = {"fibre": 0, "copper": 0}
    links = t.links_per_tier
    gbps = t.link_bandwidth * 8 / GIGA

    def add(where: str, n_ends: int, speed: float, reach: float, kinds: tuple[str, ...], cage: float) -> None:
        o, per = _pick(mods, speed, reach, kinds, cage)
        count = math.ceil(n_ends / per)
        if o is None:
            notes.append(
                f"no catalog module of {'/'.join(kinds)} at {speed * 8 / GIGA:g} Gb/s for {where}: counted, not powered"
            )
        elif o.reach_m < reach:
            notes.append(f"{where}: {o.name} reaches {o.reach_m:g} m, the layout assumes {reach:g} m")
        lines.append(
            OpticsLine(
                where, o.name if o else None, o.kind if o else kinds[0], count, count * (o.power_w if o else 0.0)
            )
        )

    ep_links = links["endpoint-leaf"]
    if not t.rail_optimized:
        # in-rack copper: one cable per link (a splitter cable serves several NICs); power at both ends
        o, per = _pick(mods, t.link_bandwidth, IN_RACK_REACH_M, ("dac", "acc"), t.port_bandwidth)
        n = math.ceil(ep_links / per)
        cables["copper"] += n
        if o is None:
            notes.append(f"no catalog copper cable at {gbps:g} Gb/s: endpoint-leaf cables counted, not powered")
        lines.append(
            OpticsLine(
                "endpoint-leaf, in-rack copper",
                o.name if o else None,
                o.kind if o else "dac",
                n,
                2 * n * (o.power_w if o else 0.0),
            )
        )
    else:
        cables["fibre"] += ep_links
        add(
            "endpoint-leaf, NIC end",
            t.endpoints * t.planes,
            t.endpoint_bandwidth,
            ENDPOINT_LEAF_REACH_M,
            ("optical", "aoc"),
            t.endpoint_bandwidth,
        )
        add(
            "endpoint-leaf, switch end",
            ep_links,
            t.link_bandwidth,
            ENDPOINT_LEAF_REACH_M,
            ("optical", "aoc"),
            t.port_bandwidth,
        )
    for tier, reach in (("leaf-spine", LEAF_SPINE_REACH_M), ("spine-core", SPINE_CORE_REACH_M)):
        if tier in links:
            cables["fibre"] += links[tier]
            add(f"{tier}, both ends", 2 * links[tier], t.link_bandwidth, reach, ("optical", "aoc"), t.port_bandwidth)
    sw_w = catalog_switch(t.switch_name).power_w if t.switch_name is not None else 0.0
    tier_w = {"leaf": sw_w, "spine": sw_w, "core": sw_w}
    for tier, name in (("spine", t.spine_switch_name), ("core", t.core_switch_name)):
        if name is not None:
            tier_w[tier] = catalog_switch(name).power_w
    if t.switch_name is None:
        notes.append("no catalog switch named: switch power not counted")
    notes.append(
        "cabling rule: top-of-rack leaf -> in-rack copper; rail-optimised leaf -> optics at both ends; "
        "switch-to-switch links -> optics at both ends"
    )
    return BillOfMaterials(
        cluster=cluster.name,
        switch=t.switch_name,
        tiers=t.tiers,
        planes=t.planes,
        switches_per_tier=t.switches_per_tier,
        switch_count=t.switches,
        links_per_tier=links,
        optics_lines=tuple(lines),
        cables=cables,
        switch_power_w=sum(c * tier_w[tier] for tier, c in t.switches_per_tier.items()),
        optics_power_w=sum(x.power_w for x in lines),
        bisection_bytes_per_s=t.bisection_bytes_per_s,
        max_accelerators_for_tiers=t.max_endpoints_for_tiers(),
        topology=t,
        assumptions=tuple(notes),
    )
