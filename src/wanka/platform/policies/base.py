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
from itertools import chain, islice
from typing import TYPE_CHECKING

import numpy as np

from wanka.platform.jobs import JobRun

if TYPE_CHECKING:
    from wanka.platform.simulator import Reservation, Simulator

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
        # idle-pass memo: (state version, queue version) after a pass that started nothing, and its
        # reservation; the queue version moves on every change that can alter the pass's window
        self.qver = 0
        self._idle: tuple[int, int] | None = None
        self._idle_res: Reservation | None = None
        # the memo holds when the order is arrival order in one queue (a later arrival cannot enter
        # a full window) and a pass has no side effect when nothing starts (no preemption)
        self._win: list[int] = []
        self._win_np: np.ndarray | None = None
        self._win_ver = -1
        self.memo = type(self).order is QueuePolicy.order and type(self).key is QueuePolicy.key and not self.preempt

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
        if self.n <= self.depth or not self.memo:
            self.qver += 1  # the window was not full: the new job is in it
        self._q(r)[1][r.idx] = r
        self._count(r, 1)

    def requeue(self, r: JobRun) -> None:
        self.qver += 1
        self._q(r)[0][r.idx] = r
        self._count(r, 1)

    def remove(self, r: JobRun) -> None:
        self.qver += 1
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
    def window(self) -> list[int]:
        """Indices of the first ``depth + 1`` waiting jobs in serving order (what one pass may try)."""
        if self.memo and self._win_ver == self.qver:
            return self._win
        ids: Iterator[int]
        if self.memo and len(self.queues) == 1:  # one queue in arrival order (the common case): its two dicts
            front, main = next(iter(self.queues.values()))
            ids = chain(front, main)
        elif type(self).order is QueuePolicy.order:  # dict keys in C, no JobRun touched
            ids = chain.from_iterable(chain(*self.queues[k]) for k in self.key_order())
        else:
            ids = (r.idx for r in self.order())
        self._win = list(islice(ids, self.depth + 1))
        self._win_np = None
        self._win_ver = self.qver
        return self._win

    def _window_np(self) -> np.ndarray:
        """:meth:`window` as a numpy array (built once per window)."""
        if self._win_np is None:
            self._win_np = np.array(self._win, dtype=np.int64)
        return self._win_np

    def schedule(self, sim: Simulator, now: float) -> None:
        """One pass. The first phase starts jobs in order until the head blocks; the backfill phase
        then tries only the jobs that pass :meth:`Simulator.fits_quick` and the reservation test
        at its start, found with numpy over the window: no job starts or stops except by this
        pass meanwhile, so free capacity and the reservation's spare nodes only shrink and a job
        that fails then fails later in the pass too (the schedule of trying every job, less work)."""
        if not self.n:
            return
        if not sim.anything_fits(self) and not (self.preempt and sim.can_preempt(self.top_priority())):
            return
        st = sim.state
        token = (st.version, self.qver)
        if token == self._idle and self.memo:
            # same free GPUs, same window, nothing started last time: every job fails again (a long
            # job stays long as time moves on) provided the head's reservation is the same object
            res = self._idle_res
            if res is None or (sim.res is res and res.epoch == sim.epoch and res.shadow >= now):
                return
        res = self._pass(sim, now)
        if (st.version, self.qver) == token:
            self._idle, self._idle_res = token, res
        else:
            self._idle = None

    def _pass(self, sim: Simulator, now: float) -> Reservation | None:
        """The pass proper; returns the head's reservation if it made one."""
        ids = self.window()
        runs = sim.runs
        st = sim.state
        i = 0
        res = None
        for idx in ids:
            r = runs[idx]
            i += 1
            if st.up_gpus - st.busy_gpus <= 0 and not self.preempt:  # st.free_gpus, inline
                return None
            if sim.try_start(r, now):
                self.remove(r)
                continue
            if self.preempt and sim.preempt_for(r, now) and sim.try_start(r, now):
                self.remove(r)
                continue
            if not self.backfill:
                return None
            res = sim.reservation(r, now)
            break
        if res is None or i >= len(ids):
            return res
        counts = st.counts
        G = st.G
        full = counts[G]  # fully free nodes
        big = st.largest_free()  # most free GPUs on one node
        rest = self._window_np()[i:]
        rest = rest[(sim.q_nodes[rest] <= full) & (sim.q_gpus[rest] <= big)]
        if not rest.size:
            return res
        long = (now + sim.q_remaining[rest]) + sim.q_restart[rest] > res.shadow
        ok = ~long | (sim.q_units[rest] <= res.extra)
        for idx, lg in zip(rest[ok].tolist(), long[ok].tolist(), strict=True):
            r = runs[idx]
            if r.n_nodes > full if r.whole else r.per_node > big:
                continue
            if lg and res.extra < r.units:
                continue
            if sim.try_start(r, now):
                self.remove(r)
                if lg:
                    res.extra -= r.units
                full = counts[G]
                big = st.largest_free()
        return res
