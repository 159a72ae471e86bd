"""Typed results of a campaign simulation (``CampaignResult``) with ``to_dict()`` for JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

__all__ = ["CampaignResult", "CauseResult", "Stat"]


@dataclass(frozen=True)
class Stat:
    """Mean and 5th/95th percentiles over Monte Carlo replicas."""

    mean: float
    p5: float
    p95: float

    @classmethod
    def of(cls, values: np.ndarray) -> Stat:
        v = np.asarray(values, dtype=float)
        p5, p95 = np.percentile(v, [5.0, 95.0])
        return cls(float(v.mean()), float(p5), float(p95))

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class CauseResult:
    """One cause: how often it interrupted the job and what it cost."""

    name: str
    label: str
    category: str
    planned: bool
    count: Stat
    detection_s: float
    gpu_hours_lost: float  # mean over replicas: lost work + detection + recovery, × GPUs
    share_of_interruptions: float

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["count"] = self.count.to_dict()
        return d


@dataclass(frozen=True)
class CampaignResult:
    """A Monte Carlo training campaign: interruptions, ETTR, goodput, wall clock and losses.

    ETTR (Kokolis et al. 2024, Meta; Llama 3 §3.3.4 "effective training time"): productive training
    time / wall-clock time, where productive time is running time whose progress was kept (not lost
    to a failure, not stalled by checkpointing). ``goodput`` also charges straggler slowdown: the
    fraction of the ideal (failure-free, straggler-free) token rate the campaign achieved.
    """

    scenario: str
    replicas: int
    seed: int
    gpus: int
    nodes: int
    mode: str  # "window" (campaign_days) or "tokens" (until training.tokens are trained)
    step_time_s: float
    tokens_per_step: float | None
    interruptions: Stat
    unexpected_interruptions: Stat
    planned_interruptions: Stat
    ettr: Stat
    goodput: Stat
    wall_clock_s: Stat
    tokens_per_s_per_gpu: Stat | None
    tokens_trained: Stat | None
    job_mtbf_s: float
    failures_per_day: float
    ettr_analytic: float
    checkpoint_mode: str
    checkpoint_interval_s: float
    optimal_checkpoint_interval_s: float
    checkpoint_blocking_s: float
    checkpoint_load_s: float
    checkpoint_size_bytes: float
    checkpoint_io_source: str
    straggler_factor: float
    spares: int
    p_no_spare: float
    gpu_hours_lost: dict[str, float]  # by cause plus "checkpointing" and "stragglers", mean per replica
    by_cause: tuple[CauseResult, ...]
    rates_table: str
    rates_source: str
    assumptions: tuple[str, ...] = ()
    ettr_limits: dict[str, float] = field(default_factory=dict)  # share of wall clock lost, closed form
    hot_spares: int = 0  # of ``spares``: nodes beside the cluster (the rest are idle cluster nodes)
    spares_from: str = "given"
    elastic: bool = False
    checkpoint_persist_s: float = 0.0  # after the stall, until a save is safe on storage
    checkpoint_coordination_s: float = 0.0
    checkpoint_interval_floor_s: float = 0.0
    job_floor_failures_per_day: float = 0.0  # the size-independent (non-hardware) part

    @property
    def limited_by(self) -> str:
        """The largest ETTR loss (``ettr_limits`` key), or "" with none."""
        if not self.ettr_limits:
            return ""
        return max(self.ettr_limits, key=lambda k: self.ettr_limits[k])

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            if isinstance(v, Stat):
                d[k] = v.to_dict()
            elif k == "by_cause":
                d[k] = {c.name: c.to_dict() for c in v}
            elif isinstance(v, tuple):
                d[k] = list(v)
            else:
                d[k] = v
        d["limited_by"] = self.limited_by
        d["wall_clock"] = d["wall_clock_s"]
        d["wall_clock_s"] = self.wall_clock_s.mean
        return d
