from __future__ import annotations

import json
from pathlib import Path

import pytest

from wanka.cli import main
from wanka.errors import SpecError
from wanka.platform import (
    SCHEDULERS,
    Cluster,
    Job,
    Workload,
    builtin_cluster,
    builtin_trace,
    node_failure_model,
    simulate,
    synthetic_workload,
)
from wanka.spec import ClusterSpec


def test_pai_2023_replay_completes_every_task() -> None:
    c = builtin_cluster("alibaba-pai-2023")
    wl = builtin_trace("alibaba-pai-2023")
    r = simulate(c, wl, "easy_backfill", seed=0)
    assert r.completed == len(wl) and r.unfinished == 0 and r.rejected == 0
    assert 0 < r.utilization < 1
    assert 0 <= r.fragmentation <= 1
    # every GPU-second of the trace's pods was served (plus restart losses)
    assert r.gpu_hours_useful == pytest.approx(wl.gpu_seconds() / 3600, rel=1e-9)


def test_topology_aware_beats_blind_on_10k(spec_10k: ClusterSpec) -> None:
    wl = synthetic_workload("acme-kalos", spec_10k, jobs=1500, seed=4)
    aware = simulate(spec_10k, wl, "easy_backfill", "topology_aware", seed=4, failures=False)
    blind = simulate(spec_10k, wl, "easy_backfill", "topology_blind", seed=4, failures=False)
    assert aware.placement_locality.multi_node_jobs > 50
    assert aware.placement_locality.within_leaf > blind.placement_locality.within_leaf + 0.3
    assert aware.placement_locality.within_pod >= blind.placement_locality.within_pod
    assert aware.placement_locality.mean_leaves_spanned < blind.placement_locality.mean_leaves_spanned


def test_fifo_blocks_backfill_fills() -> None:
    # 2 nodes × 8 GPUs. A 16-GPU job waits behind an 8-GPU job; a short 8-GPU job arriving later
    # cannot start under FIFO but backfills under EASY (it ends before the big job could start).
    c = ClusterSpec(accelerator="H100", nodes=2)
    jobs = (Job(0, 100, 8), Job(1, 100, 16), Job(2, 50, 8))
    wl = Workload("t", jobs)
    fifo = simulate(c, wl, "fifo", failures=False, record_allocations=True)
    easy = simulate(c, wl, "easy_backfill", failures=False, record_allocations=True)
    assert fifo.records is not None and easy.records is not None
    assert list(fifo.records["start"]) == [0, 100, 200]
    assert list(easy.records["start"]) == [0, 100, 2]
    assert easy.queue_delay_s.mean < fifo.queue_delay_s.mean


def test_priority_preemption_evicts_lower_priority() -> None:
    c = ClusterSpec(accelerator="H100", nodes=2)
    wl = Workload("t", (Job(0, 1000, 16, priority=0), Job(10, 100, 8, priority=5)))
    r = simulate(c, wl, "priority_preemption", failures=False, record_allocations=True)
    assert r.preemptions == 1
    assert r.records is not None and r.records["start"][1] == 10
    assert r.completed == 2
    # 10 s of work since no checkpoint yet, plus the 600 s restart cost, on 16 GPUs
    assert r.gpu_hours_lost_preemption == pytest.approx(16 * (10 + 600) / 3600)


def test_fair_share_serves_the_light_tenant_first() -> None:
    c = ClusterSpec(accelerator="H100", nodes=1)
    jobs = (Job(0, 100, 8, tenant="a"), Job(1, 100, 8, tenant="a"), Job(2, 100, 8, tenant="b"))
    r = simulate(c, Workload("t", jobs), "fair_share", failures=False, record_allocations=True)
    assert r.records is not None
    assert r.records["start"][2] < r.records["start"][1]  # b before a's second job


def test_failures_restart_from_checkpoint() -> None:
    c = ClusterSpec(accelerator="H100", nodes=4)
    fm = node_failure_model(2 * 86400.0, repair_s=3600, restart_s=60, checkpoint_interval_s=600)
    wl = Workload("t", tuple(Job(0, 3 * 86400, 32) for _ in range(1)))
    r = simulate(c, wl, "easy_backfill", failures=fm, seed=1)
    assert r.node_failures > 0 and r.job_restarts > 0
    assert r.completed == 1
    assert r.gpu_hours_lost_failures > 0
    assert r.gpu_hours_busy == pytest.approx(r.gpu_hours_useful + r.gpu_hours_lost_failures, rel=1e-9)


def test_too_big_job_rejected_and_unknown_names() -> None:
    c = ClusterSpec(accelerator="H100", nodes=2)
    r = simulate(c, Workload("t", (Job(0, 10, 64), Job(0, 10, 8))), "fifo", failures=False)
    assert r.rejected == 1 and r.completed == 1
    with pytest.raises(SpecError, match="unknown policy"):
        simulate(c, Workload("t", ()), "nope")
    with pytest.raises(SpecError, match="unknown placement"):
        simulate(c, Workload("t", ()), "fifo", "nope")


def test_gpu_model_constraint_respected() -> None:
    c = Cluster.from_nodes([8, 8], ["A", "B"])
    wl = Workload("t", (Job(0, 10, 4, gpu_models=frozenset({"B"})),))
    r = simulate(c, wl, "fifo", failures=False, record_allocations=True)
    assert r.allocations is not None and r.allocations[0][3] == (1,)


def test_seed_reproducible(small_spec: ClusterSpec) -> None:
    wl = synthetic_workload("acme-seren", small_spec, jobs=400, seed=9, load=1.5)
    a = simulate(small_spec, wl, "easy_backfill", "topology_blind", seed=9).to_dict()
    b = simulate(small_spec, wl, "easy_backfill", "topology_blind", seed=9).to_dict()
    assert a == b


def test_cli_json_and_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "c.yaml"
    p.write_text("name: small\naccelerator: H100\nnodes: 32\n")
    rc = main(["schedule", "--cluster", str(p), "--synthetic", "acme-seren", "--jobs", "200", "--cold-start", "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    for key in ("jobs", "utilization", "queue_delay_s", "jct_s", "fragmentation", "placement_locality"):
        assert key in d
    assert set(d["queue_delay_s"]) >= {"mean", "median", "p99"} and set(d["jct_s"]) >= {"mean", "median"}
    assert d["jobs"] == 200
    rc = main(
        [
            "schedule",
            "--cluster",
            str(p),
            "--synthetic",
            "acme-kalos",
            "--jobs",
            "100",
            "--compare-policies",
            "--json",
        ]
    )
    assert rc == 0
    assert set(json.loads(capsys.readouterr().out)["policies"]) == set(SCHEDULERS)
    rc = main(["schedule", "--cluster", str(p), "--synthetic", "acme-kalos", "--jobs", "100", "--compare-policies"])
    out = capsys.readouterr().out
    assert rc == 0 and "queue delay mean" in out and "fifo" in out


def test_cli_trace_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = tmp_path / "t.csv"
    t.write_text("submit_s,duration_s,gpus\n0,10,8\n1,10,1\n")
    c = tmp_path / "c.yaml"
    c.write_text("accelerator: H100\nnodes: 2\n")
    assert main(["schedule", "--cluster", str(c), "--trace", str(t), "--policy", "fifo", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["completed"] == 2
    t.write_text("submit_s,duration_s,gpus\n0,x,8\n")
    assert main(["schedule", "--cluster", str(c), "--trace", str(t)]) == 2
    assert "line 2" in capsys.readouterr().err
    assert main(["schedule", "--cluster", str(c)]) == 2
    assert "exactly one" in capsys.readouterr().err
    c.write_text("accelerator: H100\nnodes: -3\n")
    assert main(["schedule", "--cluster", str(c), "--synthetic", "acme-seren"]) == 2
    assert "nodes" in capsys.readouterr().err
