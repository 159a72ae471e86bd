"""Run a sweep: every point of a sweep file through an executor, each result into the run store.

Per point (``mode``):

* ``plan``: the point's step time, MFU, memory, time to train and facility energy/cost under the
  base's strategy; when that strategy no longer fits the point (other GPU count, batch, memory) or
  the sweep says ``parallel: auto``, the best strategy a search finds, recorded as such.
* ``search``: the top-k strategies of the point (:func:`wanka.planner.search`).
* ``reliability``: the plan, then a Monte Carlo campaign (:func:`wanka.ops.simulate_campaign`):
  ETTR, goodput, interruptions, wall clock.

A point that fails (an impossible combination of axis values) is stored with its error and the
sweep goes on. A run resumes when the same sweep (same hash) is started again on the same store:
points already stored are skipped, so none is lost or computed twice.
"""

from __future__ import annotations

import json
import math
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from wanka.engine import StepResult, estimate_step
from wanka.errors import InfeasibleError, WankaError
from wanka.planner.executors import Executor
from wanka.planner.search import candidate_scenario, search
from wanka.planner.sweep_spec import SweepJob, SweepSpec, point_key, point_scenario
from wanka.spec import ParallelSpec, Scenario
from wanka.store import RunInfo, RunStore

__all__ = ["PointOutcome", "SweepRun", "run_chunk", "run_point", "run_sweep"]

Task = tuple[int, dict[str, Any]]
MAX_CHUNK = 16


@dataclass(frozen=True)
class PointOutcome:
    """A computed point, as a worker returns it."""

    idx: int
    key: str
    status: str  # "done" | "error"
    result_json: str | None  # serialised in the worker, so the parent only writes it
    error: str | None
    started: float
    finished: float
    elapsed_s: float
    worker: str

    @property
    def result(self) -> dict[str, Any] | None:
        return json.loads(self.result_json) if self.result_json is not None else None


@dataclass(frozen=True)
class SweepRun:
    """What one invocation of a sweep did."""

    run: RunInfo
    resumed: bool
    skipped: int
    computed: int
    errors: int
    elapsed_s: float
    executor: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run.to_dict(),
            "resumed": self.resumed,
            "skipped": self.skipped,
            "computed": self.computed,
            "errors": self.errors,
            "elapsed_s": self.elapsed_s,
            "executor": self.executor,
        }


# ---------------------------------------------------------------- one point
def _strategy(job: SweepJob, sc: Scenario, inherited: dict[str, Any] | None) -> tuple[Scenario, StepResult, str, str]:
    """The scenario with its strategy, its step, where the strategy came from and why."""
    note = "parallel: auto" if job.parallel == "auto" else "the base scenario has no strategy"
    if job.parallel == "keep" and inherited is not None:
        try:
            par = ParallelSpec.model_validate(inherited)
        except ValidationError as e:
            note = f"base strategy invalid here: {e.errors()[0]['msg']}"
        else:
            if par.world_size != sc.gpus:
                note = f"base strategy spans {par.world_size:,} GPUs, this point's job {sc.gpus:,}"
            else:
                fixed = sc.model_copy(update={"parallel": par, "job_gpus": sc.gpus})
                try:
                    return fixed, estimate_step(fixed), "scenario", ""
                except InfeasibleError as e:
                    note = f"base strategy infeasible here: {e}"
    res = search(sc, top=1, objective=job.objective)
    if not res.top:
        raise InfeasibleError(f"no feasible strategy at this point ({'; '.join(res.notes)})")
    chosen = candidate_scenario(sc, res.best)
    return chosen, estimate_step(chosen), "search", note


def _facility(sc: Scenario, r: StepResult) -> dict[str, float | None]:
    from wanka.facility import assess

    try:
        f = assess(sc, utilization=min(1.0, r.mfu), wall_clock_s=r.time_to_train_s)
    except WankaError:
        return {"energy_j": None, "energy_cost": None}
    return {"energy_j": f.energy_j, "energy_cost": f.energy_cost}


def _plan_summary(sc: Scenario, r: StepResult, source: str) -> dict[str, Any]:
    s: dict[str, Any] = {"gpus": r.gpus}
    s.update(r.strategy)
    s.update(
        step_time_s=r.step_time_s,
        mfu=r.mfu,
        tokens_per_s_per_gpu=r.tokens_per_s_per_gpu,
        time_to_train_s=r.time_to_train_s,
        memory_bytes=r.memory.total,
        exposed_comm_s=r.exposed_comm_s(),
        pp_bubble_s=r.breakdown["pp_bubble"],
        strategy_source=source,
    )
    s.update(_facility(sc, r))
    return s


def _clean(obj: Any) -> Any:
    """JSON-safe copy: inf/nan floats become None (JSON has no infinities)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    return obj


def _compute(job: SweepJob, overrides: dict[str, Any]) -> dict[str, Any]:
    sc, inherited = point_scenario(job, overrides)
    if job.mode == "search":
        res = search(
            sc, top=job.top, objective=job.objective, goodput=job.goodput, replicas=job.replicas, seed=job.seed
        )
        summary: dict[str, Any] = {"gpus": sc.gpus, "feasible": res.feasible, "evaluated": res.evaluated}
        if res.top:
            best = res.best.to_dict()
            summary.update({k: v for k, v in best.items() if k not in ("breakdown_s", "rank")})
        return {"summary": summary, "detail": res.to_dict(timing=False)}
    chosen, r, source, note = _strategy(job, sc, inherited)
    summary = _plan_summary(chosen, r, source)
    detail: dict[str, Any] = {"plan": r.to_dict(), "strategy_note": note}
    if job.mode == "reliability":
        from wanka.ops import simulate_campaign

        c = simulate_campaign(chosen, step_time_s=r.step_time_s, replicas=job.replicas, seed=job.seed)
        summary.update(
            ettr=c.ettr.mean,
            ettr_p5=c.ettr.p5,
            ettr_p95=c.ettr.p95,
            goodput=c.goodput.mean,
            interruptions=c.interruptions.mean,
            wall_clock_s=c.wall_clock_s.mean,
            job_mtbf_s=c.job_mtbf_s,
        )
        detail["campaign"] = c.to_dict()
    return {"summary": summary, "detail": detail}


def run_point(job: SweepJob, idx: int, overrides: dict[str, Any]) -> PointOutcome:
    """Compute one point; a user error (WankaError) or a bug is recorded, never raised."""
    started = time.time()
    t0 = time.perf_counter()
    result: str | None = None
    error: str | None = None
    try:
        result = json.dumps(_clean(_compute(job, overrides)), ensure_ascii=False, allow_nan=False)
    except WankaError as e:
        error = str(e)
    except Exception as e:  # a bug in one point must not stop a thousand-point sweep
        error = f"internal error {type(e).__name__}: {e}"
    return PointOutcome(
        idx=idx,
        key=point_key(overrides),
        status="error" if error is not None else "done",
        result_json=result,
        error=error,
        started=started,
        finished=time.time(),
        elapsed_s=time.perf_counter() - t0,
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )


def run_chunk(job: SweepJob, tasks: list[Task]) -> list[PointOutcome]:
    """Compute a chunk of points in one worker (the unit an executor schedules)."""
    return [run_point(job, i, o) for i, o in tasks]


# ---------------------------------------------------------------- a whole sweep
def _chunks(tasks: list[Task], mode: str, workers: int) -> list[list[Task]]:
    # plan points take ~1-2 ms: batch them so IPC does not dominate; search/reliability points go one by one
    size = max(1, min(MAX_CHUNK, math.ceil(len(tasks) / (max(1, workers) * 8)))) if mode == "plan" else 1
    return [tasks[i : i + size] for i in range(0, len(tasks), size)]


def run_sweep(
    spec: SweepSpec,
    store: RunStore,
    executor: Executor,
    *,
    on_point: Callable[[PointOutcome, int, int], None] | None = None,
    on_start: Callable[[RunInfo, int, int], None] | None = None,
    new_run: bool = False,
    retry_errors: bool = False,
) -> SweepRun:
    """Run (or resume) ``spec`` on ``executor``, committing each point to ``store`` as it arrives.

    ``on_start(run, skipped, todo)`` is called once before the first point; ``on_point(outcome,
    done, todo)`` after each point is stored.
    """
    t0 = time.perf_counter()
    run = None if new_run else store.latest_run(spec.hash)
    resumed = run is not None
    if run is None:
        run = store.create_run(
            sweep_id=spec.name,
            sweep_hash=spec.hash,
            mode=spec.mode,
            spec=spec.to_dict(),
            total=spec.size,
            source=spec.source,
        )
    else:
        store.set_status(run.id, "running")
    finished = store.finished_keys(run.id, include_errors=not retry_errors)
    tasks = [(i, p) for i, p in enumerate(spec.points()) if point_key(p) not in finished]
    skipped = spec.size - len(tasks)
    if on_start is not None:
        on_start(run, skipped, len(tasks))
    done = errors = 0
    try:
        for outcomes in executor.map_chunks(run_chunk, spec.job, _chunks(tasks, spec.mode, executor.workers)):
            for o in outcomes:
                store.record_point(
                    run.id,
                    key=o.key,
                    idx=o.idx,
                    status=o.status,
                    result_json=o.result_json,
                    error=o.error,
                    started=o.started,
                    finished=o.finished,
                    elapsed_s=o.elapsed_s,
                    worker=o.worker,
                )
                done += 1
                errors += o.status == "error"
                if on_point is not None:
                    on_point(o, done, len(tasks))
    except BaseException:
        store.set_status(run.id, "interrupted")
        raise
    store.set_status(run.id, "done")
    return SweepRun(
        run=store.run(run.id),
        resumed=resumed,
        skipped=skipped,
        computed=done,
        errors=errors,
        elapsed_s=time.perf_counter() - t0,
        executor=executor.describe(),
    )
