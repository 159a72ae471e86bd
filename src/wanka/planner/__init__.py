"""Planner: parallel-strategy search and scenario sweeps (local process pool or Ray).

>>> from wanka.spec import load_scenario
>>> from wanka.planner import search
>>> best = search(load_scenario("llama3-405b-16k-h100-54d"), top=1).best
>>> best.tp * best.pp * best.dp * best.cp
16384
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from wanka.planner.search import Baseline, Candidate, SearchResult, candidate_scenario, job_scenario, search
from wanka.planner.space import SearchSpace, SpaceCounts, enumerate_space

if TYPE_CHECKING:
    from wanka.planner.executors import EXECUTORS, Executor, LocalExecutor, RayExecutor, make_executor
    from wanka.planner.pareto import ParetoPoint, pareto_front
    from wanka.planner.sweep import PointOutcome, SweepRun, run_chunk, run_point, run_sweep
    from wanka.planner.sweep_spec import (
        MODES,
        SweepJob,
        SweepSpec,
        load_sweep,
        parse_sweep,
        point_key,
        point_scenario,
    )

# imported on first use (process pools, sweeps): a preset or a plan does not pay for them
_LAZY = {
    **dict.fromkeys(("EXECUTORS", "Executor", "LocalExecutor", "RayExecutor", "make_executor"), "executors"),
    **dict.fromkeys(("ParetoPoint", "pareto_front"), "pareto"),
    **dict.fromkeys(("PointOutcome", "SweepRun", "run_chunk", "run_point", "run_sweep"), "sweep"),
    **dict.fromkeys(
        ("MODES", "SweepJob", "SweepSpec", "load_sweep", "parse_sweep", "point_key", "point_scenario"), "sweep_spec"
    ),
}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value
    return value


__all__ = [
    "EXECUTORS",
    "MODES",
    "Baseline",
    "Candidate",
    "Executor",
    "LocalExecutor",
    "ParetoPoint",
    "PointOutcome",
    "RayExecutor",
    "SearchResult",
    "SearchSpace",
    "SpaceCounts",
    "SweepJob",
    "SweepRun",
    "SweepSpec",
    "candidate_scenario",
    "enumerate_space",
    "job_scenario",
    "load_sweep",
    "make_executor",
    "pareto_front",
    "parse_sweep",
    "point_key",
    "point_scenario",
    "run_chunk",
    "run_point",
    "run_sweep",
    "search",
]
