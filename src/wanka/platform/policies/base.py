"""What every scheduling policy shares: the wait queue and the gang-scheduling pass.

A pass walks waiting jobs in the policy's order. The first job that cannot start is the *head*:
with ``backfill`` it gets an EASY reservation (Lifka, "The ANL/IBM SP scheduling system",
JSSPP 1995; Mu'alem & Feitelson, IEEE TPDS 2001): later jobs may start only if they end before
the head's reserved start (the *shadow time*) or use only nodes the head will not need (the
*extra* nodes). Without backfill the pass stops at the head (strict order, FIFO). With
``preempt`` the head may first evict lower-priority running jobs. At most ``depth`` jobs behind
the head are tried per pass (Slurm's ``bf_max_job_test``).

Restarted jobs (after a failure or preemption) go to the front of their queue.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterator
from itertools import islice
from typing import TYPE_CHECKING

from wanka.platform.jobs import JobRun

if TYPE_CHECKING:
    from wanka.platform.simulator import Simulator

__all__ = ["QueuePolicy"]


class QueuePolicy:
    """Wait queue (per key: a front for restarts, then arrival order) and the scheduling pass."""

    name = "base"
    backfill = False
    preempt = False

    def __init__(self, gpus_per_node: int, depth: int = 100) -> None:
        self.depth = depth
        self.queues: dict[Hashable, tuple[dict[int, JobRun], dict[int, JobRun]]] = {}
        self.n = 0
        self.wait_small = [0] * (gpus_per_node + 1)  # waiting sub-node jobs by GPUs (a list: hot path)
        self.wait_whole: Counter[int] = Counter()  # waiting whole-node jobs by nodes
        self.G = gpus_per_node

    # ------------------------------------------------------------ queue
    def key(self, r: JobRun) -> Hashable:
        return 0

    def _q(self, r: JobRun) -> tuple[dict[int, JobRun], dict[int, JobRun]]:
        k = self.key(r)
        q = self.queues.get(k)
        if q is None:
            q = self.queues[k] = ({}, {})
        return q

    def _count(self, r: JobRun, d: int) -> None:
        self.n += d
        if r.whole:
            self.wait_whole[r.n_nodes] += d
            if self.wait_whole[r.n_nodes] == 0:
                del self.wait_whole[r.n_nodes]
        else:
            self.wait_small[r.per_node] += d

    def add(self, r: JobRun) -> None:
        self._q(r)[1][r.idx] = r
        self._count(r, 1)

    def requeue(self, r: JobRun) -> None:
        self._q(r)[0][r.idx] = r
        self._count(r, 1)

    def remove(self, r: JobRun) -> None:
        front, main = self._q(r)
        if front.pop(r.idx, None) is None:
            del main[r.idx]
        self._count(r, -1)

    def __len__(self) -> int:
        return self.n

    def key_order(self) -> list[Hashable]:
        return list(self.queues)

    def order(self) -> Iterator[JobRun]:
        """Waiting jobs in the order the policy serves them."""
        for k in self.key_order():
            front, main = self.queues[k]
            yield from front.values()
            yield from main.values()

    # ------------------------------------------------------------ demand summary
    def min_small(self) -> int:
        return next((g for g, n in enumerate(self.wait_small) if n), 0)

    def min_whole(self) -> int:
        return min(self.wait_whole) if self.wait_whole else 0

    def account(self, r: JobRun, sign: int, now: float) -> None:
        """Told when ``r`` starts (+1) or stops (−1); policies that track usage override this."""

    def top_priority(self) -> int:
        """Highest priority among waiting jobs."""
        return (
            max(
                (r.job.priority for q in self.queues.values() for d in q for r in islice(d.values(), 1)),
                default=0,
            )
            if self.n
            else 0
        )

    # ------------------------------------------------------------ the pass
    def schedule(self, sim: Simulator, now: float) -> None:
        if not self.n:
            return
        if not sim.anything_fits(self) and not (self.preempt and sim.can_preempt(self.top_priority())):
            return
        res = None
        for r in list(islice(self.order(), self.depth + 1)):
            if sim.state.free_gpus <= 0 and not self.preempt:
                break
            if res is None:
                if sim.try_start(r, now):
                    self.remove(r)
                    continue
                if self.preempt and sim.preempt_for(r, now) and sim.try_start(r, now):
                    self.remove(r)
                    continue
                if not self.backfill:
                    break
                res = sim.reservation(r, now)
                continue
            if not sim.fits_quick(r):
                continue
            long = now + r.remaining + sim.restart_cost(r) > res.shadow
            if long and res.extra < r.units:
                continue
            if sim.try_start(r, now):
                self.remove(r)
                if long:
                    res.extra -= r.units
