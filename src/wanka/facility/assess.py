"""The facility assessment of a scenario: IT and facility power, racks, energy, cost and CO2.

IT power at the operating point = the job's nodes at utilisation ``u`` + the other nodes idle + the
networks + the storage servers (network and storage draw is taken as load-independent). Facility
power = IT × PUE (The Green Grid, PUE = facility energy / IT energy). The campaign's energy is the
job's IT power — its nodes, plus its GPU share of network and storage — × wall clock × PUE; cost =
kWh × price; CO2 = kWh × grid intensity. Capex only from ``facility.hardware_usd_per_gpu``.

Wall clock, in order: the ``wall_clock_s`` argument (the operations layer's campaign, restarts
included), ``scenario.campaign_days``, a first-order time to train (:mod:`wanka.facility.energy`)
when the scenario has a training job, else none (no energy figures).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from wanka.catalog import accelerator
from wanka.errors import SpecError
from wanka.facility.energy import first_order_time_to_train_s
from wanka.facility.facts import facts
from wanka.facility.network_power import NetworkPower, network_power
from wanka.facility.power import NodePower, accelerator_power_w, check_utilization, node_power
from wanka.facility.racks import RackPlan, rack_plan
from wanka.spec import Scenario
from wanka.storage import cluster_node, storage_system

__all__ = ["FacilityResult", "assess", "facility_assumptions"]

J_PER_KWH = 3.6e6


@dataclass(frozen=True)
class FacilityResult:
    """Power (W), energy (J), cost (USD) and CO2 (kg) of a scenario's cluster and job."""

    scenario: str
    cooling: str
    pue: float
    utilization: float
    accelerators: int
    job_gpus: int
    it_power_w: float
    it_power_peak_w: float
    facility_power_w: float
    accelerators_w: float
    cpus_w: float
    node_other_w: float
    network_w: float
    storage_w: float
    cooling_overhead_w: float
    node: NodePower
    node_peak_w: float
    network: NetworkPower
    rack: RackPlan
    rack_power_avg_w: float
    wall_clock_s: float | None
    wall_clock_from: str | None
    it_energy_j: float | None
    energy_j: float | None
    accelerator_energy_j: float | None
    energy_cost: float | None  # in ``currency``
    co2_kg: float | None
    capex_usd: float | None
    assumptions: tuple[str, ...] = ()
    currency: str = "USD"
    price_per_kwh: float = 0.0
    grid_kgco2_per_kwh: float = 0.0
    hfu: float | None = None  # the utilisation power follows (None: MFU used)
    power_swing_w: float = 0.0
    gpu_hours: float | None = None
    model_card_energy_j: float | None = None  # GPU-hours × TDP
    model_card_co2_kg: float | None = None

    @property
    def racks(self) -> int:
        return self.rack.racks

    @property
    def rack_power_w(self) -> float:
        return self.rack.rack_power_w

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(
            node=self.node.to_dict(),
            network=self.network.to_dict(),
            rack=self.rack.to_dict(),
            racks=self.racks,
            rack_power_w=self.rack_power_w,
            nodes_per_rack=self.rack.nodes_per_rack,
            rack_budget_w=self.rack.rack_budget_w,
            assumptions=list(self.assumptions),
        )
        return d


def _wall_clock(
    scenario: Scenario, wall_clock_s: float | None, u: float, given_from: str
) -> tuple[float | None, str | None]:
    if wall_clock_s is not None:
        if not (math.isfinite(wall_clock_s) and wall_clock_s >= 0):
            raise SpecError(f"= {wall_clock_s!r}: must be finite seconds ≥ 0", field="wall_clock_s")
        return float(wall_clock_s), given_from
    if scenario.campaign_days is not None:
        return scenario.campaign_days * 86400.0, "campaign_days"
    if scenario.training is not None and u > 0:
        return first_order_time_to_train_s(scenario, u), "first-order 6N·tokens/(GPUs·peak·u)"
    return None, None


def assess(
    scenario: Scenario,
    *,
    utilization: float | None = None,
    wall_clock_s: float | None = None,
    wall_clock_from: str = "given",
    hfu: float | None = None,
) -> FacilityResult:
    """Power, racks, energy, cost and CO2 of ``scenario`` (see module docstring).

    ``wall_clock_s``: the campaign's wall clock (pass the operations layer's, failures included);
    ``wall_clock_from`` says where it came from in the result.

    ``utilization``: compute utilisation (MFU) of the job's accelerators; default
    ``scenario.facility.gpu_utilization``, else the typical value in ``facility.yaml``.
    ``hfu``: hardware-FLOP utilisation (recompute included), which sets the accelerators' draw;
    default ``utilization``.
    """
    f = scenario.facility
    ff = facts()
    cool = ff.cooling_type(f.cooling)
    notes: list[str] = []
    if utilization is not None:
        u = check_utilization(utilization, "utilization")
    elif f.gpu_utilization is not None:
        u = check_utilization(f.gpu_utilization, "facility.gpu_utilization")
    else:
        u = ff.power_curve.typical_utilization
        notes.append(f"utilisation {u:.0%} MFU: typical ({ff.power_curve.source.split(';')[-1].strip()})")
    pu = u if hfu is None else check_utilization(hfu, "hfu")
    if hfu is None:
        notes.append(f"power at {u:.0%} utilisation (MFU; the hardware-FLOP utilisation was not given)")
    tariff = ff.tariff(f.currency)
    if f.electricity_price_per_kwh is not None:
        price = f.electricity_price_per_kwh
    elif f.currency == "USD" and "electricity_usd_per_kwh" in f.model_fields_set:
        price = f.electricity_usd_per_kwh
    else:
        price = tariff.price_per_kwh
        notes.append(f"electricity {price:g} {f.currency}/kWh: not given ({tariff.source.split('.')[0]})")
    grid = f.grid_kgco2_per_kwh if f.grid_kgco2_per_kwh is not None else tariff.grid_kgco2_per_kwh
    if f.grid_kgco2_per_kwh is None:
        notes.append(f"grid {grid:g} kg CO2/kWh: not given; the {f.currency} default ({tariff.source.split('. ')[-1]})")
    pue = f.pue if f.pue is not None else cool.pue
    budget = (f.rack_power_kw if f.rack_power_kw is not None else cool.rack_power_kw) * 1e3
    c = scenario.cluster
    acc = accelerator(c.accelerator)
    nd = cluster_node(c)
    if nd.gpus != c.gpus_per_node:
        raise SpecError(
            f"= {c.gpus_per_node}: node {nd.name} holds {nd.gpus} accelerators", field="cluster.gpus_per_node"
        )
    if accelerator(nd.accelerator).name != acc.name:
        notes.append(f"node {nd.name} is built for {nd.accelerator}; its host parts are used with {acc.name}")
    g = c.gpus_per_node
    job_gpus = scenario.gpus
    job_nodes = math.ceil(job_gpus / g)
    idle_nodes = c.nodes - job_nodes
    run, idle, peak = node_power(nd, acc, pu), node_power(nd, acc, 0.0), node_power(nd, acc, 1.0)
    net = network_power(c)
    stor = storage_system(c)
    stor_w = stor.power_w
    notes += [a for a in stor.assumptions if a.startswith(("storage servers:", "storage: a shared"))]
    shared = net.total_w + stor_w
    it = job_nodes * run.total_w + idle_nodes * idle.total_w + shared
    it_peak = c.nodes * peak.total_w + shared
    rack = rack_plan(c, f, node_peak_w=peak.total_w, budget_w=budget, scale_up_peak_w=net.scale_up_w)
    tray_share = net.scale_up_w / c.nodes
    wall, wall_from = _wall_clock(scenario, wall_clock_s, u, wall_clock_from)
    it_e = e = acc_e = cost = co2 = gh = mc_e = mc_co2 = None
    if wall is not None:
        job_it_w = job_nodes * run.total_w + shared * job_gpus / c.accelerators
        it_e = job_it_w * wall
        e = it_e * pue
        acc_e = job_gpus * accelerator_power_w(acc, pu) * wall
        cost = e / J_PER_KWH * price
        co2 = e / J_PER_KWH * grid
        gh = job_gpus * wall / 3600.0
        mc_e = gh * acc.tdp_w * 3600.0
        mc_co2 = mc_e / J_PER_KWH * grid
    capex = f.hardware_usd_per_gpu * c.accelerators if f.hardware_usd_per_gpu is not None else None
    notes += list(net.assumptions) + list(rack.assumptions)
    if f.pue is None:
        notes.append(f"PUE {pue}: typical for {f.cooling} cooling (facility.yaml: {cool.source})")  # whole, never cut
    return FacilityResult(
        scenario=scenario.name,
        cooling=f.cooling,
        pue=pue,
        utilization=u,
        accelerators=c.accelerators,
        job_gpus=job_gpus,
        it_power_w=it,
        it_power_peak_w=it_peak,
        facility_power_w=it * pue,
        accelerators_w=job_nodes * run.accelerators_w + idle_nodes * idle.accelerators_w,
        cpus_w=job_nodes * run.cpus_w + idle_nodes * idle.cpus_w,
        node_other_w=job_nodes * run.other_w + idle_nodes * idle.other_w,
        network_w=net.total_w,
        storage_w=stor_w,
        cooling_overhead_w=it * (pue - 1.0),
        node=run,
        node_peak_w=peak.total_w,
        network=net,
        rack=rack,
        rack_power_avg_w=rack.nodes_per_rack * (run.total_w + tray_share),
        wall_clock_s=wall,
        wall_clock_from=wall_from,
        it_energy_j=it_e,
        energy_j=e,
        accelerator_energy_j=acc_e,
        energy_cost=cost,
        co2_kg=co2,
        capex_usd=capex,
        assumptions=tuple(dict.fromkeys(notes)),
        currency=f.currency,
        price_per_kwh=price,
        grid_kgco2_per_kwh=grid,
        hfu=hfu,
        power_swing_w=job_nodes * (run.total_w - idle.total_w),
        gpu_hours=gh,
        model_card_energy_j=mc_e,
        model_card_co2_kg=mc_co2,
    )


def facility_assumptions(scenario: Scenario) -> tuple[str, ...]:
    """The facility defaults in use (PUE, price, currency, grid factor, storage sizing and share)."""
    f = scenario.facility
    ff = facts()
    notes: list[str] = []
    if f.pue is None:
        notes.append(f"PUE {ff.cooling_type(f.cooling).pue}: typical for {f.cooling} cooling (facility.pue)")
    tariff = ff.tariff(f.currency)
    price_given = f.electricity_price_per_kwh is not None or (
        f.currency == "USD" and "electricity_usd_per_kwh" in f.model_fields_set
    )
    if not price_given:
        notes.append(
            f"electricity {tariff.price_per_kwh:g} {f.currency}/kWh: not given (facility.electricity_price_per_kwh)"
        )
    if f.grid_kgco2_per_kwh is None:
        notes.append(
            f"grid {tariff.grid_kgco2_per_kwh:g} kg CO2/kWh: the {f.currency} default (facility.grid_kgco2_per_kwh)"
        )
    stor = storage_system(scenario.cluster)
    notes += [a for a in stor.assumptions if a.startswith(("storage servers:", "storage: a shared"))]
    return tuple(notes)
