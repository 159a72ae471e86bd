from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from wanka.errors import SpecError
from wanka.ops import failure_table, job_failure_rates, job_footprint, list_failure_tables

from .conftest import llama3_inline, small

GPU_HOURS = 16384 * 54 * 24  # Llama 3 Table 5 window: 21,233,664 GPU-hours
NODE_HOURS = 2048 * 54 * 24


def test_llama3_table_counts_and_per_unit_arithmetic() -> None:
    t = failure_table("llama3-405b")
    assert "llama3-405b" in list_failure_tables()
    assert sum(c.count or 0 for c in t.causes) == 419
    by = {c.name: c for c in t.causes}
    assert by["faulty_gpu"].rate_per_unit_hour == pytest.approx(148 / GPU_HOURS, rel=1e-4)
    assert by["host_maintenance"].rate_per_unit_hour == pytest.approx(32 / NODE_HOURS, rel=1e-4)
    for c in t.causes:  # every rate is count / (units observed × window hours)
        assert t.exposure is not None
        expected = (c.count or 0) / (t.exposure.units(c.unit) * t.exposure.window_hours)
        assert c.rate_per_unit_hour == pytest.approx(expected, rel=1e-4), c.name


def test_table_matches_the_published_counts() -> None:
    # the copy shipped in the package (a test elsewhere checks it matches ../shared/validation)
    p = Path(__file__).resolve().parents[2] / "src/wanka/data/validation/public_reliability.yaml"
    entry = yaml.safe_load(p.read_text())["entries"][0]
    published = {r["component"]: r["count"] for r in entry["unexpected_by_cause"]}
    ours = {c.label: c.count for c in failure_table("llama3").causes}
    assert ours == published


def test_job_rate_reproduces_the_window_and_scales_with_size() -> None:
    s = llama3_inline()
    r = job_failure_rates(s)
    assert r.total * 54 * 86400 == pytest.approx(419, rel=2e-3)
    half = job_failure_rates(s, gpus=8192)
    # hardware scales with the components; the non-hardware floor (unit: job) does not
    assert r.floor_rate * 54 * 86400 == pytest.approx(54 + 7 + 2, rel=2e-3)
    assert half.floor_rate == pytest.approx(r.floor_rate)
    assert half.total == pytest.approx((r.total - r.floor_rate) / 2 + r.floor_rate, rel=1e-9)
    assert r.detection_s[r.names.index("nccl_watchdog_timeout")] == 1800.0
    assert r.detection_s[r.names.index("faulty_gpu")] == s.failures.detection_s
    assert not r.replace_node[r.names.index("software_bug")]


def test_footprint_and_rate_scale() -> None:
    fp = job_footprint(llama3_inline())
    assert (fp.gpus, fp.nodes, fp.nics, fp.switches) == (16384, 2048, 16384, 512)
    s = small(failures={"rate_scale": 3.0})
    assert job_failure_rates(s).total == pytest.approx(3 * job_failure_rates(small()).total)
    assert job_failure_rates(small(failures={"rate_scale": 0.0})).total == 0.0


def test_unknown_table_names_the_field() -> None:
    with pytest.raises(SpecError, match=r"failures\.rates"):
        job_failure_rates(small(failures={"rates": "nope"}))
