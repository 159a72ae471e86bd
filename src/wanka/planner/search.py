"""Parallel-strategy search: enumerate, evaluate in numpy batches, rank, explain, Pareto front.

>>> from wanka.spec import load_scenario
>>> r = search(load_scenario("llama3-405b-16k-h100-54d"), top=3)
>>> r.best.tp * r.best.pp * r.best.dp * r.best.cp == 16384
True

Ranking: ``objective="time"`` orders every feasible strategy by time to train
(``training.tokens / (tokens/s)``, :func:`wanka.engine.evaluate_batch`). ``"energy"`` and ``"cost"``
assess the fastest ``facility_pool`` strategies of each GPU count with :func:`wanka.facility.assess`
(utilisation = the strategy's MFU, wall clock = its time to train) and order those by facility
energy (J) or electricity cost (USD). ``goodput=True`` runs the operations Monte Carlo
(:func:`wanka.ops.simulate_campaign`) for the top-k and re-orders them by time to train / goodput.

Each returned strategy says why it wins or loses: the breakdown terms (bubble, exposed
communication, recompute) where it differs most from the one ranked first, and its HBM headroom.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from wanka.calibration import Calibration
from wanka.catalog.envelope import envelope_note
from wanka.engine import (
    BREAKDOWN_KEYS,
    CP_COMM_CODES,
    RECOMPUTE_CODES,
    Context,
    Strategies,
    evaluate_batch,
    make_context,
)
from wanka.engine.strategies import memory_saving, software_columns
from wanka.errors import SpecError, WankaError
from wanka.planner.pareto import ParetoPoint, pareto_front
from wanka.planner.space import CHUNK_ROWS, SearchSpace, SpaceCounts, enumerate_space
from wanka.spec import ParallelSpec, Scenario
from wanka.units import format_bytes

__all__ = ["Baseline", "Candidate", "Objective", "SearchResult", "candidate_scenario", "job_scenario", "search"]

Objective = Literal["time", "cost", "energy"]
OBJECTIVES: tuple[str, ...] = ("time", "cost", "energy")
_RECOMPUTE_NAMES = {v: k for k, v in RECOMPUTE_CODES.items()}
_CP_COMM_NAMES = {v: k for k, v in CP_COMM_CODES.items()}
# cp_comm last: among otherwise equal strategies the ring (code 0) ranks first
# (offload after recompute: among otherwise equal strategies the one offloading fewer layers ranks first)
_COLS = ("tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "zero", "recompute", "offload", "shard", "cp_comm")
_COMM = ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm")
LABELS = {
    "compute": "compute",
    "recompute": "recompute",
    "tp_comm": "TP comm",
    "cp_comm": "CP comm",
    "ep_comm": "EP all-to-all",
    "pp_bubble": "PP bubble",
    "pp_comm": "PP p2p",
    "dp_comm": "DP comm",
    "optimizer": "optimizer",
    "stragglers": "stragglers",
}
MAX_TOP = 1000
MAX_GPU_OPTIONS = 64


@dataclass(frozen=True)
class Candidate:
    """One ranked strategy with its predicted step, memory, time to train and why it ranks there."""

    rank: int
    gpus: int
    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    vpp: int
    micro_batch: int
    zero: int
    recompute: str
    sp: bool
    step_time_s: float
    mfu: float
    tokens_per_s_per_gpu: float
    memory_bytes: float
    hbm_bytes: float
    time_to_train_s: float
    breakdown_s: dict[str, float]
    reason: str = ""
    zero_shard_group: int | None = None  # hybrid sharding group; None = all dp·cp ranks
    cp_comm_type: str = "p2p"  # context-parallel exchange (ParallelSpec.cp_comm_type)
    offload_layers: int = 0  # layers whose saved activations go to host memory (ParallelSpec.offload_layers)
    energy_j: float | None = None
    energy_cost: float | None = None
    goodput: float | None = None

    @property
    def memory_headroom_bytes(self) -> float:
        return self.hbm_bytes - self.memory_bytes

    @property
    def effective_time_to_train_s(self) -> float | None:
        """Time to train divided by goodput (restarts, lost work, stragglers), when goodput is known."""
        return self.time_to_train_s / self.goodput if self.goodput else None

    def parallel_spec(self) -> ParallelSpec:
        return ParallelSpec(
            tp=self.tp,
            sp=self.sp,
            pp=self.pp,
            vpp=self.vpp,
            dp=self.dp,
            cp=self.cp,
            ep=self.ep,
            zero=self.zero,
            zero_shard_group=self.zero_shard_group,
            recompute=self.recompute,  # type: ignore[arg-type]
            cp_comm_type=self.cp_comm_type,  # type: ignore[arg-type]
            offload_layers=self.offload_layers,
        )

    def memory_saving(self) -> str:
        """How the layout saves activation memory: its recompute mode, or the layers it offloads."""
        return memory_saving(self.recompute, self.offload_layers)

    def layout(self) -> str:
        s = f"TP{self.tp}/PP{self.pp}/CP{self.cp}" + (f"({self.cp_comm_type})" if self.cp > 1 else "")
        s += f"/DP{self.dp}"
        s += f"/EP{self.ep}" if self.ep > 1 else ""
        return s + (f"/HS{self.zero_shard_group}" if self.zero_shard_group else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "gpus": self.gpus,
            "tp": self.tp,
            "pp": self.pp,
            "dp": self.dp,
            "cp": self.cp,
            "ep": self.ep,
            "vpp": self.vpp,
            "micro_batch": self.micro_batch,
            "recompute": self.recompute,
            "offload_layers": self.offload_layers,
            "zero": self.zero,
            "zero_shard_group": self.zero_shard_group,
            "cp_comm_type": self.cp_comm_type,
            "sp": self.sp,
            "step_time_s": self.step_time_s,
            "mfu": self.mfu,
            "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu,
            "memory_bytes": self.memory_bytes,
            "memory_headroom_bytes": self.memory_headroom_bytes,
            "time_to_train_s": self.time_to_train_s,
            "energy_j": self.energy_j,
            "energy_cost": self.energy_cost,
            "goodput": self.goodput,
            "effective_time_to_train_s": self.effective_time_to_train_s,
            "breakdown_s": dict(self.breakdown_s),
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Baseline:
    """The scenario's own strategy placed in the search's ranking (by time to train)."""

    candidate: Candidate
    feasible: bool
    why_not: str  # "" when feasible
    rank: int | None  # 1 + feasible strategies strictly faster; None when infeasible
    shape_rank: int | None  # rank of the best strategy with the same tp/pp/dp/cp/ep
    feasible_total: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.candidate.to_dict(),
            "feasible": self.feasible,
            "why_not": self.why_not,
            "rank": self.rank,
            "shape_rank": self.shape_rank,
            "feasible_total": self.feasible_total,
        }


@dataclass(frozen=True)
class SearchResult:
    """The top-k strategies of a search, how many were tried, and the Pareto front."""

    scenario: str
    objective: str
    gpus: tuple[int, ...]
    top: tuple[Candidate, ...]
    counts: dict[int, SpaceCounts]
    evaluated: int
    feasible: int
    no_fit: int
    rejected: dict[str, int]
    baseline: Baseline | None
    pareto_axes: tuple[str, str] | None
    pareto: tuple[ParetoPoint, ...]
    elapsed_s: float
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def best(self) -> Candidate:
        if not self.top:
            raise WankaError(f"no feasible strategy for {self.scenario!r}")
        return self.top[0]

    def to_dict(self, *, timing: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {
            "scenario": self.scenario,
            "objective": self.objective,
            "gpus": list(self.gpus),
            "strategies": [c.to_dict() for c in self.top],
            "evaluated": self.evaluated,
            "feasible": self.feasible,
            "no_fit": self.no_fit,
            "rejected": dict(self.rejected),
            "space": {str(k): v.to_dict() for k, v in self.counts.items()},
            "baseline": self.baseline.to_dict() if self.baseline else None,
            "pareto_axes": list(self.pareto_axes) if self.pareto_axes else None,
            "pareto": [p.to_dict() for p in self.pareto],
            "notes": list(self.notes),
        }
        if timing:
            d["elapsed_s"] = self.elapsed_s
        return d


# ---------------------------------------------------------------- scenarios for one job size / strategy
def job_scenario(scenario: Scenario, gpus: int | None = None) -> Scenario:
    """``scenario`` with no fixed strategy, its job on ``gpus`` accelerators (default: its own count)."""
    if scenario.model is None or scenario.training is None:
        raise SpecError("a search needs a training job; add `model:` and `training:`", field="model")
    n = scenario.gpus if gpus is None else gpus
    cap = scenario.cluster.accelerators
    if not (1 <= n <= cap):
        raise SpecError(f"= {n}: must be between 1 and the cluster's {cap:,} accelerators", field="gpus")
    return scenario.model_copy(update={"parallel": None, "job_gpus": n})


def candidate_scenario(scenario: Scenario, c: Candidate) -> Scenario:
    """``scenario`` running strategy ``c`` (parallel block and micro-batch set, job size = its world)."""
    assert scenario.training is not None
    training = scenario.training.model_copy(update={"micro_batch": c.micro_batch})
    return scenario.model_copy(update={"parallel": c.parallel_spec(), "training": training, "job_gpus": c.gpus})


# ---------------------------------------------------------------- evaluation
@dataclass
class _Table:
    """Column-wise evaluated strategies across GPU counts."""

    cols: dict[str, npt.NDArray[Any]]
    gpus: npt.NDArray[np.int64]
    step: npt.NDArray[np.float64]
    tps: npt.NDArray[np.float64]
    mfu: npt.NDArray[np.float64]
    mem: npt.NDArray[np.float64]
    hbm: npt.NDArray[np.float64]
    code: npt.NDArray[np.int64]
    ttt: npt.NDArray[np.float64]
    breakdown: dict[str, npt.NDArray[np.float64]]

    @classmethod
    def concat(cls, parts: list[_Table]) -> _Table:
        def cat(get: Any) -> Any:
            return np.concatenate([get(p) for p in parts]) if parts else np.zeros(0)

        return cls(
            cols={k: cat(lambda p, k=k: p.cols[k]) for k in (*_COLS, "sp")},
            gpus=cat(lambda p: p.gpus),
            step=cat(lambda p: p.step),
            tps=cat(lambda p: p.tps),
            mfu=cat(lambda p: p.mfu),
            mem=cat(lambda p: p.mem),
            hbm=cat(lambda p: p.hbm),
            code=cat(lambda p: p.code),
            ttt=cat(lambda p: p.ttt),
            breakdown={k: cat(lambda p, k=k: p.breakdown[k]) for k in BREAKDOWN_KEYS},
        )

    def candidate(self, i: int, rank: int) -> Candidate:
        c = self.cols
        return Candidate(
            rank=rank,
            gpus=int(self.gpus[i]),
            tp=int(c["tp"][i]),
            pp=int(c["pp"][i]),
            dp=int(c["dp"][i]),
            cp=int(c["cp"][i]),
            ep=int(c["ep"][i]),
            vpp=int(c["vpp"][i]),
            micro_batch=int(c["micro_batch"][i]),
            zero=int(c["zero"][i]),
            recompute=_RECOMPUTE_NAMES[int(c["recompute"][i])],
            sp=bool(c["sp"][i]),
            zero_shard_group=int(c["shard"][i]) or None,
            cp_comm_type=_CP_COMM_NAMES[int(c["cp_comm"][i])],
            offload_layers=int(c["offload"][i]),
            step_time_s=float(self.step[i]),
            mfu=float(self.mfu[i]),
            tokens_per_s_per_gpu=float(self.tps[i]),
            memory_bytes=float(self.mem[i]),
            hbm_bytes=float(self.hbm[i]),
            time_to_train_s=float(self.ttt[i]),
            breakdown_s={k: float(self.breakdown[k][i]) for k in BREAKDOWN_KEYS},
        )


def _evaluate(ctx: Context, st: Strategies, tokens: float) -> _Table:
    parts = []
    for lo in range(0, max(len(st), 1), CHUNK_ROWS):
        sl = slice(lo, lo + CHUNK_ROWS)
        sub = Strategies(**{k: getattr(st, k)[sl] for k in st.__dataclass_fields__})
        if len(sub) == 0:
            break
        r = evaluate_batch(ctx, sub, tokens)
        n = len(sub)
        parts.append(
            _Table(
                cols={k: getattr(sub, k) for k in (*_COLS, "sp")},
                gpus=np.full(n, ctx.gpus, dtype=np.int64),
                step=r.step_time_s,
                tps=r.tokens_per_s_per_gpu,
                mfu=r.mfu,
                mem=r.memory_bytes,
                hbm=np.full(n, ctx.hbm_usable),
                code=r.reason,
                ttt=r.time_to_train_s,
                breakdown={k: np.broadcast_to(r.breakdown[k], (n,)).astype(float) for k in BREAKDOWN_KEYS},
            )
        )
    return _Table.concat(parts)


# ---------------------------------------------------------------- explanations
def _group(b: dict[str, float]) -> dict[str, float]:
    return {
        "bubble": b["pp_bubble"],
        "exposed comm": sum(b[k] for k in _COMM),
        "recompute": b["recompute"],
    }


def explain(c: Candidate, first: Candidate | None, objective: str) -> str:
    """Why ``c`` ranks where it does: its dominant overheads, or where it loses time to ``first``."""
    g = _group(c.breakdown_s)
    head = f"headroom {format_bytes(c.memory_headroom_bytes)}"
    if first is None or first is c:
        shares = " · ".join(f"{k} {v / c.step_time_s:.1%}" for k, v in g.items() if v > 0)
        return f"best by {objective}: {shares or 'compute only'} of the step; {head}"
    deltas = {k: c.breakdown_s[k] - first.breakdown_s[k] for k in BREAKDOWN_KEYS}
    worst = sorted((k for k in deltas if deltas[k] > 1e-6), key=lambda k: -deltas[k])[:2]
    dt = c.step_time_s - first.step_time_s
    if objective in ("cost", "energy") and c.energy_cost is not None and first.energy_cost is not None:
        if objective == "cost":
            lead = f"+${c.energy_cost - first.energy_cost:,.0f} energy cost vs #1"
        else:
            lead = f"+{((c.energy_j or 0.0) - (first.energy_j or 0.0)) / 3.6e9:,.1f} MWh vs #1"
    elif c.gpus != first.gpus:
        lead = f"{c.gpus:,} GPUs: {c.time_to_train_s / first.time_to_train_s - 1:+.1%} time to train vs #1"
    elif abs(dt) <= 1e-9 * first.step_time_s:
        lead = "ties #1 on step time"
    else:
        lead = f"{dt:+.3f} s/step vs #1"
    terms = ", ".join(f"{LABELS[k]} +{deltas[k]:.3f} s" for k in worst) if worst else "no term slower than #1's"
    return f"{lead}: {terms}; {head}"


# ---------------------------------------------------------------- search
def _order(t: _Table, idx: npt.NDArray[np.int64], key: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """``idx`` sorted by ``key`` (ties: fewer GPUs, smaller tp, pp, cp, micro-batch; deterministic)."""
    c = t.cols
    keys = [c[k][idx] for k in reversed(_COLS)] + [t.gpus[idx], key[idx]]
    return idx[np.lexsort(keys)]


def _facility(scenario: Scenario, c: Candidate) -> tuple[float | None, float | None]:
    from wanka.facility import assess

    try:
        f = assess(candidate_scenario(scenario, c), utilization=min(1.0, c.mfu), wall_clock_s=c.time_to_train_s)
    except WankaError:
        return None, None
    return f.energy_j, f.energy_cost


def _goodput(scenario: Scenario, c: Candidate, replicas: int, seed: int) -> float | None:
    from wanka.ops import simulate_campaign

    try:
        r = simulate_campaign(candidate_scenario(scenario, c), step_time_s=c.step_time_s, replicas=replicas, seed=seed)
    except WankaError:
        return None
    return float(r.goodput.mean)


def _with(c: Candidate, **kw: Any) -> Candidate:
    d = {k: getattr(c, k) for k in c.__dataclass_fields__}
    d.update(kw)
    return Candidate(**d)


def _baseline(
    scenario: Scenario, t: _Table, feasible: npt.NDArray[np.bool_], cal: Calibration | None = None
) -> Baseline | None:
    par, tr = scenario.parallel, scenario.training
    if par is None or tr is None or par.world_size not in set(t.gpus.tolist()):
        return None
    ctx = make_context(job_scenario(scenario, par.world_size), cal)
    st = Strategies.from_specs([par], [tr.micro_batch])
    b = _evaluate(ctx, st, tr.tokens)
    c = b.candidate(0, 0)
    ok = int(b.code[0]) == -1
    why = "" if ok else _reason_text(int(b.code[0]))
    total = int(feasible.sum())
    rank = shape_rank = None
    if ok:
        rank = 1 + int((t.ttt[feasible] < c.time_to_train_s).sum())
        same = feasible & (t.gpus == c.gpus)
        for k in ("tp", "pp", "dp", "cp", "ep"):
            same &= t.cols[k] == getattr(c, k)
        if same.any():
            best_same = float(t.ttt[same].min())
            shape_rank = 1 + int((t.ttt[feasible] < min(best_same, c.time_to_train_s)).sum())
    return Baseline(_with(c, rank=rank or 0), ok, why, rank, shape_rank, total)


def _reason_text(code: int) -> str:
    from wanka.engine import REASONS

    # (-2 also counts a layout whose offloaded activations exceed the node's host memory)
    return "does not fit in HBM (or, offloading, in host memory)" if code == -2 else REASONS[code]


def search(
    scenario: Scenario,
    *,
    top: int = 10,
    objective: str = "time",
    gpus: Sequence[int] | None = None,
    goodput: bool = False,
    space: SearchSpace | None = None,
    facility_pool: int = 64,
    replicas: int = 200,
    seed: int = 0,
    cal: Calibration | None = None,
) -> SearchResult:
    """Search the parallel strategies of ``scenario``'s job (see the module docstring). ``cal``
    replaces the shipped calibration (:func:`wanka.calibration.load_calibration`), e.g. to see how a
    ranking moves with one constant."""
    t0 = time.perf_counter()
    if objective not in OBJECTIVES:
        raise SpecError(f"= {objective!r}: must be one of {', '.join(OBJECTIVES)}", field="objective")
    if not (1 <= top <= MAX_TOP):
        raise SpecError(f"= {top}: must be between 1 and {MAX_TOP}", field="top")
    own = job_scenario(scenario)  # raises a SpecError when there is no training job
    sizes = tuple(dict.fromkeys(int(g) for g in gpus)) if gpus else (own.gpus,)
    if len(sizes) > MAX_GPU_OPTIONS:
        raise SpecError(f"{len(sizes)} GPU counts given; at most {MAX_GPU_OPTIONS}", field="gpus")
    assert own.training is not None
    tokens = own.training.tokens
    parts, counts = [], {}
    # the scenario's framework decides the schedule, dispatch and overlaps every candidate runs with
    switches = software_columns(ParallelSpec(**scenario.software.switches())) if scenario.software else None
    for n in sizes:
        ctx = make_context(job_scenario(scenario, n), cal)
        st, cnt = enumerate_space(ctx, space, switches)
        counts[n] = cnt
        parts.append(_evaluate(ctx, st, tokens))
    t = _Table.concat(parts)
    feasible = t.code == -1
    rejected: dict[str, int] = {}
    for code in np.unique(t.code[t.code >= 0]).tolist():
        rejected[_reason_text(int(code))] = int((t.code == code).sum())
    idx = np.flatnonzero(feasible)
    by_time = _order(t, idx, t.ttt)
    notes: list[str] = []
    pool: list[Candidate]
    if objective == "time":
        pool = [t.candidate(int(i), r + 1) for r, i in enumerate(by_time[:top])]
        pool = [_with(c, energy_j=e, energy_cost=k) for c in pool for e, k in [_facility(scenario, c)]]
    else:
        chosen = []
        for n in sizes:
            chosen.extend(by_time[t.gpus[by_time] == n][: max(facility_pool, top)].tolist())
        pool = [t.candidate(int(i), 0) for i in chosen]
        pool = [_with(c, energy_j=e, energy_cost=k) for c in pool for e, k in [_facility(scenario, c)]]
        if any(c.energy_j is None for c in pool):
            notes.append("facility assessment failed for some strategies; they rank last")
        attr = "energy_cost" if objective == "cost" else "energy_j"
        pool.sort(key=lambda c: (getattr(c, attr) is None, getattr(c, attr) or 0.0, c.time_to_train_s))
        notes.append(f"{objective} computed for the {max(facility_pool, top)} fastest strategies of each GPU count")
    if goodput:
        pool = pool[:top]
        pool = [_with(c, goodput=_goodput(scenario, c, replicas, seed)) for c in pool]
        if objective == "time":
            pool.sort(key=lambda c: c.effective_time_to_train_s or c.time_to_train_s)
        notes.append(f"goodput from {replicas} Monte Carlo campaigns (seed {seed}) for the top {len(pool)}")
    front_axes: tuple[str, str] | None = None
    front: tuple[ParetoPoint, ...] = ()
    if len(sizes) > 1:
        front_axes = ("gpus", "time_to_train_s")
        best_per = [by_time[t.gpus[by_time] == n][:1] for n in sizes]
        cands = [t.candidate(int(b[0]), 0) for b in best_per if len(b)]
        front = pareto_front([(float(c.gpus), c.time_to_train_s, c.to_dict()) for c in cands])
    elif any(c.energy_cost is not None for c in pool):
        front_axes = ("time_to_train_s", "energy_cost")
        front = pareto_front(
            [(c.time_to_train_s, float(c.energy_cost), c.to_dict()) for c in pool if c.energy_cost is not None]
        )
    ranked = [_with(c, rank=r + 1) for r, c in enumerate(pool[:top])]
    first = ranked[0] if ranked else None
    ranked = [_with(c, reason=explain(c, first, objective)) for c in ranked]
    if not ranked:
        if not rejected:  # nothing reached the timing: say what the enumeration dropped, and why
            for cnt in counts.values():
                for k, v in cnt.shapes_pruned.items():
                    rejected[k] = rejected.get(k, 0) + v
            no_fit = sum(cnt.shapes_no_fit for cnt in counts.values())
            if no_fit:
                rejected["does not fit in HBM even at micro-batch 1 with full recompute"] = no_fit
        why = ", ".join(f"{k} ({v})" for k, v in rejected.items()) or "no layout of these GPUs to try"
        notes.append("no feasible strategy: " + why)
    elif scenario.training is not None:
        # the best layout above every published run on this accelerator and precision at its scale says so
        above = envelope_note(scenario.cluster.accelerator, scenario.training.precision, ranked[0].mfu, ranked[0].gpus)
        if above is not None:
            notes.append(f"#1: {above}")
    return SearchResult(
        scenario=scenario.name,
        objective=objective,
        gpus=sizes,
        top=tuple(ranked),
        counts=counts,
        evaluated=len(t.code),
        feasible=int(feasible.sum()),
        no_fit=int((t.code == -2).sum()),
        rejected=rejected,
        baseline=_baseline(scenario, t, feasible, cal),
        pareto_axes=front_axes,
        pareto=front,
        elapsed_s=time.perf_counter() - t0,
        notes=tuple(notes),
    )
