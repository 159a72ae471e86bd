"""Synthetic Acme workloads load a cluster as the Acme clusters were loaded (warm start, default load)."""

from __future__ import annotations

import pytest

from wanka.platform import simulate, synthetic_workload
from wanka.platform.workloads.summaries import trace_summary
from wanka.platform.workloads.synthetic import ACME_CLUSTERS, source_occupancy
from wanka.spec import ClusterSpec

SPEC = ClusterSpec(name="t-4k", accelerator="H100", nodes=512, fabric={"tiers": 3})


def test_default_load_is_the_source_occupancy_consistency() -> None:
    """Consistency check against the summary the numbers come from: GPU-time / (GPUs × span)."""
    for name in ("acme-seren", "acme-kalos"):
        occ, note = source_occupancy(name)
        gpus, span = ACME_CLUSTERS[name]
        s = trace_summary(name)
        assert s.gpu_time_s is not None
        assert occ == pytest.approx(s.gpu_time_s / (gpus * span))
        assert 0.05 < occ < 1 and "AcmeTrace" in note
    assert source_occupancy("acme-seren")[0] > source_occupancy("acme-kalos")[0]


def test_warm_start_loads_the_cluster_at_the_target() -> None:
    target, _ = source_occupancy("acme-seren")
    warm = synthetic_workload("acme-seren", SPEC, 1500, seed=1)
    cold = synthetic_workload("acme-seren", SPEC, 1500, seed=1, warm_start=False)
    rw = simulate(SPEC, warm, "fifo", "topology_aware", seed=1, failures=False)
    rc = simulate(SPEC, cold, "fifo", "topology_aware", seed=1, failures=False)
    assert rw.utilization_arrivals == pytest.approx(target, rel=0.2)
    assert rc.utilization_arrivals < 0.5 * rw.utilization_arrivals  # empty at t = 0: looks idle
    assert any("warm start" in n for n in warm.notes) and len(warm.jobs) > 1500


def test_overload_makes_policies_differ() -> None:
    wl = synthetic_workload("acme-seren", SPEC, 1500, seed=2, load=1.2)
    res = {p: simulate(SPEC, wl, p, "topology_aware", seed=2, failures=False) for p in ("fifo", "easy_backfill")}
    assert res["fifo"].queue_delay_s.mean > 0
    assert res["easy_backfill"].queue_delay_s.mean < res["fifo"].queue_delay_s.mean
