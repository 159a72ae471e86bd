"""Invariants on random small clusters and workloads (Hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wanka.platform import SCHEDULERS, Cluster, Job, Workload, node_failure_model, simulate
from wanka.spec import ClusterSpec

jobs_st = st.lists(
    st.tuples(
        st.floats(0, 2000),
        st.floats(1, 3000),
        st.sampled_from([1, 2, 3, 4, 8, 16, 24, 32, 64, 200]),
        st.integers(0, 2),
        st.sampled_from(["a", "b", "c"]),
    ),
    min_size=1,
    max_size=40,
)
cluster_st = st.sampled_from(
    [
        ClusterSpec(accelerator="H100", nodes=6, fabric={"tiers": 3}),
        ClusterSpec(accelerator="H100", nodes=3, gpus_per_node=4),
        ClusterSpec(accelerator="GB200", nodes=8, gpus_per_node=4, scale_up={"domain_size": 16}),
    ]
)
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _workload(rows: list[tuple[float, float, int, int, str]]) -> Workload:
    return Workload("h", tuple(Job(s, d, g, tenant=t, priority=p, tp=min(g, 8)) for s, d, g, p, t in rows))


def _fails(seed: int):  # type: ignore[no-untyped-def]
    # frequent failures so that restarts happen in small tests
    if seed % 2 == 0:
        return False
    return node_failure_model(4 * 3600.0, repair_s=600, restart_s=30, checkpoint_interval_s=300)


@SETTINGS
@given(
    rows=jobs_st,
    spec=cluster_st,
    policy=st.sampled_from(list(SCHEDULERS)),
    placement=st.sampled_from(["topology_aware", "topology_blind"]),
    seed=st.integers(0, 5),
)
def test_no_gpu_double_allocated(rows, spec, policy, placement, seed) -> None:  # type: ignore[no-untyped-def]
    c = Cluster.from_spec(spec)
    r = simulate(
        c,
        _workload(rows),
        policy,
        placement,
        seed=seed,
        failures=_fails(seed),
        record_allocations=True,
        check_invariants=True,
    )
    assert r.allocations is not None
    # sweep: at every allocation start, GPUs in use on each node ≤ its GPUs
    events = []
    for _, start, end, nodes, per in r.allocations:
        assert end >= start
        for n in nodes:
            events.append((start, 1, n, per))
            events.append((end, 0, n, -per))  # releases first at equal times
    used = np.zeros(c.nodes, dtype=np.int64)
    for _, _, n, d in sorted(events):
        used[n] += d
        assert 0 <= used[n] <= c.gpus[n]


@SETTINGS
@given(rows=jobs_st, spec=cluster_st, seed=st.integers(0, 5))
def test_every_fitting_job_runs_under_backfill(rows, spec, seed) -> None:  # type: ignore[no-untyped-def]
    c = Cluster.from_spec(spec)
    r = simulate(c, _workload(rows), "easy_backfill", seed=seed, failures=_fails(seed))
    fits = sum(1 for row in rows if row[2] <= c.total_gpus)
    assert r.completed == fits
    assert r.rejected == len(rows) - fits
    assert r.unfinished == 0


@SETTINGS
@given(rows=jobs_st, spec=cluster_st, policy=st.sampled_from(list(SCHEDULERS)), seed=st.integers(0, 5))
def test_gpu_hours_conserved(rows, spec, policy, seed) -> None:  # type: ignore[no-untyped-def]
    r = simulate(spec, _workload(rows), policy, seed=seed, failures=_fails(seed), record_allocations=True)
    assert r.allocations is not None
    held = sum((end - start) * per * len(nodes) for _, start, end, nodes, per in r.allocations) / 3600
    assert r.gpu_hours_busy == np.float64(held) or abs(r.gpu_hours_busy - held) <= 1e-6 * max(1.0, held)
    accounted = r.gpu_hours_useful + r.gpu_hours_lost_failures + r.gpu_hours_lost_preemption
    assert abs(r.gpu_hours_busy - accounted) <= 1e-6 * max(1.0, held)
    assert 0 <= r.utilization <= 1 + 1e-9
