"""``compare``: the same training job on several clusters, every layer's numbers side by side.

For each scenario: scale and peak compute (``wanka.infra``), MFU, step breakdown and 线性加速比
(``wanka.engine`` and :mod:`wanka.report.scaling`), failures, MTBF, checkpoints, ETTR and the
wall clock (``wanka.ops``, ``wanka.storage``), fabric tiers, switches and optics
(``wanka.network.bom``), power, racks, energy and cost (``wanka.facility``), and every assumption
the inputs rest on, with where it comes from.

The job: each preset's own (model, tokens, strategy), or with ``job=MODEL`` one model and token
budget on every cluster, its strategy picked per cluster (:mod:`wanka.report.picker`). Without
``job``, a "same job" block also puts the largest cluster's job on every other cluster. Campaigns
run until the job's tokens are trained (a preset's fixed ``campaign_days`` window is dropped).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from wanka.engine import BREAKDOWN_KEYS, StepResult, estimate_step
from wanka.errors import InfeasibleError, SpecError, WankaError
from wanka.report.picker import PickResult, pick_strategy
from wanka.report.scaling import ScalingResult, scaling_efficiency
from wanka.spec import Scenario, load_model, parse_scenario
from wanka.workload import parameter_count

__all__ = [
    "CHINCHILLA_TOKENS_PER_PARAM",
    "DEFAULT_BATCH_TOKENS",
    "Assumption",
    "ClusterReport",
    "Comparison",
    "SameJob",
    "compare",
    "move_job",
]

DAY = 86_400.0
CHINCHILLA_TOKENS_PER_PARAM = 20.0  # Hoffmann et al. 2022: compute-optimal D ~ 20 N
DEFAULT_BATCH_TOKENS = 16 * 2**20  # Llama 3 405B's final batch, 16M tokens (arXiv:2407.21783 §3.4.1)
MC_REPLICAS = 200  # modest: the mean ETTR's standard error is ~0.1 % at this size
SWEEP_REPLICAS = 60
SIZE_POINTS = 24


@dataclass(frozen=True)
class Assumption:
    """An input that is not published, and which layer or file states it."""

    origin: str  # preset | engine | ops | storage | network | facility | report
    text: str


@dataclass(frozen=True)
class SameJob:
    """Another cluster's job placed on this cluster (strategy picked here)."""

    source: str
    model: str
    tokens: float
    gpus: int
    strategy: dict[str, Any]
    mfu: float
    time_to_train_s: float
    wall_clock_s: float | None
    ettr: float | None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ClusterReport:
    """Every number compare shows for one cluster (SI units); sections are JSON-ready dicts."""

    name: str
    description: str
    scale: dict[str, Any]
    peak_flops: dict[str, float]
    job: dict[str, Any]
    efficiency: dict[str, Any]
    reliability: dict[str, Any]
    network: dict[str, Any]
    facility: dict[str, Any]
    series: dict[str, Any]
    same_job: SameJob | None
    assumptions: tuple[Assumption, ...]
    sources: tuple[str, ...]
    errors: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "scale": self.scale,
            "peak_flops": self.peak_flops,
            "job": self.job,
            "efficiency": self.efficiency,
            "reliability": self.reliability,
            "network": self.network,
            "facility": self.facility,
            "series": self.series,
            "same_job": None if self.same_job is None else self.same_job.to_dict(),
            "assumptions": [asdict(a) for a in self.assumptions],
            "sources": list(self.sources),
            "errors": dict(self.errors),
        }


@dataclass(frozen=True)
class Comparison:
    """The clusters side by side, with the job rule and the definitions used."""

    job_mode: str  # "own" (each preset's job) or "same" (--job MODEL)
    job_model: str | None
    clusters: tuple[ClusterReport, ...]
    definitions: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "job_mode": self.job_mode,
            "job_model": self.job_model,
            "definitions": dict(self.definitions),
            "clusters": [c.to_dict() for c in self.clusters],
        }


DEFINITIONS = {
    "scaling_efficiency": "",  # filled from wanka.report.scaling.DEFINITION
    "mfu": "model FLOPs (6·N_active + attention per token) / (GPUs × dense peak of the training precision) "
    "(wanka.engine)",
    "exposed_comm_share": "(tp + cp + ep + pp + dp communication left exposed after overlap) / step time",
    "ettr": "有效训练时长 ETTR = productive training time / wall-clock time (Kokolis et al. 2024; wanka.ops)",
    "failures_per_day": "unexpected interruptions per day at the job's scale (component rates x components "
    "the job spans; wanka.ops.rates)",
    "time_to_train": "steady state = tokens / (tokens/s/GPU x GPUs); with failures = the campaign's mean "
    "wall clock (Monte Carlo, restarts and checkpoints included)",
    "four_layers_one_domain": "四层一域: 机房配套层 -> wanka.facility; 基础设施层 -> wanka.infra / network / "
    "storage; 智算平台层 -> wanka.platform; 应用使能层 -> wanka.workload / engine; 智算运营和运维域 -> wanka.ops",
}


# ---------------------------------------------------------------- job placement
def move_job(target: Scenario, *, model: Any, training: dict[str, Any], note: str) -> tuple[Scenario, PickResult]:
    """``target``'s cluster (and its failure, checkpoint and facility inputs) running another job.

    ``model`` is a ModelSpec, ``training`` a TrainingSpec mapping; the strategy is picked.
    """
    data = target.model_dump(mode="python")
    data.update(
        model=model.model_dump(mode="python"), training=dict(training), parallel=None, job_gpus=None, campaign_days=None
    )
    data["assumptions"] = [*target.assumptions, note]
    s = parse_scenario(data, source=f"{target.name} with {model.name}")
    pick = pick_strategy(s)
    return pick.scenario, pick


def _job_training(model: Any, tokens: float | None, batch_tokens: float) -> dict[str, Any]:
    n = parameter_count(model).total
    t = tokens if tokens is not None else CHINCHILLA_TOKENS_PER_PARAM * n
    seqs = max(1, round(batch_tokens / model.seq_len))
    return {
        "tokens": float(t),
        "global_batch_seqs": seqs,
        "micro_batch": 1,
        "seq_len": model.seq_len,
        "precision": "bf16",
    }


def _windowless(s: Scenario) -> Scenario:
    if s.campaign_days is None:
        return s
    data = s.model_dump(mode="python")
    data["campaign_days"] = None
    return parse_scenario(data, source=s.name)


# ---------------------------------------------------------------- sections
def _scale(s: Scenario) -> tuple[dict[str, Any], dict[str, float], list[Assumption]]:
    from wanka.infra import inventory

    inv = inventory(s.cluster, s.facility)
    scale = {
        "accelerator": inv.accelerator,
        "vendor": inv.vendor,
        "accelerators": inv.accelerators,
        "nodes": inv.nodes,
        "gpus_per_node": inv.gpus_per_node,
        "scale_up_domain": inv.scale_up_domain_size,
        "scale_up_domains": inv.scale_up_domains,
        "job_gpus": s.gpus,
        "hbm_bytes": inv.hbm_bytes,
    }
    return scale, dict(inv.peak_flops), [Assumption("infra", n) for n in inv.notes]


def _job(s: Scenario, step: StepResult, source: str, pick: PickResult | None) -> dict[str, Any]:
    assert s.model is not None and s.training is not None
    pc = parameter_count(s.model)
    return {
        "model": s.model.name,
        "params": pc.total,
        "active_params": pc.active,
        "tokens": s.training.tokens,
        "global_batch_seqs": s.training.global_batch_seqs,
        "seq_len": s.seq_len,
        "tokens_per_step": step.tokens_per_step,
        "precision": s.training.precision,
        "strategy": dict(step.strategy),
        "strategy_source": source,
        "picker": None if pick is None else pick.to_dict(),
    }


def _efficiency(step: StepResult, sc: ScalingResult | None) -> dict[str, Any]:
    b = step.breakdown
    return {
        "step_time_s": step.step_time_s,
        "mfu": step.mfu,
        "hfu": step.hfu,
        "tokens_per_s_per_gpu": step.tokens_per_s_per_gpu,
        "breakdown_s": {k: b[k] for k in BREAKDOWN_KEYS},
        "exposed_comm_s": step.exposed_comm_s(),
        "exposed_comm_share": step.exposed_comm_s() / step.step_time_s,
        "time_to_train_s": step.time_to_train_s,
        "memory_bytes": step.memory.total,
        "memory_capacity_bytes": step.memory.capacity,
        "scaling": None if sc is None else sc.to_dict(),
    }


def _reliability(
    s: Scenario, step: StepResult, seed: int, replicas: int
) -> tuple[dict[str, Any], dict[str, Any], list[Assumption]]:
    from wanka.ops import job_failure_rates, simulate_campaign, sweep_checkpoint_interval
    from wanka.storage import checkpoint_io

    c = simulate_campaign(
        s, step_time_s=step.step_time_s, tokens_per_step=step.tokens_per_step, seed=seed, replicas=replicas
    )
    io = checkpoint_io(s)
    rel = {
        "failures_per_day": c.failures_per_day,
        "job_mtbf_s": c.job_mtbf_s,
        "interruptions": c.interruptions.mean,
        "checkpoint_size_bytes": io.size_bytes,
        "checkpoint_mode": io.mode,
        "checkpoint_blocking_s": io.blocking_s,
        "checkpoint_save_s": io.save_s,
        "checkpoint_load_s": io.load_s,
        "checkpoint_interval_s": c.checkpoint_interval_s,
        "ettr": c.ettr.mean,
        "ettr_p5": c.ettr.p5,
        "ettr_p95": c.ettr.p95,
        "ettr_analytic": c.ettr_analytic,
        "goodput": c.goodput.mean,
        "wall_clock_s": c.wall_clock_s.mean,
        "replicas": replicas,
        "seed": seed,
        "rates_table": c.rates_table,
    }
    notes = [Assumption("ops", a) for a in c.assumptions] + [Assumption("storage", a) for a in io.assumptions]
    series: dict[str, Any] = {}
    # ETTR vs checkpoint interval; an async save's optimum can be a few seconds (Young/Daly counts only
    # the stall), so the sweep spans the optimum to the persisted save time x 8
    base = max(c.optimal_checkpoint_interval_s, step.step_time_s)
    hi = max(base * 8, io.save_s * 8, 600.0)
    xs = [base * (hi / base) ** (i / 7) for i in range(8)]
    pts = sweep_checkpoint_interval(s, step_time_s=step.step_time_s, intervals=xs, replicas=SWEEP_REPLICAS, seed=seed)
    series["ettr_vs_interval"] = [
        {"interval_s": p.x, "ettr": p.ettr.mean, "ettr_analytic": p.ettr_analytic} for p in pts
    ]
    per = s.cluster.gpus_per_node
    top = max(s.cluster.accelerators * 4, 200_000)
    sizes = sorted(
        {max(per, round(per * (top / per) ** (i / (SIZE_POINTS - 1)) / per) * per) for i in range(SIZE_POINTS)}
    )
    series["failures_vs_size"] = [
        {"gpus": g, "failures_per_day": job_failure_rates(s, gpus=g).total * DAY} for g in sizes
    ]
    return rel, series, notes


def _network(s: Scenario) -> tuple[dict[str, Any], list[Assumption]]:
    fab = s.cluster.fabric
    out: dict[str, Any] = {
        "kind": fab.kind,
        "tiers": fab.tiers,
        "nic_gbps_per_gpu": fab.nic_gbps_per_gpu,
        "rail_optimized": fab.rail_optimized,
        "planes": fab.planes,
        "oversubscription": fab.oversubscription,
    }
    try:
        from wanka.network.bom import bill_of_materials
    except ImportError:  # the network layer's BOM is optional (built concurrently)
        out["error"] = "wanka.network.bom is not available in this build"
        return out, []
    bom = bill_of_materials(s.cluster)
    out.update(
        tiers=getattr(bom, "tiers", fab.tiers),
        switch=getattr(bom, "switch", fab.switch),
        switches_per_tier=dict(getattr(bom, "switches_per_tier", {}) or {}),
        switches=getattr(bom, "switch_count", None),
        optics=getattr(bom, "optics_count", None),
        optics_by_type=dict(getattr(bom, "optics_by_type", {}) or {}),
        bisection_bytes_per_s=getattr(bom, "bisection_bytes_per_s", None),
        network_power_w=getattr(bom, "network_power_w", None),
    )
    missing = [k for k in ("switches", "optics", "bisection_bytes_per_s") if out[k] is None]
    if missing:
        out["error"] = f"the network layer does not report {', '.join(missing)} yet"
    return out, [Assumption("network", a) for a in getattr(bom, "assumptions", ())]


def _facility(
    s: Scenario, mfu: float, wall_clock_s: float | None, hfu: float | None = None
) -> tuple[dict[str, Any], list[Assumption]]:
    from wanka.facility import assess

    h = None if hfu is None else min(max(hfu, 0.0), 1.0)
    f = assess(s, utilization=min(max(mfu, 0.0), 1.0), wall_clock_s=wall_clock_s, hfu=h)
    out = {
        "cooling": f.cooling,
        "pue": f.pue,
        "utilization": f.utilization,
        "it_power_w": f.it_power_w,
        "it_power_peak_w": f.it_power_peak_w,
        "facility_power_w": f.facility_power_w,
        "racks": f.racks,
        "rack_power_w": f.rack_power_w,
        "rack_power_avg_w": f.rack_power_avg_w,
        "power_stack_w": {
            "accelerators_w": f.accelerators_w,
            "cpus_w": f.cpus_w,
            "node_other_w": f.node_other_w,
            "network_w": f.network_w,
            "storage_w": f.storage_w,
            "cooling_overhead_w": f.cooling_overhead_w,
        },
        "wall_clock_s": f.wall_clock_s,
        "wall_clock_from": f.wall_clock_from,
        "energy_j": f.energy_j,
        "energy_cost_usd": f.energy_cost if f.currency == "USD" else None,
        "energy_cost": f.energy_cost,
        "currency": f.currency,
        "price_per_kwh": f.price_per_kwh,
        "grid_kgco2_per_kwh": f.grid_kgco2_per_kwh,
        "gpu_hours": f.gpu_hours,
        "model_card_energy_j": f.model_card_energy_j,
        "model_card_co2_kg": f.model_card_co2_kg,
        "power_swing_w": f.power_swing_w,
        "co2_kg": f.co2_kg,
        "capex_usd": f.capex_usd,
    }
    return out, [Assumption("facility", a) for a in f.assumptions]


def _same_job(target: Scenario, source: Scenario, seed: int) -> SameJob:
    assert source.model is not None and source.training is not None
    tr = source.training.model_dump(mode="python")
    tr["seq_len"] = source.seq_len
    s, _pick = move_job(
        target,
        model=source.model,
        training=tr,
        note=f"same job as {source.name}: its model, tokens and batch, strategy picked here",
    )
    step = estimate_step(s)
    wall = ettr = None
    note = None
    try:
        from wanka.ops import simulate_campaign

        c = simulate_campaign(
            s,
            step_time_s=step.step_time_s,
            tokens_per_step=step.tokens_per_step,
            seed=seed,
            replicas=max(20, MC_REPLICAS // 4),
        )
        wall, ettr = c.wall_clock_s.mean, c.ettr.mean
    except WankaError as e:
        note = f"campaign not simulated: {e}"
    return SameJob(
        source.name,
        source.model.name,
        source.training.tokens,
        step.gpus,
        dict(step.strategy),
        step.mfu,
        step.time_to_train_s,
        wall,
        ettr,
        note,
    )


def _dedupe(items: list[Assumption]) -> tuple[Assumption, ...]:
    seen: set[str] = set()
    out = []
    for a in items:
        if a.text not in seen:
            seen.add(a.text)
            out.append(a)
    return tuple(out)


def cluster_report(
    s: Scenario,
    *,
    pick: PickResult | None = None,
    same_as: Scenario | None = None,
    seed: int = 0,
    replicas: int = MC_REPLICAS,
) -> ClusterReport:
    """Every section of compare for one scenario (its training job must be set)."""
    s = _windowless(s)
    notes: list[Assumption] = [Assumption("preset", a) for a in s.assumptions]
    errors: dict[str, str] = {}
    if pick is None and s.parallel is None:
        pick = pick_strategy(s)
        s = pick.scenario
    source = "preset" if pick is None else "picked"
    try:
        step = estimate_step(s)
    except InfeasibleError as e:
        if pick is not None:
            raise
        pick = pick_strategy(s)
        notes.append(Assumption("report", f"the preset's strategy cannot run ({e}); a strategy was picked"))
        s, source = pick.scenario, "picked (preset infeasible)"
        step = estimate_step(s)
    if pick is not None:
        notes.append(
            Assumption(
                "report",
                f"strategy picked among {pick.candidates:,} candidates ({pick.feasible:,} feasible): {pick.rule}",
            )
        )
    notes += [Assumption("engine", a) for a in step.assumptions]
    scale, peaks, inv_notes = _scale(s)
    notes += inv_notes
    sc = None
    try:
        sc = scaling_efficiency(s, step)
    except WankaError as e:
        errors["scaling"] = str(e)
    rel: dict[str, Any] = {}
    series: dict[str, Any] = {}
    try:
        rel, series, ops_notes = _reliability(s, step, seed, replicas)
        notes += ops_notes
    except WankaError as e:
        errors["reliability"] = str(e)
    try:
        net, net_notes = _network(s)
        notes += net_notes
    except WankaError as e:
        net = {"kind": s.cluster.fabric.kind, "tiers": s.cluster.fabric.tiers, "error": str(e)}
    if "error" in net:
        errors["network"] = net["error"]
    fac: dict[str, Any] = {}
    try:
        fac, fac_notes = _facility(s, step.mfu, rel.get("wall_clock_s"), getattr(step, "hfu", None))
        notes += fac_notes
    except WankaError as e:
        errors["facility"] = str(e)
    same = None
    if same_as is not None and same_as.name != s.name:
        try:
            same = _same_job(s, same_as, seed)
        except WankaError as e:
            errors["same_job"] = str(e)
    if s.checkpoint.interval_s is None:
        notes.append(
            Assumption(
                "report", "checkpoint interval: the Young/Daly optimum for the job's MTBF (the preset gives none)"
            )
        )
    return ClusterReport(
        name=s.name,
        description=s.description,
        scale=scale,
        peak_flops=peaks,
        job=_job(s, step, source, pick),
        efficiency=_efficiency(step, sc),
        reliability=rel,
        network=net,
        facility=fac,
        series=series,
        same_job=same,
        assumptions=_dedupe(notes),
        sources=tuple(s.sources),
        errors=errors,
    )


def compare(
    scenarios: list[Scenario],
    *,
    job: str | None = None,
    tokens: float | None = None,
    batch_tokens: float = DEFAULT_BATCH_TOKENS,
    seed: int = 0,
    replicas: int = MC_REPLICAS,
) -> Comparison:
    """Side-by-side reports of ``scenarios`` (see the module docstring for the job rule)."""
    from wanka.report.scaling import DEFINITION

    if len(scenarios) < 1:
        raise SpecError("give at least one scenario to compare", field="scenarios")
    if tokens is not None and not (math.isfinite(tokens) and tokens > 0):
        raise SpecError(f"= {tokens!r}: must be a positive number of tokens", field="--tokens")
    if not (math.isfinite(batch_tokens) and batch_tokens > 0):
        raise SpecError(f"= {batch_tokens!r}: must be a positive number of tokens", field="--batch-tokens")
    defs = dict(DEFINITIONS, scaling_efficiency=DEFINITION)
    reports = []
    if job is not None:
        model = load_model(job)
        tr = _job_training(model, tokens, batch_tokens)
        rule = f"{tr['tokens']:.3g} tokens" + (
            " (--tokens)"
            if tokens is not None
            else f" = {CHINCHILLA_TOKENS_PER_PARAM:g} tokens per parameter (Hoffmann et al. 2022, compute-optimal)"
        )
        note = (
            f"same job on every cluster: {model.name}, {rule}; global batch {tr['global_batch_seqs']:,} x "
            f"{tr['seq_len']:,} tokens (~{batch_tokens / 2**20:.0f}M, Llama 3 405B's final batch unless "
            "--batch-tokens), bf16; strategy picked per cluster"
        )
        for s in scenarios:
            if s.model is None and s.training is None:
                pass
            moved, pick = move_job(s, model=model, training=tr, note=note)
            reports.append(cluster_report(moved, pick=pick, seed=seed, replicas=replicas))
        return Comparison("same", model.name, tuple(reports), defs)
    with_job = [s for s in scenarios if s.model is not None and s.training is not None]
    if len(with_job) != len(scenarios):
        bad = next(s.name for s in scenarios if s not in with_job)
        raise SpecError(f"scenario {bad!r} has no training job; give one or use --job MODEL", field="scenarios")
    largest = max(scenarios, key=lambda x: x.cluster.accelerators)
    for s in scenarios:
        reports.append(cluster_report(s, same_as=largest, seed=seed, replicas=replicas))
    return Comparison("own", None, tuple(reports), defs)
