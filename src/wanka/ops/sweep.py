"""Sweeps: ETTR against the checkpoint interval (around the Young/Daly optimum) and the job size.

Both reuse one seed for every point (common random numbers), so differences between points are the
model's, not the sampler's. The size sweep keeps the scenario's checkpoint costs (same model) and
scales the failure rates with the components the job spans; the interval is re-optimised per size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from wanka.ops.campaign import CampaignInputs, campaign_inputs, expected_ettr, run_campaign
from wanka.ops.result import Stat
from wanka.spec import Scenario

__all__ = ["SweepPoint", "sweep_checkpoint_interval", "sweep_cluster_size"]

INTERVAL_FACTORS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
SIZE_FACTORS = (1 / 64, 1 / 16, 1 / 4, 1.0, 4.0)


@dataclass(frozen=True)
class SweepPoint:
    """One point of a sweep: the swept value and the campaign's ETTR there."""

    x: float  # interval (s) or GPUs
    interval_s: float
    ettr: Stat
    goodput: Stat
    ettr_analytic: float
    interruptions: float

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ettr"], d["goodput"] = self.ettr.to_dict(), self.goodput.to_dict()
        return d


def _point(inp: CampaignInputs, x: float, replicas: int, seed: int) -> SweepPoint:
    r = run_campaign(inp, replicas=replicas, seed=seed)
    return SweepPoint(x, inp.interval_s, r.ettr, r.goodput, expected_ettr(inp), r.interruptions.mean)


def _windowed(inp: CampaignInputs, span_s: float | None) -> CampaignInputs:
    if inp.horizon_s is not None or span_s is None:
        return inp
    return replace(inp, horizon_s=span_s, work_s=None)


def sweep_checkpoint_interval(
    scenario: Scenario,
    *,
    step_time_s: float,
    intervals: Sequence[float] | None = None,
    replicas: int = 300,
    seed: int = 0,
) -> list[SweepPoint]:
    """ETTR at each checkpoint interval (default: the optimum × 0.25 … 4)."""
    base = campaign_inputs(scenario, step_time_s=step_time_s)
    if intervals is None:
        floor = base.interval_floor_s  # whole steps ≥ the persist time: shorter intervals are not allowed
        intervals = sorted({max(floor, base.optimal_interval_s * f) for f in INTERVAL_FACTORS})
    pts = []
    for tau in intervals:
        inp = campaign_inputs(scenario, step_time_s=step_time_s, interval_s=float(tau))
        pts.append(_point(inp, float(tau), replicas, seed))
    return pts


def sweep_cluster_size(
    scenario: Scenario,
    *,
    step_time_s: float,
    gpus: Sequence[int] | None = None,
    replicas: int = 300,
    seed: int = 0,
) -> list[SweepPoint]:
    """ETTR of the same job practice at other job sizes (default: the job's GPUs × 1/64 … 4)."""
    base = campaign_inputs(scenario, step_time_s=step_time_s)
    span = None if base.work_s is None else base.work_s / max(expected_ettr(base), 1e-9)
    if gpus is None:
        per = scenario.cluster.gpus_per_node
        gpus = sorted({max(per, round(scenario.gpus * f / per) * per) for f in SIZE_FACTORS})
    pts = []
    for g in gpus:
        inp = _windowed(campaign_inputs(scenario, step_time_s=step_time_s, gpus=int(g)), span)
        pts.append(_point(inp, float(g), replicas, seed))
    return pts
