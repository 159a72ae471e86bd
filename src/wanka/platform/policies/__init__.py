"""Scheduling and placement policies, pluggable by name.

Scheduling (queue order and gang-start rules): ``fifo``, ``easy_backfill``,
``priority_preemption``, ``fair_share``. Placement (which nodes): ``topology_aware``,
``topology_blind``. Add one: a module here with a class like its siblings, and a line below.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from wanka.errors import SpecError
from wanka.platform.policies.base import QueuePolicy
from wanka.platform.policies.easy_backfill import EasyBackfill
from wanka.platform.policies.fair_share import FairShare
from wanka.platform.policies.fifo import Fifo
from wanka.platform.policies.priority_preemption import PriorityPreemption
from wanka.platform.policies.topology_aware import TopologyAware
from wanka.platform.policies.topology_blind import TopologyBlind
from wanka.platform.state import ClusterState

__all__ = [
    "PLACEMENTS",
    "SCHEDULERS",
    "Placement",
    "QueuePolicy",
    "make_placement",
    "make_scheduler",
]

SCHEDULERS: dict[str, type[QueuePolicy]] = {
    "fifo": Fifo,
    "easy_backfill": EasyBackfill,
    "priority_preemption": PriorityPreemption,
    "fair_share": FairShare,
}
Placement = TopologyAware | TopologyBlind
PLACEMENTS: dict[str, type[TopologyAware] | type[TopologyBlind]] = {
    "topology_aware": TopologyAware,
    "topology_blind": TopologyBlind,
}


def make_scheduler(
    name: str, gpus_per_node: int, *, depth: int = 100, quotas: Mapping[str, float] | None = None
) -> QueuePolicy:
    """A scheduling policy by name (SpecError naming the choices otherwise)."""
    cls = SCHEDULERS.get(name)
    if cls is None:
        raise SpecError(f"= {name!r}: unknown policy; choose one of {', '.join(SCHEDULERS)}", field="policy")
    if cls is FairShare:
        return FairShare(gpus_per_node, depth, quotas)
    return cls(gpus_per_node, depth)


def make_placement(name: str, state: ClusterState, rng: np.random.Generator) -> Placement:
    cls = PLACEMENTS.get(name)
    if cls is None:
        raise SpecError(f"= {name!r}: unknown placement; choose one of {', '.join(PLACEMENTS)}", field="placement")
    return cls(state, rng)
