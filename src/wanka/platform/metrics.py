"""What a schedule simulation reports: utilisation, queueing, JCT, fragmentation, locality, losses."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

__all__ = ["Locality", "Percentiles", "ScheduleResult", "percentiles", "size_buckets"]


@dataclass(frozen=True)
class Percentiles:
    """Mean, median and 99th percentile of a duration (s), over ``count`` jobs."""

    count: int
    mean: float
    median: float
    p99: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def percentiles(x: np.ndarray) -> Percentiles:
    if x.size == 0:
        return Percentiles(0, 0.0, 0.0, 0.0)
    return Percentiles(int(x.size), float(x.mean()), float(np.median(x)), float(np.percentile(x, 99)))


def size_buckets(gpus_per_node: int) -> list[tuple[str, int, int]]:
    """Job-size buckets (label, lo, hi GPUs): one GPU, part of a node, 1-8 nodes, 9-64, more."""
    G = gpus_per_node
    out = [("1", 1, 1)]
    if G > 2:
        out.append((f"2-{G - 1}", 2, G - 1))
    elif G == 2:
        pass
    out += [
        (f"{G}-{8 * G}", G, 8 * G),
        (f"{8 * G + 1}-{64 * G}", 8 * G + 1, 64 * G),
        (f"{64 * G + 1}+", 64 * G + 1, 1 << 62),
    ]
    return [b for b in out if b[1] <= b[2]]


@dataclass(frozen=True)
class Locality:
    """Where multi-node jobs landed (first placement): share within one leaf, within one pod."""

    multi_node_jobs: int
    within_leaf: float
    within_pod: float
    mean_leaves_spanned: float
    mean_min_leaves: float  # the fewest leaves each job could have used

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class ScheduleResult:
    """Outcome of :func:`wanka.platform.simulate`. Times in s, GPU-time in GPU-hours."""

    cluster: str
    workload: str
    policy: str
    placement: str
    seed: int
    gpus: int
    nodes: int
    jobs: int
    completed: int
    rejected: int  # larger than the cluster could ever hold
    unfinished: int
    makespan_s: float
    utilization: float  # busy GPU-time / (GPUs × makespan)
    utilization_arrivals: float  # the same between the first and the last submission
    utilization_timeline: tuple[tuple[float, float], ...]  # (bin start s, mean utilisation)
    queue_delay_s: Percentiles
    queue_delay_by_size: dict[str, Percentiles]
    jct_s: Percentiles
    fragmentation: float  # free-but-unusable GPU-time / GPU-time over the makespan
    fragmentation_of_free: float  # the same / free GPU-time while jobs were waiting
    placement_locality: Locality
    preemptions: int
    node_failures: int
    job_restarts: int
    gpu_hours_busy: float
    gpu_hours_useful: float
    gpu_hours_lost_failures: float
    gpu_hours_lost_preemption: float
    layout: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    records: dict[str, np.ndarray] | None = None  # per-job arrays (submit, start, finish, gpus, alloc)
    allocations: list[tuple[int, float, float, tuple[int, ...], int]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "workload": self.workload,
            "policy": self.policy,
            "placement": self.placement,
            "seed": self.seed,
            "gpus": self.gpus,
            "nodes": self.nodes,
            "jobs": self.jobs,
            "completed": self.completed,
            "rejected": self.rejected,
            "unfinished": self.unfinished,
            "makespan_s": self.makespan_s,
            "utilization": self.utilization,
            "utilization_arrivals": self.utilization_arrivals,
            "utilization_timeline": [list(p) for p in self.utilization_timeline],
            "queue_delay_s": self.queue_delay_s.to_dict(),
            "queue_delay_by_size_s": {k: v.to_dict() for k, v in self.queue_delay_by_size.items()},
            "jct_s": self.jct_s.to_dict(),
            "fragmentation": self.fragmentation,
            "fragmentation_of_free": self.fragmentation_of_free,
            "placement_locality": self.placement_locality.to_dict(),
            "preemptions": self.preemptions,
            "node_failures": self.node_failures,
            "job_restarts": self.job_restarts,
            "gpu_hours_busy": self.gpu_hours_busy,
            "gpu_hours_useful": self.gpu_hours_useful,
            "gpu_hours_lost_failures": self.gpu_hours_lost_failures,
            "gpu_hours_lost_preemption": self.gpu_hours_lost_preemption,
            "layout": self.layout,
            "notes": list(self.notes),
        }
