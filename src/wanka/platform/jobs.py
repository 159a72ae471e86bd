"""Jobs as the scheduler receives them, and a workload (an ordered list of jobs with its source)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Job", "JobRun", "Workload"]


@dataclass(frozen=True, slots=True)
class Job:
    """One gang-scheduled job: all its GPUs start together or not at all.

    ``duration_s`` is the run time on a healthy allocation (also used as the user's runtime
    estimate by backfill: perfect estimates). ``tp`` is the tensor-parallel degree whose group must
    sit in one scale-up domain; ``gpu_models`` restricts the nodes it may use (trace constraint).
    """

    submit_s: float
    duration_s: float
    gpus: int
    tenant: str = "default"
    priority: int = 0
    tp: int = 1
    gpu_models: frozenset[str] | None = None
    name: str = ""


@dataclass(frozen=True)
class Workload:
    """Jobs sorted by submit time, and where they came from."""

    name: str
    jobs: tuple[Job, ...]
    source: str = ""
    skipped: int = 0  # trace rows left out (not GPU jobs, never ran); see ``notes``
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if any(b.submit_s < a.submit_s for a, b in zip(self.jobs, self.jobs[1:], strict=False)):
            object.__setattr__(self, "jobs", tuple(sorted(self.jobs, key=lambda j: j.submit_s)))

    def __len__(self) -> int:
        return len(self.jobs)

    def head(self, n: int) -> Workload:
        """The first ``n`` jobs."""
        return Workload(self.name, self.jobs[:n], self.source, self.skipped, self.notes)

    def gpu_seconds(self) -> float:
        """Offered work: Σ GPUs × duration."""
        return float(sum(j.gpus * j.duration_s for j in self.jobs))

    def summary(self) -> dict[str, float]:
        """Mean/median GPUs and run time, to compare with a trace summary."""
        if not self.jobs:
            return {"jobs": 0}
        g = np.array([j.gpus for j in self.jobs], dtype=float)
        d = np.array([j.duration_s for j in self.jobs], dtype=float)
        span = self.jobs[-1].submit_s - self.jobs[0].submit_s
        return {
            "jobs": len(self.jobs),
            "avg_gpu_num": float(g.mean()),
            "med_gpu_num": float(np.median(g)),
            "max_gpu": float(g.max()),
            "avg_run_time_s": float(d.mean()),
            "med_run_time_s": float(np.median(d)),
            "gpu_seconds_per_job": float((g * d).mean()),
            "span_s": float(span),
        }


class JobRun:
    """A job inside one simulation: its gang shape and its mutable progress (internal)."""

    __slots__ = (
        "alloc",
        "attempt",
        "chunk",
        "end",
        "finish",
        "first_start",
        "idx",
        "job",
        "last_cause",
        "leaves",
        "lost_failure",
        "lost_preempt",
        "mask",
        "n_nodes",
        "nodes",
        "one_leaf",
        "one_pod",
        "overhead",
        "per_node",
        "preemptions",
        "remaining",
        "restarts",
        "start",
        "units",
        "whole",
    )

    def __init__(self, idx: int, job: Job, gpus_per_node: int, nodes_per_domain: int, mask: np.ndarray | None) -> None:
        G = gpus_per_node
        self.idx = idx
        self.job = job
        self.whole = job.gpus >= G
        if self.whole:
            self.chunk = -(-job.tp // G) if job.tp > G else 1  # nodes a TP group spans
            self.chunk = min(self.chunk, nodes_per_domain)
            n = -(-job.gpus // G)
            self.n_nodes = -(-n // self.chunk) * self.chunk
            self.per_node = G
        else:
            self.chunk = 1
            self.n_nodes = 1
            self.per_node = job.gpus
        self.alloc = self.n_nodes * self.per_node
        self.units = self.n_nodes if self.whole else 1  # node units a backfill reservation counts
        self.mask = mask
        self.remaining = job.duration_s
        self.nodes: np.ndarray | None = None
        self.start = -1.0
        self.first_start = -1.0
        self.end = -1.0
        self.finish = -1.0
        self.overhead = 0.0
        self.attempt = 0
        self.restarts = 0
        self.preemptions = 0
        self.lost_failure = 0.0
        self.lost_preempt = 0.0
        self.last_cause = ""
        self.leaves = 0
        self.one_leaf = False
        self.one_pod = False
