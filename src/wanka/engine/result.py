"""Typed results of the step model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["MemoryBreakdown", "StepResult"]


@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes per GPU on the busiest pipeline stage."""

    weights: float
    gradients: float
    optimizer: float
    activations: float
    buffers: float
    capacity: float
    # activations offloaded to host memory (one micro-batch's offloaded layers) and the host memory per
    # GPU they may fill (the node's over its GPUs; inf when no catalog node is known)
    offloaded: float = 0.0
    host_capacity: float = float("inf")

    @property
    def total(self) -> float:
        """Bytes in HBM (offloaded activations are not among them)."""
        return self.weights + self.gradients + self.optimizer + self.activations + self.buffers

    @property
    def fits_hbm(self) -> bool:
        return self.total <= self.capacity

    @property
    def fits_host(self) -> bool:
        return self.offloaded <= self.host_capacity

    @property
    def fits(self) -> bool:
        return self.fits_hbm and self.fits_host

    def to_dict(self) -> dict[str, Any]:
        return {
            "weights": self.weights,
            "gradients": self.gradients,
            "optimizer": self.optimizer,
            "activations": self.activations,
            "buffers": self.buffers,
            "total": self.total,
            "capacity": self.capacity,
            "offloaded": self.offloaded,
            "host_capacity": None if self.host_capacity == float("inf") else self.host_capacity,
            "fits": self.fits,
        }


@dataclass(frozen=True)
class StepResult:
    """One training step of one strategy: time, where it goes, memory, traffic, MFU.

    ``breakdown`` values (seconds) sum to ``step_time_s``. MFU counts model FLOPs,
    ``6·N_active + 6·attention`` per token (PaLM convention; see
    :func:`wanka.workload.model_flops_per_token`), against the dense peak of the training precision;
    HFU adds recomputed FLOPs.
    """

    step_time_s: float
    breakdown: dict[str, float]
    tokens_per_step: float
    tokens_per_s_per_gpu: float
    mfu: float
    hfu: float
    memory: MemoryBreakdown
    traffic_bytes: dict[str, float]
    micro_batches: int
    gpus: int
    time_to_train_s: float
    model_flops_per_token: float
    strategy: dict[str, Any]
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    # seconds per step each concern keeps each GPU link busy at its achievable bandwidth:
    # {"scale_up" | "nic": {"tp" | "cp" | "ep" | "pp" | "dp": s}}; exposed communication on a link is
    # at least its busy time less the compute that can overlap it
    link_busy_s: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_s_per_gpu * self.gpus

    def exposed_comm_s(self) -> float:
        b = self.breakdown
        return b["tp_comm"] + b["cp_comm"] + b["ep_comm"] + b["pp_comm"] + b["dp_comm"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "step_time_s": self.step_time_s,
            "breakdown_s": dict(self.breakdown),
            "tokens_per_step": self.tokens_per_step,
            "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu,
            "mfu": self.mfu,
            "hfu": self.hfu,
            "memory_bytes": self.memory.to_dict(),
            "traffic_bytes": dict(self.traffic_bytes),
            "micro_batches": self.micro_batches,
            "gpus": self.gpus,
            "time_to_train_s": self.time_to_train_s,
            "model_flops_per_token": self.model_flops_per_token,
            "strategy": dict(self.strategy),
            "assumptions": list(self.assumptions),
            "link_busy_s": {k: dict(v) for k, v in self.link_busy_s.items()},
        }
