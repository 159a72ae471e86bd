"""Power of the networks between nodes: scale-out switches and optics, scale-up switch trays.

Scale-out: taken from the fabric layer's bill of materials (``wanka.network.bom.bill_of_materials``);
for a fabric the builder cannot wire, a per-GPU-port estimate for a folded-Clos (fat-tree) of ``T``
tiers with leaf oversubscription ``o``:

    switch ports per GPU = e · (1 + 2(T−1)/o)        links per GPU = e · (1 + (T−1)/o)

(each GPU's NIC takes one leaf port; every tier crossing above the leaf takes two ports and one link,
thinned by ``o``; Leiserson 1985, Al-Fares et al. 2008), with ``e = nic_gbps_per_gpu / port_gbps``;
power = ports × (switch power / radix) + links × ``optics_per_link`` × optic power. Switch and
optic come from the catalog (``fabric.switch``, else the catalog switch of the fabric's protocol
with the port speed closest to the NIC; the optical module of that speed), else
``facility.yaml: network_fallback``.

Scale-up: domains larger than a node (GB200 NVL72, CloudMatrix 384) have switch trays outside the
compute nodes: ``ceil(GPUs · scale-up bandwidth / (radix · port bandwidth))`` catalog ``nvlink``
switches. Inside-node NVSwitches are in the node's ``other_w``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from wanka.catalog import Optic, Switch, accelerator, catalog, switch
from wanka.errors import CatalogError, WankaError
from wanka.facility.facts import facts
from wanka.network.bom import bill_of_materials
from wanka.spec import ClusterSpec

__all__ = ["NetworkPower", "network_power"]


@dataclass(frozen=True)
class NetworkPower:
    switches_w: float  # scale-out switches, without optics
    optics_w: float
    scale_up_w: float  # switch trays of multi-node scale-up domains
    switches: float  # scale-out switch count (estimate may be fractional before rounding)
    optics: float
    method: str  # "bom" or "per-port estimate"
    assumptions: tuple[str, ...] = ()

    @property
    def total_w(self) -> float:
        return self.switches_w + self.optics_w + self.scale_up_w

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["total_w"] = self.total_w
        d["assumptions"] = list(self.assumptions)
        return d


def _pick_switch(cluster: ClusterSpec) -> Switch | None:
    f = cluster.fabric
    if f.switch is not None:
        try:
            return switch(f.switch)
        except CatalogError as e:
            raise CatalogError(f"cluster.fabric.switch = {f.switch!r}: {e}") from None
    proto = "infiniband" if f.kind == "infiniband" else "ethernet"
    cands = [s for s in catalog().switches if s.protocol == proto]
    if not cands:
        return None
    rate = f.nic_gbps_per_gpu * 1e9 / 8
    return min(cands, key=lambda s: (abs(math.log(s.port_bandwidth / rate)), -s.radix, s.name))


def _pick_optic(port_bandwidth: float) -> Optic | None:
    cands = [o for o in catalog().optics if o.kind == "optical"]
    if not cands:
        return None
    return min(cands, key=lambda o: (abs(math.log(o.bandwidth / port_bandwidth)), o.power_w, o.name))


def _scale_up(cluster: ClusterSpec) -> tuple[float, list[str]]:
    d = cluster.scale_up.domain_size
    if d <= cluster.gpus_per_node:
        return 0.0, []
    trays = [s for s in catalog().switches if s.protocol == "nvlink"]
    if not trays:
        return 0.0, ["scale-up switch trays not counted: no nvlink switch in the catalog"]
    tray = min(trays, key=lambda s: s.name)
    given = cluster.scale_up.gbytes_per_s_per_direction
    per_gpu = given * 1e9 if given else accelerator(cluster.accelerator).scale_up_bandwidth
    domains = math.ceil(cluster.accelerators / d)
    per_domain = math.ceil(d * per_gpu / (tray.radix * tray.port_bandwidth))
    return domains * per_domain * tray.power_w, [f"scale-up: {per_domain} × {tray.name} per {d}-GPU domain"]


def _estimate(cluster: ClusterSpec) -> tuple[float, float, float, float, list[str]]:
    f = cluster.fabric
    fb = facts().network_fallback
    notes: list[str] = []
    sw = _pick_switch(cluster)
    if sw is not None:
        port_bw, per_port_w, radix = sw.port_bandwidth, sw.power_w / sw.radix, sw.radix
        notes.append(f"scale-out switch: {sw.name} ({sw.power_w:.0f} W / {sw.radix} ports)")
    else:
        port_bw, per_port_w, radix = 400e9 / 8, fb.switch_w_per_400g_port, 64
        notes.append(f"scale-out switch: {fb.switch_w_per_400g_port} W per 400G port (facility.yaml)")
    e = f.nic_gbps_per_gpu * 1e9 / 8 / port_bw
    up = (f.tiers - 1) / f.oversubscription
    gpus = cluster.accelerators
    ports = gpus * e * (1 + 2 * up)
    links = gpus * e * (1 + up)
    opt = _pick_optic(port_bw)
    optic_w = opt.power_w if opt is not None else fb.optic_w_per_400g * port_bw / (400e9 / 8)
    n_optics = links * fb.optics_per_link
    notes.append(f"optics: {fb.optics_per_link} per link, {opt.name if opt else 'fallback'} at {optic_w:g} W")
    return ports * per_port_w, n_optics * optic_w, math.ceil(ports / radix), n_optics, notes


def network_power(cluster: ClusterSpec) -> NetworkPower:
    """Scale-out and scale-up network power of the whole ``cluster`` (W)."""
    scale_up_w, notes = _scale_up(cluster)
    try:
        bom = bill_of_materials(cluster)
    except WankaError as e:  # a fabric the builder cannot wire (e.g. beyond its tiers)
        notes.append(f"fabric bill of materials unavailable ({e}); per-port estimate used")
    else:
        return NetworkPower(
            bom.switch_power_w,
            bom.optics_power_w,
            scale_up_w,
            float(bom.switch_count),
            float(bom.optics_count),
            "bom",
            tuple(notes),
        )
    sw_w, op_w, n_sw, n_op, est_notes = _estimate(cluster)
    return NetworkPower(sw_w, op_w, scale_up_w, n_sw, n_op, "per-port estimate", tuple(notes + est_notes))
