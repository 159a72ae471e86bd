"""Power of one node at a given compute utilisation (catalog node + accelerator, facility.yaml curves).

Accelerator: ``P = idle + (TDP − idle) · min(1, u/knee)^exponent``, ``u`` the hardware-FLOP
utilisation (HFU; MFU when unknown) — power saturates well before peak FLOP/s because GEMM-heavy
kernels hit the board power limit first, so LLM training draws close to the limit; host parts (CPUs between
``cpu_idle_fraction·TDP`` and TDP, the node's ``other_w`` between ``idle_other_w`` and ``other_w``)
follow ``h = min(1, u/host_knee)``. At ``u = 1`` every part is at its maximum, which for catalog
nodes built as ``max_power_w − GPUs·TDP − CPUs·TDP = other_w`` is the published system maximum.
Curve constants and their sources: ``facility.yaml`` (power_curve): an H100 at ≥ 30 % HFU draws its
700 W; idle accelerators (nodes outside the job) draw their idle power.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from wanka.catalog import Accelerator, Node
from wanka.errors import SpecError
from wanka.facility.facts import facts

__all__ = ["NodePower", "accelerator_power_w", "check_utilization", "host_activity", "node_power"]


def check_utilization(u: float, field: str = "utilization") -> float:
    """``u`` if it is a number in [0, 1]; a SpecError naming ``field`` otherwise."""
    if not (isinstance(u, int | float) and math.isfinite(u) and 0.0 <= u <= 1.0):
        raise SpecError(f"= {u!r}: must be a number between 0 and 1 (compute utilisation, MFU)", field=field)
    return float(u)


def accelerator_power_w(acc: Accelerator, utilization: float) -> float:
    """Board power of one accelerator at compute utilisation ``utilization`` (0 idle … 1 peak)."""
    u = check_utilization(utilization)
    c = facts().power_curve
    return acc.idle_w + (acc.tdp_w - acc.idle_w) * min(1.0, u / c.accelerator_knee) ** c.accelerator_exponent


def host_activity(utilization: float) -> float:
    """Share of the way from idle to full load of the host parts (CPUs, fans, NICs …)."""
    u = check_utilization(utilization)
    return min(1.0, u / facts().power_curve.host_knee)


@dataclass(frozen=True)
class NodePower:
    """One node's draw in W, by part."""

    node: str
    utilization: float
    accelerators_w: float
    cpus_w: float
    other_w: float  # fans, NVSwitch, NICs, DIMMs, drives, conversion losses
    max_published_w: float | None

    @property
    def total_w(self) -> float:
        return self.accelerators_w + self.cpus_w + self.other_w

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total_w": self.total_w}


def node_power(node: Node, acc: Accelerator, utilization: float) -> NodePower:
    """Draw of ``node`` (with ``node.gpus`` × ``acc``) at ``utilization``.

    >>> from wanka.catalog import accelerator, node
    >>> round(node_power(node("DGX-H100"), accelerator("H100"), 1.0).total_w)
    10200
    """
    h = host_activity(utilization)
    idle_cpu = facts().host.cpu_idle_fraction * node.cpu_tdp_w
    return NodePower(
        node=node.name,
        utilization=float(utilization),
        accelerators_w=node.gpus * accelerator_power_w(acc, utilization),
        cpus_w=node.cpus * (idle_cpu + (node.cpu_tdp_w - idle_cpu) * h),
        other_w=node.idle_other_w + (node.other_w - node.idle_other_w) * h,
        max_published_w=node.max_power_w,
    )
