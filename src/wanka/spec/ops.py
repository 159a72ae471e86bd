"""Operations-domain and facility inputs of a scenario: failures, checkpointing, cooling."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveInt

from wanka.spec.base import Spec

__all__ = ["CheckpointSpec", "FacilitySpec", "FailureSpec"]


class FailureSpec(Spec):
    """How often things break and how the operators respond (智算运营和运维域)."""

    rates: str = Field("llama3-405b", description="catalog failure-rate table")
    rate_scale: float = Field(1.0, ge=0, le=1000, description="multiplies every component rate")
    distribution: Literal["exponential", "weibull"] = "exponential"
    weibull_shape: float = Field(1.0, gt=0, le=10)
    detection_s: float = Field(
        120.0, ge=0, le=86_400, description="time until a fail-stop failure is noticed (heartbeat / watchdog)"
    )
    restart_s: float = Field(600.0, ge=0, le=86_400, description="diagnose, isolate, reschedule, re-init")
    hot_spares: int | None = Field(
        None,
        ge=0,
        le=1_000_000,
        description="spare nodes kept ready beside the cluster; None = a pool sized by the operators' rule "
        "(catalog failures.yaml spare_pool, printed as an assumption)",
    )
    elastic: bool = Field(
        False,
        description="shrink and continue: when no spare is free, drop the failed node's data-parallel replica "
        "and train on fewer nodes until it is repaired, instead of waiting",
    )
    repair_s: float = Field(4 * 3600.0, ge=0, le=30 * 86_400, description="time to repair a node without spares")
    planned_interruptions_per_day: float = Field(0.0, ge=0, le=100)
    straggler_fraction: float = Field(0.0, ge=0, le=1, description="share of nodes running slow")
    straggler_slowdown: float = Field(1.0, ge=1, le=100, description="step-time factor of a slow node")
    evict_stragglers: bool = True


class CheckpointSpec(Spec):
    """How state is saved: interval (None = Young/Daly optimum), mode and target."""

    interval_s: float | None = Field(
        None, gt=0, le=30 * 86_400, description="None = Young/Daly optimum within the limits (whole steps ≥ persist)"
    )
    mode: Literal["sync", "async", "in_memory"] = "async"
    coordination_s: float | None = Field(
        None,
        ge=0,
        le=3600,
        description="per-save planning, barriers and metadata the job blocks on; None = from published "
        "measurements (storage_defaults.yaml checkpoint_coordination)",
    )
    sharded: bool = True
    include_optimizer: bool = True


class FacilitySpec(Spec):
    """The 机房配套层: cooling, PUE, rack budget, energy price and carbon intensity."""

    cooling: Literal["air", "liquid", "immersion"] = "air"
    pue: float | None = Field(None, ge=1.0, le=3.0, description="None = typical for the cooling type")
    rack_power_kw: float | None = Field(None, gt=0, le=1000, description="None = typical for the cooling type")
    currency: Literal["USD", "CNY"] = "USD"
    electricity_usd_per_kwh: float = Field(0.08, ge=0, le=10, description="used when currency is USD")
    electricity_price_per_kwh: float | None = Field(
        None, ge=0, le=100, description="in `currency`; None = electricity_usd_per_kwh (USD) or the CNY default"
    )
    grid_kgco2_per_kwh: float | None = Field(
        None, ge=0, le=2, description="None = 0.4 for USD sites, the Chinese national grid factor for CNY"
    )
    gpu_utilization: float | None = Field(None, ge=0, le=1, description="None = from the step model")
    hardware_usd_per_gpu: float | None = Field(None, ge=0, description="capex input; never invented")
    gpus_per_rack: PositiveInt | None = None
