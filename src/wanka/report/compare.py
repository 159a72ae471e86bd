"""``compare``: the same training job on several clusters, every layer's numbers side by side.

For each scenario: scale and peak compute (``wanka.infra``), MFU, step breakdown and 线性加速比
(``wanka.engine`` and :mod:`wanka.report.scaling`), failures, MTBF, checkpoints, ETTR and the
wall clock (``wanka.ops``, ``wanka.storage``), fabric tiers, switches and optics
(``wanka.network.bom``), power, racks, energy and cost (``wanka.facility``), and every assumption
the inputs rest on, with where it comes from.

The job: each preset's own (model, tokens, strategy), or with ``job=MODEL`` one model and token
budget on every cluster, its strategy and GPU count from the shared search
(:func:`wanka.service.choose_strategy`, search preset ``place``). Without
``job``, a "same job" block also puts the largest cluster's job on every other cluster. Campaigns
run until the job's tokens are trained (a preset's fixed ``campaign_days`` window is dropped).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from wanka.catalog.envelope import envelope_note
from wanka.engine import BREAKDOWN_KEYS, StepResult
from wanka.errors import InfeasibleError, SpecError, WankaError
from wanka.report.scaling import ScalingResult, scaling_efficiency
from wanka.service import Assessment, Assumption, StrategyChoice, assess, choose_strategy
from wanka.service.assess import dedupe_assumptions
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
OWN_JOB_PRESET = "search"  # a scenario's own job keeps its GPU count (wanka.planner.pick.DEFAULT_PRESET)


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
    # the published-envelope note when the job's MFU here is above every published run on this
    # accelerator and precision with at least its GPUs (wanka.catalog.envelope)
    above_published: str | None = None

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
    spec: dict[str, Any] = field(default_factory=dict)  # the scenario as run (JSON mode)

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
            "scenario_spec": dict(self.spec),
        }


@dataclass(frozen=True)
class Comparison:
    """The clusters side by side, with the job rule and the definitions used."""

    job_mode: str  # "own" (each preset's job) or "same" (--job MODEL)
    job_model: str | None
    clusters: tuple[ClusterReport, ...]
    definitions: dict[str, str]
    story: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "job_mode": self.job_mode,
            "job_model": self.job_model,
            "story": dict(self.story),
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
def move_job(
    target: Scenario, *, model: Any, training: dict[str, Any], note: str, preset: str = "place"
) -> tuple[Scenario, StrategyChoice]:
    """``target``'s cluster (and its failure, checkpoint and facility inputs) running another job.

    ``model`` is a ModelSpec, ``training`` a TrainingSpec mapping; the strategy and the GPU count
    come from the shared search (:func:`wanka.service.choose_strategy`).
    """
    return choose_strategy(job_on(target, model=model, training=training, note=note), preset)


def job_on(target: Scenario, *, model: Any, training: dict[str, Any], note: str) -> Scenario:
    """``target``'s cluster with another job and no strategy (the service searches one)."""
    data = target.model_dump(mode="python")
    data.update(
        model=model.model_dump(mode="python"), training=dict(training), parallel=None, job_gpus=None, campaign_days=None
    )
    data["assumptions"] = [*target.assumptions, note]
    return parse_scenario(data, source=f"{target.name} with {model.name}")


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


def _job(s: Scenario, step: StepResult, choice: StrategyChoice | None) -> dict[str, Any]:
    assert s.model is not None and s.training is not None
    pc = parameter_count(s.model)
    if choice is None or not choice.searched:
        source = "preset"
    else:
        source = "picked" if not choice.why else "picked (preset infeasible)"
    return {
        "model": s.model.name,
        "params": pc.total,
        "active_params": pc.active,
        "moe": s.model.moe is not None,
        "tokens": s.training.tokens,
        "global_batch_seqs": s.training.global_batch_seqs,
        "seq_len": s.seq_len,
        "tokens_per_step": step.tokens_per_step,
        "precision": s.training.precision,
        "strategy": dict(step.strategy),
        "strategy_source": source,
        "strategy_search": None if choice is None or not choice.searched else choice.to_dict(),
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


def _reliability(a: Assessment, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    from wanka.ops import job_failure_rates, sweep_checkpoint_interval

    s, step, c, io = a.scenario, a.step, a.campaign, a.checkpoint
    if c is None or io is None or step is None:
        return {}, {}
    rel = {
        "failures_per_day": c.failures_per_day,
        "job_mtbf_s": c.job_mtbf_s,
        "interruptions": c.interruptions.mean,
        "checkpoint_size_bytes": io.size_bytes,
        "checkpoint_mode": io.mode,
        "checkpoint_blocking_s": io.blocking_s,
        "checkpoint_save_s": io.save_s,
        "checkpoint_load_s": io.load_s,
        "checkpoint_write_bandwidth": io.write_bandwidth,
        "checkpoint_limited_by": io.limited_by,
        "checkpoint_interval_s": c.checkpoint_interval_s,
        "ettr": c.ettr.mean,
        "ettr_p5": c.ettr.p5,
        "ettr_p95": c.ettr.p95,
        "ettr_analytic": c.ettr_analytic,
        "goodput": c.goodput.mean,
        "wall_clock_s": c.wall_clock_s.mean,
        "replicas": c.replicas,
        "seed": seed,
        "rates_table": c.rates_table,
    }
    if a.data_read is not None:
        d = a.data_read
        rel["data_read"] = {"demand_bytes_per_s": d.demand, "supply_bytes_per_s": d.supply, "ok": bool(d.ok)}
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
    return rel, series


def _network(a: Assessment) -> dict[str, Any]:
    fab = a.scenario.cluster.fabric
    out: dict[str, Any] = {
        "kind": fab.kind,
        "tiers": fab.tiers,
        "nic_gbps_per_gpu": fab.nic_gbps_per_gpu,
        "rail_optimized": fab.rail_optimized,
        "planes": fab.planes,
        "oversubscription": fab.oversubscription,
    }
    bom = a.network
    if bom is None:
        out["error"] = a.errors.get("network", "not computed")
        return out
    out.update(
        tiers=bom.tiers,
        switch=bom.switch,
        switches_per_tier=dict(bom.switches_per_tier),
        switches=bom.switch_count,
        optics=bom.optics_count,
        optics_by_type=dict(bom.optics_by_type),
        bisection_bytes_per_s=bom.bisection_bytes_per_s,
        network_power_w=bom.network_power_w,
    )
    return out


def _facility(a: Assessment) -> dict[str, Any]:
    f = a.facility
    if f is None:
        return {}
    return {
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


def _same_job(target: Scenario, source: Scenario, seed: int) -> SameJob:
    assert source.model is not None and source.training is not None
    tr = source.training.model_dump(mode="python")
    tr["seq_len"] = source.seq_len
    s, _choice = move_job(
        target,
        model=source.model,
        training=tr,
        note=f"same job as {source.name}: its model, tokens and batch, strategy picked here",
    )
    a = assess(s, ("engine", "ops"), seed=seed, replicas=max(20, MC_REPLICAS // 4))
    step = a.step
    if step is None:
        raise InfeasibleError(a.errors.get("engine", "the engine gave no result"))
    c = a.campaign
    note = None if c is not None else f"campaign not simulated: {a.errors.get('ops', '')}"
    return SameJob(
        source.name,
        source.model.name,
        source.training.tokens,
        step.gpus,
        dict(step.strategy),
        step.mfu,
        step.time_to_train_s,
        None if c is None else float(c.wall_clock_s.mean),
        None if c is None else float(c.ettr.mean),
        note,
        envelope_note(s.cluster.accelerator, source.training.precision, step.mfu, step.gpus),
    )


def cluster_report(
    s: Scenario,
    *,
    same_as: Scenario | None = None,
    seed: int = 0,
    replicas: int = MC_REPLICAS,
    assessment: Assessment | None = None,
    preset: str = "place",
) -> ClusterReport:
    """Every section of compare for one scenario (its training job must be set), from one assessment.

    ``preset``: the search when the scenario gives no strategy (``place`` for a job moved onto the
    cluster, ``search`` for a scenario's own job)."""
    a = assessment or assess(s, seed=seed, replicas=replicas, until_trained=True, preset=preset)
    if a.step is None:
        raise InfeasibleError(a.errors.get("engine", f"scenario {s.name!r}: the engine gave no result"))
    s, step = a.scenario, a.step
    notes: list[Assumption] = list(a.assumptions)
    errors = {k: v for k, v in a.errors.items() if k != "engine"}
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
        rel, series = _reliability(a, seed)
    except WankaError as e:
        errors["reliability"] = str(e)
    net = _network(a)
    fac = _facility(a)
    same = None
    if same_as is not None and same_as.name != s.name:
        try:
            same = _same_job(s, same_as, seed)
        except WankaError as e:
            errors["same_job"] = str(e)
        if same is not None and same.above_published is not None:
            notes.append(Assumption("engine", f"same job ({same.model}): {same.above_published}"))
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
        job=_job(s, step, a.strategy),
        efficiency=_efficiency(step, sc),
        reliability=rel,
        network=net,
        facility=fac,
        series=series,
        same_job=same,
        assumptions=dedupe_assumptions(notes),
        sources=tuple(s.sources),
        errors=errors,
        spec=s.model_dump(mode="json"),
    )


def compare(
    scenarios: list[Scenario],
    *,
    job: str | None = None,
    tokens: float | None = None,
    batch_tokens: float = DEFAULT_BATCH_TOKENS,
    seed: int = 0,
    replicas: int = MC_REPLICAS,
    story: bool = True,
    what_ifs: bool = True,
) -> Comparison:
    """Side-by-side reports of ``scenarios`` (see the module docstring for the job rule).

    ``story``: also build the story of :mod:`wanka.report.story` (the conclusion, storage, energy);
    ``what_ifs``: with it, the what-ifs on the largest cluster (超节点, MoE All2All, FP8: several
    strategy searches, ~10 s); the terminal leaves them to ``--html`` or ``--what-ifs``.
    """
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
            moved = job_on(s, model=model, training=tr, note=note)
            reports.append(cluster_report(moved, seed=seed, replicas=replicas))
        return Comparison("same", model.name, tuple(reports), defs, _story(reports, what_ifs) if story else {})
    with_job = [s for s in scenarios if s.model is not None and s.training is not None]
    if len(with_job) != len(scenarios):
        bad = next(s.name for s in scenarios if s not in with_job)
        raise SpecError(f"scenario {bad!r} has no training job; give one or use --job MODEL", field="scenarios")
    largest = max(scenarios, key=lambda x: x.cluster.accelerators)
    for s in scenarios:
        # each preset's own job as written: a strategy, when none is given, for its own GPU count
        # (search preset "search", as `plan`, `reliability` and `facility` pick it)
        reports.append(cluster_report(s, same_as=largest, seed=seed, replicas=replicas, preset=OWN_JOB_PRESET))
    return Comparison("own", None, tuple(reports), defs, _story(reports, what_ifs) if story else {})


def _story(reports: list[ClusterReport], what_ifs: bool = True) -> dict[str, Any]:
    from wanka.report.story import build_story

    big = max(reversed(reports), key=lambda c: c.scale["accelerators"])  # a tie: the last one given
    return build_story(parse_scenario(big.spec, source=big.name), reports, what_ifs=what_ifs)
