"""Discrete-event simulation of a shared GPU cluster: submit, start, finish, fail, repair.

>>> from wanka.spec import ClusterSpec
>>> from wanka.platform import simulate, synthetic_workload
>>> spec = ClusterSpec(accelerator="H100", nodes=64)
>>> r = simulate(spec, synthetic_workload("acme-seren", spec, jobs=300, seed=1), "easy_backfill", seed=1)
>>> r.completed == r.jobs - r.rejected
True

Events sit in one heap ordered by (time, sequence); submissions are merged from the sorted
workload. All events at one instant are applied, then the policy runs one pass. Jobs are gangs:
every GPU starts together. A failed node kills the jobs on it; they keep the work up to their last
checkpoint, pay the restart cost and go to the front of the queue, so they restart on any free
(spare) nodes at once or as soon as some free up; the node returns after the repair time.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping

import numpy as np

from wanka.errors import SpecError
from wanka.platform.cluster import Cluster
from wanka.platform.failures import FailureModel, cluster_failure_model, node_failure_model
from wanka.platform.jobs import JobRun, Workload
from wanka.platform.metrics import Locality, ScheduleResult, percentiles, size_buckets
from wanka.platform.policies import QueuePolicy, make_placement, make_scheduler
from wanka.platform.policies.fair_share import FairShare
from wanka.platform.state import ClusterState
from wanka.spec import ClusterSpec

__all__ = ["Reservation", "Simulator", "simulate"]

_FINISH, _REPAIR, _FAIL = 0, 1, 2
_TIMELINE_BINS = 100
PREEMPT_RETRY_S = 300.0  # retry a failed preemption for the same job after this long (sim time)


class Reservation:
    """EASY reservation of the blocked head job: its shadow time and the spare node units."""

    __slots__ = ("epoch", "extra", "idx", "shadow")

    def __init__(self, idx: int, epoch: int, shadow: float, extra: int) -> None:
        self.idx = idx
        self.epoch = epoch
        self.shadow = shadow
        self.extra = extra


class Simulator:
    """One simulation run; state in this object, randomness from ``seed``."""

    def __init__(
        self,
        cluster: Cluster,
        workload: Workload,
        policy: str = "easy_backfill",
        placement: str = "topology_aware",
        *,
        seed: int = 0,
        failures: FailureModel | None = None,
        backfill_depth: int = 100,
        quotas: Mapping[str, float] | None = None,
        record_allocations: bool = False,
        check_invariants: bool = False,
    ) -> None:
        if backfill_depth < 1:
            raise SpecError(f"= {backfill_depth}: must be ≥ 1", field="backfill_depth")
        self.cluster = cluster
        self.workload = workload
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.state = ClusterState(cluster)
        self.policy: QueuePolicy = make_scheduler(policy, cluster.gpus_per_node, depth=backfill_depth, quotas=quotas)
        self.placement = make_placement(placement, self.state, self.rng)
        # the usage hook only where the policy tracks usage (a call per start and stop otherwise)
        self._account = None if type(self.policy).account is QueuePolicy.account else self.policy.account
        self.failures = failures
        self.ckpt_model = failures or node_failure_model()
        self.record = record_allocations
        self.check = check_invariants
        G = cluster.gpus_per_node
        npd = cluster.nodes_per_domain  # a numpy reduction: once, not per job
        self.runs = [JobRun(i, j, G, npd, self._mask(j.gpu_models)) for i, j in enumerate(workload.jobs)]
        # per-job arrays the scheduling pass filters with numpy (kept equal to the JobRun fields)
        self.q_nodes = np.array([r.n_nodes if r.whole else 0 for r in self.runs], dtype=np.int64)
        self.q_gpus = np.array([0 if r.whole else r.per_node for r in self.runs], dtype=np.int64)
        self.q_units = np.array([r.units for r in self.runs], dtype=np.int64)
        self.q_remaining = np.array([r.remaining for r in self.runs], dtype=float)
        self.q_restart = np.zeros(len(self.runs))
        self.running: dict[int, JobRun] = {}
        self.heap: list[tuple[float, int, int, int, int]] = []
        self.seq = 0
        self.epoch = 0
        self.res: Reservation | None = None
        self.tenant_usage: dict[str, float] = {}
        self.running_by_priority: dict[int, int] = {}
        self.preemptions = 0
        self._preempt_tried: dict[int, float] = {}
        self.node_failures = 0
        self.allocations: list[tuple[int, float, float, tuple[int, ...], int]] = []
        self._alloc_open: dict[int, tuple[float, tuple[int, ...], int]] = {}

    def _mask(self, models: frozenset[str] | None) -> np.ndarray | None:
        if not models or self.cluster.models is None:
            return None
        return np.array([m in models for m in self.cluster.models], dtype=bool)

    # ------------------------------------------------------------ policy interface
    def restart_cost(self, r: JobRun) -> float:
        return self.ckpt_model.restart_s if r.attempt > 0 else 0.0

    def fits_quick(self, r: JobRun) -> bool:
        """Necessary condition from the counters (placement has the last word)."""
        st = self.state
        if r.whole:
            return bool(st.counts[st.G] >= r.n_nodes)
        return st.can_fit_small(r.per_node)

    def anything_fits(self, q: QueuePolicy) -> bool:
        st = self.state
        counts = st.counts
        for g, n in enumerate(q.wait_small):  # q.min_small() and st.can_fit_small(), inline (once per pass)
            if n:
                if g and any(counts[g:]):
                    return True
                break
        n = q.min_whole()
        return bool(n and counts[st.G] >= n)

    def try_start(self, r: JobRun, now: float) -> bool:
        st = self.state
        if r.whole:  # fits_quick, inline (a call per pass and job)
            if st.counts[st.G] < r.n_nodes:
                return False
        elif not st.can_fit_small(r.per_node):
            return False
        nodes = self.placement.place(r)
        if nodes is None:
            return False
        r.overhead = self.restart_cost(r) if r.attempt else 0.0
        r.start = now
        r.end = now + r.overhead + r.remaining
        r.nodes = nodes
        st.allocate(nodes, r.per_node, r.idx, r.end)
        if r.first_start < 0:
            r.first_start = now
            if nodes.size > 1:
                c = self.cluster
                lv = c.leaf[nodes]
                r.one_leaf = bool(lv.min() == lv.max())
                pv = c.pod[nodes]
                r.one_pod = bool(pv.min() == pv.max())
                r.leaves = int(np.unique(lv).size)
        self.running[r.idx] = r
        if self._account is None:
            self._use_fast(r, r.alloc)
        else:
            self._use(r, +1, now)
        self.seq += 1
        heapq.heappush(self.heap, (r.end, _FINISH, self.seq, r.idx, r.attempt))
        if self.record:
            self._alloc_open[r.idx] = (now, tuple(nodes.tolist()), r.per_node)
        return True

    def _use_fast(self, r: JobRun, gpus: int) -> None:
        """:meth:`_use` without the policy's usage hook (``gpus`` = ±``r.alloc``)."""
        t = r.job.tenant
        tu = self.tenant_usage
        tu[t] = tu.get(t, 0.0) + gpus
        p = r.job.priority
        rp = self.running_by_priority
        rp[p] = rp.get(p, 0) + gpus

    def _use(self, r: JobRun, sign: int, now: float) -> None:
        if self._account is not None:
            self._account(r, sign, now)
        t = r.job.tenant
        self.tenant_usage[t] = self.tenant_usage.get(t, 0.0) + sign * r.alloc
        p = r.job.priority
        self.running_by_priority[p] = self.running_by_priority.get(p, 0) + sign * r.alloc

    def reservation(self, r: JobRun, now: float) -> Reservation:
        """Shadow time: when ``r.units`` suitable nodes will be free if running jobs end on time."""
        res = self.res
        if res is not None and res.idx == r.idx and res.epoch == self.epoch and res.shadow >= now:
            return res
        st = self.state
        f = st.free
        ok = (f == st.G) if r.whole else (f >= r.per_node)
        t = np.where(ok, now, st.busy_until)
        usable = self.cluster.gpus >= (st.G if r.whole else r.per_node)
        if r.mask is not None:
            usable &= r.mask
        t = np.where(usable, t, np.inf)
        need = r.units
        if need > int(usable.sum()):
            shadow, extra = np.inf, 0
        else:
            shadow = float(np.partition(t, need - 1)[need - 1])
            extra = int((t <= shadow).sum()) - need
        self.res = Reservation(r.idx, self.epoch, shadow, extra)
        return self.res

    def can_preempt(self, p: int) -> bool:
        """Some running job has a priority below ``p``."""
        return any(v > 0 for k, v in self.running_by_priority.items() if k < p)

    def preempt_for(self, r: JobRun, now: float) -> bool:
        """Evict lower-priority jobs so ``r`` fits; False (nothing evicted) if that cannot work.

        Whole-node jobs: clear the nodes held only by lower-priority jobs, fewest jobs first.
        Sub-node jobs: the one node that needs the fewest evictions. A failed attempt for the
        same job is not retried within ``PREEMPT_RETRY_S`` of simulated time.
        """
        p = r.job.priority
        lower = sum(v for k, v in self.running_by_priority.items() if k < p)
        st = self.state
        if lower <= 0 or lower + st.free_gpus < r.alloc:
            return False
        last = self._preempt_tried.get(r.idx)
        if last is not None and now - last < PREEMPT_RETRY_S:
            return False
        run = self.running
        G = st.G
        cap = self.cluster.gpus
        if r.whole:
            need = r.n_nodes - int(st.counts[G])
            busy = np.flatnonzero((st.free >= 0) & (st.free < G) & (cap == G))
            if r.mask is not None:
                busy = busy[r.mask[busy]]
            cands = []
            for n in busy.tolist():
                jobs = st.node_jobs[n]
                if all(run[j].job.priority < p for j in jobs):
                    cands.append((len(jobs), n))
            if len(cands) < need:
                self._preempt_tried[r.idx] = now
                return False
            cands.sort()
            for _, n in cands:
                for j in sorted(st.node_jobs[n]):
                    self._preempt(run[j], now)
                if st.counts[G] >= r.n_nodes:
                    break
            return True
        g = r.per_node
        ok = (st.free >= 0) & (cap >= g)
        if r.mask is not None:
            ok &= r.mask
        best: tuple[int, int] | None = None
        for n in np.flatnonzero(ok).tolist():
            victims = [run[j] for j in st.node_jobs[n] if run[j].job.priority < p]
            if (
                victims
                and int(st.free[n]) + sum(v.per_node for v in victims) >= g
                and (best is None or len(victims) < best[0])
            ):
                best = (len(victims), n)
        if best is None:
            self._preempt_tried[r.idx] = now
            return False
        n = best[1]
        for v in sorted(
            (run[j] for j in st.node_jobs[n] if run[j].job.priority < p),
            key=lambda v: (v.job.priority, -v.start),
        ):
            self._preempt(v, now)
            if st.free[n] >= g:
                break
        return True

    def _preempt(self, v: JobRun, now: float) -> None:
        self._kill(v, now, "preempt")
        self.preemptions += 1
        v.preemptions += 1

    # ------------------------------------------------------------ events
    def _kill(self, r: JobRun, now: float, cause: str) -> None:
        assert r.nodes is not None
        elapsed = now - r.start
        worked = max(0.0, elapsed - r.overhead)
        saved = min(self.ckpt_model.saved_work(worked), r.remaining)
        lost = (elapsed - saved) * r.alloc
        if cause == "failure":
            r.lost_failure += lost
        else:
            r.lost_preempt += lost
        r.remaining -= saved
        self.q_remaining[r.idx] = r.remaining
        nodes = r.nodes
        st = self.state
        st.release(nodes, r.per_node, r.idx)
        for n in nodes.tolist():
            st.busy_until[n] = max((self.running[j].end for j in st.node_jobs[n]), default=now)
        self._close_alloc(r, now)
        del self.running[r.idx]
        self._use(r, -1, now)
        r.nodes = None
        r.attempt += 1
        self.q_restart[r.idx] = self.restart_cost(r)
        r.restarts += 1
        r.last_cause = cause
        self.epoch += 1
        self.policy.requeue(r)

    def _finish(self, r: JobRun, now: float) -> None:
        assert r.nodes is not None
        extra = r.overhead * r.alloc  # restart cost of the last attempt
        if r.last_cause == "failure":
            r.lost_failure += extra
        elif r.last_cause == "preempt":
            r.lost_preempt += extra
        self.state.release(r.nodes, r.per_node, r.idx)
        if self.record:
            self._close_alloc(r, now)
        del self.running[r.idx]
        if self._account is None:
            self._use_fast(r, -r.alloc)
        else:
            self._use(r, -1, now)
        r.nodes = None
        r.remaining = 0.0
        r.finish = now

    def _close_alloc(self, r: JobRun, now: float) -> None:
        if self.record:
            start, nodes, per = self._alloc_open.pop(r.idx)
            self.allocations.append((r.idx, start, now, nodes, per))

    def _fail(self, now: float) -> None:
        st = self.state
        up = np.flatnonzero(st.up)
        if up.size == 0:
            return
        n = int(up[self.rng.integers(up.size)])
        for j in sorted(st.node_jobs[n]):
            self._kill(self.running[j], now, "failure")
        fm = self.failures
        assert fm is not None
        st.set_down(n, now + fm.repair_s)
        self.node_failures += 1
        self.epoch += 1
        self.seq += 1
        heapq.heappush(self.heap, (now + fm.repair_s, _REPAIR, self.seq, n, 0))

    # ------------------------------------------------------------ main loop
    def run(self) -> ScheduleResult:
        runs = self.runs
        st = self.state
        c = self.cluster
        G = c.gpus_per_node
        heap = self.heap
        pol = self.policy
        subs = [float(r.job.submit_s) for r in runs]  # Python floats: numpy scalars would slow every step
        n_sub = len(runs)
        i_sub = 0
        rejected = 0
        accepted = 0
        done = 0
        fm = self.failures
        next_fail = np.inf
        t0 = subs[0] if n_sub else 0.0
        last_t = t0
        busy_gpu_s = 0.0
        frag_gpu_s = 0.0
        free_wait_gpu_s = 0.0
        tl_t: list[float] = []
        tl_busy: list[int] = []
        frag_now = 0.0
        free_wait_now = 0.0
        max_nodes = int((c.gpus == G).sum())
        fair = isinstance(pol, FairShare)
        cap = c.gpus
        cap_max = int(cap.max())
        # locals for the loop's ~2 events per job (attribute and global look-ups add up at 100k jobs)
        inf = math.inf
        heappop = heapq.heappop
        running = self.running
        finish = self._finish
        fragmentation = self._fragmentation
        # the base pass returns at once on an empty queue: skip the call then (unless a policy has its own)
        always = type(pol).schedule is not QueuePolicy.schedule
        while True:
            t_sub = subs[i_sub] if i_sub < n_sub else inf
            t_ev = heap[0][0] if heap else inf
            now = min(t_sub, t_ev, next_fail)
            if now == inf or (i_sub >= n_sub and done == accepted):
                break
            dt = now - last_t
            busy_gpu_s += st.busy_gpus * dt
            frag_gpu_s += frag_now * dt
            free_wait_gpu_s += free_wait_now * dt
            last_t = now
            while heap and heap[0][0] <= now:
                _, kind, _, a, b = heappop(heap)
                if kind == _FINISH:
                    r = runs[a]
                    if r.attempt == b and a in running:
                        finish(r, now)
                        done += 1
                else:
                    st.set_up(a)
                    self.epoch += 1
            while i_sub < n_sub and subs[i_sub] <= now:
                r = runs[i_sub]
                i_sub += 1
                if (
                    (r.whole and r.n_nodes > max_nodes)
                    or (not r.whole and r.per_node > cap_max)
                    or (r.mask is not None and not (r.mask & (cap >= min(r.per_node, G))).any())
                ):
                    rejected += 1
                    continue
                accepted += 1
                pol.add(r)
            if fm is not None:
                if now >= next_fail:
                    self._fail(now)
                    next_fail = inf
                if next_fail == inf:
                    next_fail = now + fm.next_failure_in(self.rng, st.up_nodes)
            if fair:
                pol.now = now  # type: ignore[attr-defined]
            if pol.n or always:
                pol.schedule(self, now)
            if not running and not heap and i_sub >= n_sub and done < accepted:
                break  # what waits can never be placed (e.g. an impossible TP shape): report it
            if self.check:
                st.check()
            tl_t.append(now)
            tl_busy.append(st.busy_gpus)
            if pol.n:
                frag_now, free_wait_now = fragmentation()
            else:  # nothing waits: no free GPU is stranded (what _fragmentation returns)
                frag_now = free_wait_now = 0.0
        end = last_t
        unfinished = accepted - done
        t_last_sub = subs[-1] if n_sub else t0
        return self._result(
            t0, end, t_last_sub, busy_gpu_s, frag_gpu_s, free_wait_gpu_s, tl_t, tl_busy, rejected, unfinished
        )

    def _fragmentation(self) -> tuple[float, float]:
        """(free GPUs no waiting job can use, free GPUs) while jobs wait; (0, 0) with an empty queue."""
        q = self.policy
        if not q.n:
            return 0.0, 0.0
        st = self.state
        G = st.G
        counts = st.counts  # a short Python list (G + 1 entries): plain arithmetic beats numpy here
        free = float(st.free_gpus)
        usable = 0.0
        g = q.min_small()
        if g:
            usable += float(sum(k * counts[k] for k in range(g, G))) + G * counts[G]
        else:
            n = q.min_whole()
            if n and counts[G] >= n:
                usable += G * counts[G]
        return free - usable, free

    # ------------------------------------------------------------ result
    def _result(
        self,
        t0: float,
        end: float,
        t_last_sub: float,
        busy_gpu_s: float,
        frag_gpu_s: float,
        free_wait_gpu_s: float,
        tl_t: list[float],
        tl_busy: list[int],
        rejected: int,
        unfinished: int,
    ) -> ScheduleResult:
        c = self.cluster
        runs = self.runs
        total = c.total_gpus
        span = max(end - t0, 1e-9)
        submit = np.array([r.job.submit_s for r in runs])
        start = np.array([r.first_start for r in runs])
        finish = np.array([r.finish for r in runs])
        gpus = np.array([r.job.gpus for r in runs], dtype=np.int64)
        alloc = np.array([r.alloc for r in runs], dtype=np.int64)
        started = start >= 0
        completed = finish >= 0
        delay = (start - submit)[started]
        by_size = {}
        for label, lo, hi in size_buckets(c.gpus_per_node):
            m = started & (gpus >= lo) & (gpus <= hi)
            if m.any():
                by_size[label] = percentiles((start - submit)[m])
        multi = [r for r in runs if r.first_start >= 0 and r.whole and r.n_nodes > 1]
        npl = c.nodes_per_leaf
        loc = Locality(
            multi_node_jobs=len(multi),
            within_leaf=float(np.mean([r.one_leaf for r in multi])) if multi else 0.0,
            within_pod=float(np.mean([r.one_pod for r in multi])) if multi else 0.0,
            mean_leaves_spanned=float(np.mean([r.leaves for r in multi])) if multi else 0.0,
            mean_min_leaves=float(np.mean([-(-r.n_nodes // npl) for r in multi])) if multi else 0.0,
        )
        useful = float(sum(r.alloc * r.job.duration_s for r in runs if r.finish >= 0))
        lost_f = float(sum(r.lost_failure for r in runs))
        lost_p = float(sum(r.lost_preempt for r in runs))
        tl = np.array(tl_t)
        tb = np.array(tl_busy, dtype=float)
        timeline = _bin_timeline(tl, tb, t0, end, total)
        w_end = min(t_last_sub, end)
        util_window = (
            _busy_between(tl, tb, t0, w_end) / (total * (w_end - t0)) if w_end > t0 else busy_gpu_s / (total * span)
        )
        records = None
        if self.record:
            records = {"submit": submit, "start": start, "finish": finish, "gpus": gpus, "alloc": alloc}
        notes = list(self.workload.notes)
        if self.workload.skipped:
            notes.append(f"{self.workload.skipped} trace rows skipped (see the loader)")
        if c.domains is not None:
            notes += list(c.domains.assumptions)
        return ScheduleResult(
            cluster=c.name,
            workload=self.workload.name,
            policy=self.policy.name,
            placement=self.placement.name,
            seed=self.seed,
            gpus=total,
            nodes=c.nodes,
            jobs=len(runs),
            completed=int(completed.sum()),
            rejected=rejected,
            unfinished=unfinished,
            makespan_s=float(end - t0),
            utilization=busy_gpu_s / (total * span),
            utilization_arrivals=float(util_window),
            utilization_timeline=timeline,
            queue_delay_s=percentiles(delay),
            queue_delay_by_size=by_size,
            jct_s=percentiles((finish - submit)[completed]),
            fragmentation=frag_gpu_s / (total * span),
            fragmentation_of_free=frag_gpu_s / free_wait_gpu_s if free_wait_gpu_s > 0 else 0.0,
            placement_locality=loc,
            preemptions=self.preemptions,
            node_failures=self.node_failures,
            job_restarts=int(sum(r.restarts for r in runs)),
            gpu_hours_busy=busy_gpu_s / 3600,
            gpu_hours_useful=useful / 3600,
            gpu_hours_lost_failures=lost_f / 3600,
            gpu_hours_lost_preemption=lost_p / 3600,
            layout=c.layout(),
            notes=tuple(notes),
            records=records,
            allocations=self.allocations if self.record else None,
        )


def _busy_between(t: np.ndarray, busy: np.ndarray, a: float, b: float) -> float:
    """∫ busy dt over [a, b] for the step function that takes ``busy[i]`` from ``t[i]`` on."""
    if t.size == 0 or b <= a:
        return 0.0
    pts = np.append(t, max(b, t[-1]))
    cum = np.concatenate([[0.0], np.cumsum(np.diff(pts) * busy)])
    lo, hi = np.interp([a, b], pts, cum)
    return float(hi - lo)


def _bin_timeline(
    t: np.ndarray, busy: np.ndarray, t0: float, end: float, total: int
) -> tuple[tuple[float, float], ...]:
    """Time-weighted mean utilisation in equal bins of [t0, end] (busy is a step function of t)."""
    if t.size == 0 or end <= t0:
        return ()
    edges = np.linspace(t0, end, _TIMELINE_BINS + 1)
    # cumulative busy GPU-time at each change point, then at the bin edges by interpolation
    seg = np.diff(np.append(t, end)) * busy
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    pts = np.append(t, end)
    at = np.interp(edges, pts, cum)
    util = np.diff(at) / (np.diff(edges) * total)
    return tuple((float(a), float(u)) for a, u in zip(edges[:-1], util, strict=True))


def simulate(
    cluster: ClusterSpec | Cluster,
    workload: Workload,
    policy: str = "easy_backfill",
    placement: str = "topology_aware",
    *,
    seed: int = 0,
    failures: FailureModel | bool | None = True,
    backfill_depth: int = 100,
    quotas: Mapping[str, float] | None = None,
    record_allocations: bool = False,
    check_invariants: bool = False,
) -> ScheduleResult:
    """Replay ``workload`` on ``cluster`` under ``policy`` and ``placement``; reproducible by ``seed``.

    ``failures``: True = the operations layer's per-node rates for a cluster spec
    (:func:`cluster_failure_model`) or the Llama 3 per-node MTBF for a node list
    (:func:`node_failure_model`); False/None = no failures; or a :class:`FailureModel`.
    """
    c = cluster if isinstance(cluster, Cluster) else Cluster.from_spec(cluster)
    fm: FailureModel | None
    if failures is True:
        fm = cluster_failure_model(cluster) if isinstance(cluster, ClusterSpec) else node_failure_model()
    elif failures is False or failures is None:
        fm = None
    else:
        fm = failures
    return Simulator(
        c,
        workload,
        policy,
        placement,
        seed=seed,
        failures=fm,
        backfill_depth=backfill_depth,
        quotas=quotas,
        record_allocations=record_allocations,
        check_invariants=check_invariants,
    ).run()
