"""Further published runs (benchmarks/extra_runs/): they parse and run, every prediction comes from a layout
that fits, and they stay predicted about as well as when the calibration was last fit (a regression guard
for generalisation, not a fitting target: the fit never reads these files)."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from wanka.validate import run_validation
from wanka.validate.cases import load_cases
from wanka.validate.run import predict_case

EXTRA = Path(__file__).resolve().parents[2] / "benchmarks" / "extra_runs"
# measured at the shipped calibration by python -m benchmarks.check_extra_runs (median |error|), with headroom
PAPERS_MEDIAN = 0.12
NEMO_DENSE_MEDIAN = 0.14


@pytest.fixture(scope="module")
def reports():  # type: ignore[no-untyped-def]
    return {f.name: run_validation(f) for f in sorted(EXTRA.glob("*.yaml"))}


def test_every_case_runs_or_says_why_not(reports) -> None:  # type: ignore[no-untyped-def]
    assert {"nemo_perf_tables.yaml", "papers.yaml"} <= set(reports)
    for rep in reports.values():
        for c in rep.cases:
            if c.predicted is None:
                assert c.error and any(
                    k in c.error for k in ("unknown accelerator", "must divide", "no layout fits")
                ), (c.id, c.error)
    nemo = [c for c in reports["nemo_perf_tables.yaml"].cases if c.predicted is not None]
    assert len(nemo) >= 140


def test_unprinted_recompute_gives_a_band(reports) -> None:  # type: ignore[no-untyped-def]
    rows = [c for c in reports["nemo_perf_tables.yaml"].cases if c.band is not None]
    cases = {c.id: c.raw for c in load_cases(EXTRA / "nemo_perf_tables.yaml")[0]}
    # a band comes from an unprinted recompute, or from activation offloading, which no source prints,
    # completed where a row runs pp = 1 with recompute none (validate/run.py)
    offload = {
        k for k, r in cases.items() if r["parallelism"]["pp"] == 1 and r["parallelism"].get("recompute") == "none"
    }
    wide = [c for c in rows if c.layouts > 1]
    assert wide and all("recompute" in c.unknown or c.id in offload for c in wide)
    # a row that prints its recompute (and cannot offload) is predicted from its one layout
    known = [c for c in rows if not c.unknown and c.id not in offload]
    assert known and all(c.layouts == 1 for c in known)
    assert any(c.band[0] < c.band[1] for c in rows)


def test_papers_and_dense_nemo_rows_stay_predicted_within_their_measured_error(reports) -> None:  # type: ignore[no-untyped-def]
    papers = np.abs([c.rel_error for c in reports["papers.yaml"].cases if c.rel_error is not None])
    assert np.median(papers) <= PAPERS_MEDIAN
    cases, _ = load_cases(EXTRA / "nemo_perf_tables.yaml")
    dense_ids = {c.id for c in cases if c.raw["model"].get("moe") is None}
    dense = [
        abs(c.rel_error)
        for c in reports["nemo_perf_tables.yaml"].cases
        if c.rel_error is not None and c.id in dense_ids
    ]
    assert np.median(dense) <= NEMO_DENSE_MEDIAN


def test_whole_campaign_rows_are_predicted_with_their_operations(reports) -> None:  # type: ignore[no-untyped-def]
    """The campaign rows (GPU-hours over a whole run: BLOOM-176B, DeepSeek-V2) go through the operations
    model: each is predicted, below its own steady-state step's throughput (failures, restarts and
    checkpoints cost time), and within 20% of the published average (both 10-15% at the shipped fit)."""
    rows = {c.id: c for c in reports["papers.yaml"].cases if c.kind == "campaign"}
    assert {"bloom176b_campaign_384gpu", "deepseek_v2_campaign_h800"} <= set(rows)
    for cid, c in rows.items():
        assert c.rel_error is not None and abs(c.rel_error) < 0.20, (cid, c.rel_error)
    # the same DeepSeek-V2 layout as a steady-state row runs faster than the campaign average
    case = next(c for c in load_cases(EXTRA / "papers.yaml")[0] if c.id == "deepseek_v2_campaign_h800")
    steady = predict_case(replace(case, kind="steady_state"))
    assert steady.predicted is not None and steady.predicted > rows["deepseek_v2_campaign_h800"].predicted


# Same submitter, system and software at growing GPU counts with the global batch nearly fixed: fewer
# micro-batches per pipeline at scale, so the per-GPU throughput falls (MLPerf Training result logs).
MLPERF_SERIES = (
    ("mlperf30_gpt3_175b_h100_cw_768g", "mlperf30_gpt3_175b_h100_cw_3584g"),
    ("mlperf31_gpt3_175b_h100_512g", "mlperf31_gpt3_175b_h100_10752g"),
    ("mlperf40_gpt3_175b_h100_512g", "mlperf40_gpt3_175b_h100_11616g"),
    ("mlperf50_llama31_405b_h100_512g", "mlperf50_llama31_405b_h100_8192g"),
    ("mlperf50_llama31_405b_gb200_cw_512g", "mlperf50_llama31_405b_gb200_cw_2496g"),
)


def test_every_mlperf_layout_is_built_and_predicted(reports) -> None:  # type: ignore[no-untyped-def]
    # the submissions ran these layouts (Llama 3.1 405B: 126 layers + embedding + loss over PP 8 x VP 8 on
    # Megatron-Core 0.11+), so none may be refused as impossible or as not fitting in HBM
    rows = reports["mlperf_training.yaml"].cases
    assert len(rows) >= 43
    assert all(c.predicted is not None for c in rows), [(c.id, c.error) for c in rows if c.predicted is None]


@pytest.mark.parametrize(("small", "large"), MLPERF_SERIES)
def test_mlperf_throughput_per_gpu_falls_with_scale_as_published(reports, small: str, large: str) -> None:  # type: ignore[no-untyped-def]
    c = {r.id: r for r in reports["mlperf_training.yaml"].cases}
    published = c[large].truth / c[small].truth
    predicted = c[large].predicted / c[small].predicted
    assert published < 1.0 and predicted < 1.0
    # a model whose costs stayed flat with scale would put the ratio near 1 (published 0.66-0.95)
    assert abs(predicted - published) <= 0.05, (small, large, published, predicted)


def test_group_summary_reports_the_sign_of_the_errors() -> None:
    """The extra-runs summary says which way a group errs: the median signed error and the share of rows
    predicted faster than published, on top of the unsigned MAPE (which hides a one-sided lean)."""
    import sys
    from types import SimpleNamespace

    sys.path.insert(0, str(EXTRA.parents[1]))
    from benchmarks.check_extra_runs import _group_line, _summary

    def row(err: float | None) -> SimpleNamespace:
        return SimpleNamespace(kind="steady_state", rel_error=err, band=None, unknown=False, error=None, in_band=None)

    s = _summary([row(0.10), row(0.04), row(-0.02), row(0.06), row(None)])
    assert s["predicted"] == 4 and s["mape"] == pytest.approx(0.055)
    assert s["median_signed"] == pytest.approx(0.05) and s["fast_share"] == pytest.approx(0.75)
    assert "signed median +5.0%, 75% predicted fast" in _group_line("g", s)
    slow = _summary([row(-0.10), row(-0.04), row(-0.02), row(-0.06)])
    assert slow["mape"] == pytest.approx(0.055) and slow["median_signed"] < 0 and slow["fast_share"] == 0.0
