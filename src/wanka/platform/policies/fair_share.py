"""Fair share: per-tenant queues served by lowest usage relative to the tenant's quota.

Each tenant has a quota (a share of the cluster's GPUs; equal shares unless given). Usage is the
tenant's GPU-seconds with exponential decay (half-life ``HALF_LIFE_S``, as Slurm's multifactor
fair-share, ``PriorityDecayHalfLife``), accrued while its jobs run. A pass interleaves tenants'
jobs by ``(usage + expected GPU-seconds of jobs picked this pass) / quota``, lowest first
(one-resource dominant-share fairness, Ghodsi et al., NSDI 2011). Quotas are soft: a
tenant over quota still borrows idle GPUs (Kueue's cohort borrowing). The first job that does
not fit gets an EASY reservation, as in :mod:`~wanka.platform.policies.easy_backfill`.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterator, Mapping
from itertools import chain, islice

from wanka.platform.jobs import JobRun
from wanka.platform.policies.base import QueuePolicy

__all__ = ["HALF_LIFE_S", "FairShare"]

HALF_LIFE_S = 86_400.0  # decay half-life of past usage (Slurm's default is 7 days; one day here)


class FairShare(QueuePolicy):
    name = "fair_share"
    backfill = True
    preempt = False

    def __init__(self, gpus_per_node: int, depth: int = 100, quotas: Mapping[str, float] | None = None) -> None:
        super().__init__(gpus_per_node, depth)
        self.quotas = dict(quotas or {})
        self.hist: dict[str, list[float]] = {}  # tenant → [decayed GPU-s, running GPUs, as-of time]
        self.now = 0.0

    def key(self, r: JobRun) -> Hashable:
        return r.job.tenant

    def quota(self, tenant: str) -> float:
        q = self.quotas.get(tenant)
        return q if q is not None and q > 0 else 1.0 / max(1, len(self.queues))

    def _usage(self, tenant: str, now: float) -> float:
        h = self.hist.get(tenant)
        if h is None:
            return 0.0
        dt = now - h[2]
        if dt > 0:
            h[0] = h[0] * 0.5 ** (dt / HALF_LIFE_S) + h[1] * dt
            h[2] = now
        return h[0]

    def account(self, r: JobRun, sign: int, now: float) -> None:
        t = r.job.tenant
        if t not in self.hist:
            self.hist[t] = [0.0, 0.0, now]
        self._usage(t, now)
        self.hist[t][1] += sign * r.alloc
        self.now = now

    def order(self) -> Iterator[JobRun]:
        heap: list[tuple[float, str, Iterator[JobRun]]] = []
        picked: dict[str, float] = {}
        for t, (front, main) in self.queues.items():
            if front or main:
                it: Iterator[JobRun] = islice(chain(front.values(), main.values()), self.depth + 1)
                tenant = str(t)
                heap.append((self._usage(tenant, self.now) / self.quota(tenant), tenant, it))
        heapq.heapify(heap)
        while heap:
            _, tenant, it = heapq.heappop(heap)
            r = next(it, None)
            if r is None:
                continue
            yield r
            picked[tenant] = picked.get(tenant, 0.0) + r.alloc * r.remaining
            ratio = (self._usage(tenant, self.now) + picked[tenant]) / self.quota(tenant)
            heapq.heappush(heap, (ratio, tenant, it))
