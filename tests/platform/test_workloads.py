from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from wanka.errors import SpecError, TraceError
from wanka.platform import (
    builtin_cluster,
    builtin_trace,
    default_node_mtbf_s,
    load_philly_machines,
    load_philly_runtimes,
    load_trace,
    synthetic_workload,
    trace_summary,
)
from wanka.platform.workloads import fit_llm_workload


def test_llama3_node_mtbf() -> None:
    # 54 days × 2,048 nodes / 419 interruptions = 263.9 days per node
    assert default_node_mtbf_s() / 86400 == pytest.approx(54 * 2048 / 419)


def test_pai_bundled_lists_match_published_counts() -> None:
    c = builtin_cluster("alibaba-pai-2023")
    assert (c.nodes, c.total_gpus) == (1213, 6212)  # README: 1,213 GPU nodes, 6,212 GPUs
    wl = builtin_trace("alibaba-pai-2023")
    # 8,152 pods − 1,088 CPU-only − the never-scheduled GPU pods
    assert len(wl) + wl.skipped == 8152
    assert wl.skipped >= 1088


def test_philly_machine_list_and_runtimes() -> None:
    c = load_philly_machines()
    assert (c.nodes, c.total_gpus) == (552, 2490)  # 321 × 2 + 231 × 8
    rt = load_philly_runtimes()
    assert rt.size == 83154
    assert float(np.median(rt)) == pytest.approx(1186, rel=0.01)


def test_malformed_rows_name_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("submit_s,duration_s,gpus\n0,10,1\n5,abc,2\n")
    with pytest.raises(TraceError, match=r"t\.csv, line 3: duration_s = 'abc'"):
        load_trace(p)
    p.write_text("submit_s,duration_s,gpus\n0,10,0\n")
    with pytest.raises(TraceError, match="line 2: gpus"):
        load_trace(p)
    p.write_text("submit_s,duration_s,gpus\n0,10\n")
    with pytest.raises(TraceError, match="line 2: 2 fields"):
        load_trace(p)
    p.write_text("a,b\n1,2\n")
    with pytest.raises(TraceError, match="unknown trace format"):
        load_trace(p)
    p.write_text("name,num_gpu,creation_time,deletion_time,scheduled_time\nx,1,10,5,10\n")
    with pytest.raises(TraceError, match="line 2: times must satisfy"):
        load_trace(p)


def test_generic_trace_optional_columns(tmp_path: Path) -> None:
    p = tmp_path / "g.csv"
    p.write_text("submit_s,duration_s,gpus,tenant,priority\n5,100,16,a,2\n0,50,1,,\n")
    wl = load_trace(p)
    assert [j.submit_s for j in wl.jobs] == [0.0, 5.0]  # sorted by submit
    assert wl.jobs[1].tenant == "a" and wl.jobs[1].priority == 2 and wl.jobs[0].tenant == "default"


@pytest.mark.parametrize("name", ["acme-seren", "acme-kalos"])
def test_synthetic_fit_matches_summary(name: str) -> None:
    s = trace_summary(name)
    fit = fit_llm_workload(s)
    assert fit.mean_gpus == pytest.approx(s.avg_gpus, rel=1e-3)
    assert s.gpu_time_s is not None
    assert fit.gpu_s_per_job == pytest.approx(s.gpu_time_s / s.gpu_jobs, rel=1e-3)
    assert fit.probs[0] >= 0.5  # median job is one GPU, as published
    assert np.exp(fit.run_mu) == pytest.approx(s.med_run_time_s)


def test_synthetic_sample_and_load_scaling(small_spec) -> None:  # type: ignore[no-untyped-def]
    wl = synthetic_workload("acme-seren", small_spec, jobs=20000, seed=2, load=0.7)
    sm = wl.summary()
    s = trace_summary("acme-seren")
    assert sm["med_gpu_num"] == 1
    assert sm["med_run_time_s"] == pytest.approx(s.med_run_time_s, rel=0.1)
    # offered load = Σ GPU-s / (GPUs × arrival span), close to the requested 0.7 (heavy tail: loose)
    assert wl.gpu_seconds() / (512 * sm["span_s"]) == pytest.approx(0.7, rel=0.35)
    assert max(j.gpus for j in wl.jobs) <= 512


def test_synthetic_errors(small_spec) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SpecError, match="unknown synthetic"):
        synthetic_workload("nope", small_spec)
    with pytest.raises(SpecError, match="jobs"):
        synthetic_workload("acme-seren", small_spec, jobs=0)
