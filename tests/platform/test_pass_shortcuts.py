"""The scheduling pass's shortcuts (numpy filter of the window, skipped idle passes, reused window)
give the schedule of the plain pass that tries every job in the window, event by event."""

from __future__ import annotations

from itertools import islice

import numpy as np
import pytest

from wanka.platform import simulate, synthetic_workload
from wanka.platform.policies.base import QueuePolicy
from wanka.platform.simulator import Simulator
from wanka.spec import ClusterSpec


def _plain_pass(self: QueuePolicy, sim: Simulator, now: float) -> None:
    """The pass as first written: every job of the window, in order, every event."""
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


def _schedule(spec: ClusterSpec, load: float, policy: str, placement: str) -> tuple[object, ...]:
    wl = synthetic_workload("acme-seren", spec, jobs=1500, seed=3, load=load)
    r = simulate(spec, wl, policy, placement, seed=5, record_allocations=True, check_invariants=True)
    assert r.records is not None and r.allocations is not None
    return (
        r.records["start"].tolist(),
        r.records["finish"].tolist(),
        [(j, float(s), float(e), n, p) for j, s, e, n, p in r.allocations],
        r.utilization,
        r.preemptions,
        r.node_failures,
        r.job_restarts,
    )


@pytest.mark.parametrize("policy", ["fifo", "easy_backfill", "priority_preemption", "fair_share"])
@pytest.mark.parametrize("load", [0.7, 1.4])
def test_shortcuts_give_the_plain_pass_schedule(policy: str, load: float, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = ClusterSpec(name="eq", accelerator="H100", nodes=96, fabric={"tiers": 3})
    placements = ("topology_aware", "topology_blind") if policy == "easy_backfill" else ("topology_aware",)
    for placement in placements:
        fast = _schedule(spec, load, policy, placement)
        with monkeypatch.context() as m:
            m.setattr(QueuePolicy, "schedule", _plain_pass)
            plain = _schedule(spec, load, policy, placement)
        assert fast == plain, (policy, placement, load)
        starts = np.array(fast[0])
        assert (starts >= 0).sum() > 100  # the trace really schedules jobs (and queues at load 1.4)
