"""A consistency check of the documentation, not of the model: README.md's table of out-of-sample figures
(between the ``<!-- figures -->`` markers), its in-sample line and its signed-error sentence are what the
benchmarks compute now.

The cross-validation rows are read from ``benchmarks/results/calibration.json`` (``python -m
benchmarks.fit_calibration --cv --results`` refits every fold: too slow for the suite); every other row is
computed here from the shipped calibration, and the recorded extra-runs groups must agree with it, so a
change that moves a prediction cannot leave the README or the results file behind."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.check_extra_runs import EXTRA, check, file_groups  # noqa: E402
from benchmarks.check_nccl_tests import load_rows, mape, predict  # noqa: E402

from wanka.validate import run_validation  # noqa: E402

README = ROOT / "README.md"
RESULTS = ROOT / "benchmarks" / "results" / "calibration.json"


def _pct(x: float) -> str:
    return f"{100.0 * x:.1f}%"


def _rows() -> dict[str, list[str]]:
    text = README.read_text(encoding="utf-8")
    m = re.search(r"<!-- figures[^>]*-->(.*?)<!-- /figures -->", text, re.S)
    assert m, "README.md has no <!-- figures --> table"
    rows = {}
    for line in m.group(1).strip().splitlines()[2:]:  # past the header and the rule
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def _row(rows: dict[str, list[str]], start: str) -> list[str]:
    hits = [v for k, v in rows.items() if k.startswith(start)]
    assert len(hits) == 1, (start, list(rows))
    return hits[0]


@pytest.fixture(scope="module")
def extra() -> dict[str, dict[str, float]]:
    groups: dict[str, dict[str, float]] = {}
    for name in ("papers", "nemo_perf_tables", "non_nvidia", "mlperf_training"):
        path = EXTRA / f"{name}.yaml"
        groups |= file_groups(path, *check(path))
    return groups


def test_cross_validation_rows_are_the_recorded_figures() -> None:
    doc = json.loads(RESULTS.read_text(encoding="utf-8"))
    rows = _rows()
    for start, key in (("public file, random 5-fold", "cv_kfold"), ("public file, leaving one", "cv_family")):
        cv = doc[key]
        n, mape_s, median_s, worst_s = _row(rows, start)[:4]
        assert n == str(cv["cases"]), (start, n)
        assert (mape_s, median_s, worst_s) == (_pct(cv["mape"]), _pct(cv["median"]), _pct(cv["max"])), start


def test_extra_runs_rows_are_what_the_shipped_calibration_predicts(extra) -> None:  # type: ignore[no-untyped-def]
    rows = _rows()
    recorded = json.loads(RESULTS.read_text(encoding="utf-8"))["extra_runs"]
    for start, key in (
        ("papers:", "papers"),
        ("NeMo / Megatron-Bridge tables 24.03–26.08, dense", "nemo_dense"),
        ("NeMo / Megatron-Bridge tables 24.03–26.08, MoE", "nemo_moe"),
        ("non-NVIDIA:", "non_nvidia"),
        ("MLPerf Training submissions:", "mlperf"),
    ):
        g = extra[key]
        n, mape_s, median_s, worst_s = _row(rows, start)[:4]
        assert n == f"{g['predicted']:.0f} of {g['cases']:.0f}", (start, n)
        assert (mape_s, median_s, worst_s) == (_pct(g["mape"]), _pct(g["median"]), _pct(g["max"])), start
        # the results file (python -m benchmarks.check_extra_runs --results) is current too
        assert recorded[key]["predicted"] == g["predicted"] and abs(recorded[key]["mape"] - g["mape"]) < 1e-9, key


def test_signed_error_sentence_is_what_the_extra_runs_give(extra) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(README.read_text(encoding="utf-8").split())
    for name, key in (
        ("papers", "papers"),
        ("MLPerf", "mlperf"),
        ("NeMo MoE", "nemo_moe"),
        ("NeMo dense", "nemo_dense"),
        ("non-NVIDIA", "non_nvidia"),
    ):
        g = extra[key]
        signed = f"{100 * g['median_signed']:+.1f}%".replace("-", "\u2212")
        fast = f"{100 * g['fast_share']:.0f}%"
        pattern = re.escape(f"{name} {signed} ({fast}") + r"( fast)?\)"
        assert re.search(pattern, text), (name, signed, fast)


def test_nccl_tests_row_is_what_the_collective_model_gives() -> None:
    held = [r for r in (predict(x) for x in load_rows()) if r.role == "check"]
    errs = np.abs([r.error for r in held])
    n, mape_s, median_s, worst_s = _row(_rows(), "nccl-tests")[:4]
    assert n == str(len(held))
    assert (mape_s, median_s, worst_s) == (_pct(mape(held)), _pct(float(np.median(errs))), _pct(float(errs.max())))


def test_in_sample_line_is_what_wanka_validate_prints() -> None:
    text = README.read_text(encoding="utf-8")
    m = re.search(r"<!-- in-sample -->(.*?)<!-- /in-sample -->", text, re.S)
    assert m
    rep = run_validation()
    steady = [c for c in rep.cases if c.kind == "steady_state"]
    predicted = [c for c in steady if c.predicted is not None]
    assert rep.mape is not None and rep.max_abs_error is not None
    want = f"MAPE {_pct(rep.mape)}, max {_pct(rep.max_abs_error)} ({len(predicted)} of {len(steady)} cases predicted)"
    assert want in m.group(1), (want, m.group(1))


def test_mlperf_recipe_ranking_sentence_is_what_the_search_gives() -> None:
    # computed here (about 10 s) and recorded by python -m benchmarks.check_recipe_rank --file
    # benchmarks/extra_runs/mlperf_training.yaml --results, which must be current too
    from benchmarks.check_recipe_rank import file_rows, rank, summary

    sm = summary([rank(c) for c in file_rows(EXTRA / "mlperf_training.yaml")])
    recorded = json.loads(RESULTS.read_text(encoding="utf-8"))["recipe_rank_mlperf_training"]["summary"]
    assert recorded == json.loads(json.dumps(sm)), "calibration.json's MLPerf ranking is stale"
    text = " ".join(README.read_text(encoding="utf-8").split())
    want = (
        f"The {sm['recipes']} MLPerf Training submissions' layouts (tuned by their submitters; "
        f"`--file benchmarks/extra_runs/mlperf_training.yaml`) "
        + ("all rank" if sm["top_5pct"] == sm["recipes"] else f"{sm['top_5pct']} rank")
        + f" in the top 5%, at a median top {100 * sm['median_percentile']:.2f}%; the search's best is a median "
        f"{100 * sm['median_best_over_recipe']:.1f}% faster than the submission (within 5% for "
        f"{sm['best_within_5pct']}, within 10% for {sm['best_within_10pct']})."
    )
    assert want in text, want
