"""Further published runs (benchmarks/extra_runs/): they parse, run, and stay predicted about as well as
when the current calibration was fit (a regression guard for generalisation, not a fitting target)."""

from pathlib import Path

import numpy as np
import pytest

from wanka.validate import run_validation

EXTRA = Path(__file__).resolve().parents[2] / "benchmarks" / "extra_runs"


@pytest.fixture(scope="module")
def reports():  # type: ignore[no-untyped-def]
    return {f.name: run_validation(f) for f in sorted(EXTRA.glob("*.yaml"))}


def test_every_case_runs_unless_its_accelerator_is_not_in_the_catalog(reports) -> None:  # type: ignore[no-untyped-def]
    assert {"nemo_perf_tables.yaml", "papers.yaml"} <= set(reports)
    for rep in reports.values():
        for c in rep.cases:
            if c.predicted is None:
                assert c.error and ("unknown accelerator" in c.error or "must divide" in c.error), (c.id, c.error)
    nemo = [c for c in reports["nemo_perf_tables.yaml"].cases if c.predicted is not None]
    assert len(nemo) >= 140


def test_papers_and_dense_nemo_rows_stay_predicted_within_their_measured_error(reports) -> None:  # type: ignore[no-untyped-def]
    papers = np.abs([c.rel_error for c in reports["papers.yaml"].cases if c.kind == "steady_state"])
    assert np.median(papers) <= 0.12  # 9.7% when the calibration was last fit
    dense = [
        abs(c.rel_error)
        for c in reports["nemo_perf_tables.yaml"].cases
        if c.rel_error is not None and not any(m in c.id for m in ("qwen3", "deepseek", "mixtral", "gpt_oss", "scout"))
    ]
    assert np.median(dense) <= 0.12  # ~10% when the calibration was last fit
