"""Priority with preemption: higher ``priority`` first; a blocked job may evict lower-priority ones.

Queue order is priority (high first), then arrival. When the first job that does not fit has a
higher priority than some running jobs, those are preempted — lowest priority first, most
recently started first (least work lost) — until it fits; a victim keeps the work up to its last
checkpoint and goes to the front of its priority's queue. Otherwise EASY backfill applies.
"""

from __future__ import annotations

from collections.abc import Hashable

from wanka.platform.jobs import JobRun
from wanka.platform.policies.base import QueuePolicy

__all__ = ["PriorityPreemption"]


class PriorityPreemption(QueuePolicy):
    name = "priority_preemption"
    backfill = True
    preempt = True

    def key(self, r: JobRun) -> Hashable:
        return r.job.priority

    def key_order(self) -> list[Hashable]:
        return sorted(self.queues, key=lambda k: -int(k))  # type: ignore[call-overload]
