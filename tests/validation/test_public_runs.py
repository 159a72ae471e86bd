"""`wanka validate` on the published runs, with the issue's targets as tolerances."""

from pathlib import Path

import pytest
import yaml

from wanka.errors import SpecError
from wanka.validate import load_cases, predict_case, run_validation
from wanka.validate.cases import Case

SHARED = Path(__file__).resolve().parents[3] / "shared" / "validation"
SHIPPED = Path(__file__).resolve().parents[2] / "src" / "wanka" / "data" / "validation"
# in-sample regression guards at the shipped calibration (python -m benchmarks.fit_calibration prints them)
IN_SAMPLE_MAPE = 0.08
# 0.25 until the CTA copy bound of NCCL's in-domain all-to-all (network.collectives._p2p_copy_bw) moved
# nemo2608_qwen3_30b_a3b_gb200_fp8mx_8g (EP 8 over two GB200 trays, a row that states none of its preset's
# MoE switches) from -24.8 % to -25.4 %; -25.3 % after the refit that followed; 0.26 until the refit that
# followed the two-domain all-to-all (stop 22; ep_overlap_hidden 0.305 -> 0.214) put that row at -26.4 %, its
# exposed all-to-all 20 % of the step because the row states none of the preset's overlap switches (-26.6 % after
# NVLink 5 took its measured link share, 0.757, and the refit that followed)
IN_SAMPLE_MAX = 0.27


@pytest.fixture(scope="module")
def report():  # type: ignore[no-untyped-def]
    return run_validation()


def test_every_steady_state_case_is_predicted_or_reported_as_not_fitting(report) -> None:  # type: ignore[no-untyped-def]
    steady = [c for c in report.cases if c.kind == "steady_state"]
    assert len(steady) >= 60
    predicted = [c for c in steady if c.predicted is not None]
    assert len(predicted) >= 60  # 63 with the shipped memory model; the rest are reported as not fitting
    for c in steady:
        if c.predicted is None:  # never predicted from a layout that does not fit
            assert c.error and ("no layout fits" in c.error or "infeasible" in c.error), (c.id, c.error)


def test_in_sample_consistency(report) -> None:  # type: ignore[no-untyped-def]
    """A consistency check, not a target: these are the cases the calibration was fit on (in-sample).
    The out-of-sample figures are in benchmarks/results/calibration.json (python -m benchmarks.fit_calibration --cv)."""
    assert report.mape is not None and report.mape <= IN_SAMPLE_MAPE
    assert report.max_abs_error is not None and report.max_abs_error <= IN_SAMPLE_MAX


def test_superseded_rows_are_reported_apart(report) -> None:  # type: ignore[no-untyped-def]
    assert report.superseded
    assert all(c.superseded for c in report.superseded)
    d = report.to_dict()
    assert {"cases", "mape", "max_abs_error", "superseded_mape"} <= set(d)


def test_shipped_copy_matches_shared() -> None:
    if not SHARED.exists():
        pytest.skip("../shared/validation not present")
    for name in ("public_runs.yaml", "public_reliability.yaml"):
        assert (SHIPPED / name).read_bytes() == (SHARED / name).read_bytes(), name


def test_unknown_accelerator_is_an_error_for_that_case_only(tmp_path: Path) -> None:
    cases, _ = load_cases()
    raw = dict(cases[0].raw)
    raw["hardware"] = {**raw["hardware"], "gpu": "TPU-v9"}
    bad = Case("bad", "steady_state", raw)
    r = predict_case(bad)
    assert r.predicted is None and r.error and "TPU-v9" in r.error
    doc = {"schema": "wanka-validation/1", "cases": [raw, cases[1].raw]}
    f = tmp_path / "v.yaml"
    f.write_text(yaml.safe_dump(doc), encoding="utf-8")
    rep = run_validation(f)
    assert rep.cases[0].error and rep.cases[1].predicted is not None


def test_wrong_schema_is_rejected(tmp_path: Path) -> None:
    f = tmp_path / "v.yaml"
    f.write_text("schema: other/2\ncases: []\n", encoding="utf-8")
    with pytest.raises(SpecError, match="schema"):
        run_validation(f)


def test_validator_takes_switches_from_the_software_catalog() -> None:
    from wanka.validate.cases import case_scenario

    cases, _ = load_cases()
    c = next(c for c in cases if c.id.startswith("megatron2021"))
    sc, _ = case_scenario(c)
    assert sc.software is not None and sc.software.framework == "Megatron-LM"
    assert sc.parallel is not None and not sc.parallel.flash_attention  # Megatron-LM 2021: pre-FlashAttention
    assert any("overlap from software" in a for a in sc.assumptions)


def test_case_conversion_tolerates_unstated_optional_fields() -> None:
    import copy

    cases, _ = load_cases()
    raw = copy.deepcopy(next(c for c in cases if c.id.startswith("nemo2511_llama3_8b_b200")).raw)
    raw["model"]["n_kv_heads"] = None  # not stated: treated as multi-head attention
    raw["precision_recipe"] = "nvfp4_future_recipe"  # reported, not modelled
    raw["parallelism"]["zero"] = None
    raw["hardware"]["gpus_per_node"] = None
    from wanka.validate.cases import case_scenario

    sc, _ = case_scenario(Case("x", "steady_state", raw))
    assert sc.model is not None and sc.model.n_kv_heads == sc.model.n_heads
    assert sc.parallel is not None and sc.parallel.zero == 0 and sc.cluster.gpus_per_node == 8
    r = predict_case(Case("x", "steady_state", raw))  # MHA and no ZeRO may no longer fit: said so
    assert (r.predicted is not None and r.predicted > 0) or (r.error and "no layout fits" in r.error)


def test_unpublished_micro_batch_takes_the_fastest_that_fits() -> None:
    import copy

    cases, _ = load_cases()
    raw = copy.deepcopy(next(c for c in cases if c.id == "megatron2021_t1_145.6B").raw)
    raw["batch"]["micro_batch"] = None
    raw["parallelism"]["vpp"] = 2
    r = predict_case(Case("x", "steady_state", raw))
    assert r.predicted is not None
    best = 0.0
    for mb in (1, 2, 4, 8, 16):
        one = copy.deepcopy(raw)
        one["batch"]["micro_batch"] = mb
        p = predict_case(Case("x", "steady_state", one))
        if p.predicted is not None and p.strategy.get("micro_batch") == mb:
            best = max(best, p.predicted)
    assert r.predicted == pytest.approx(best, rel=1e-9)


def test_band_spans_only_layouts_that_fit() -> None:
    from types import SimpleNamespace

    import numpy as np

    from wanka.validate.run import choose

    res = SimpleNamespace(
        reason=np.array([-1, -1, -2, 3]),  # fits, fits, over HBM, shape rule broken
        memory_bytes=np.array([60.0, 70.0, 81.0, 10.0]) * 2.0**30,
        tokens_per_s_per_gpu=np.array([100.0, 120.0, 150.0, 999.0]),
    )
    b = choose(res)  # type: ignore[arg-type]
    assert b is not None and (b.index, b.point, b.low, b.layouts) == (1, 120.0, 100.0, 2)
    # nothing fits: no prediction (the memory limit is never dropped)
    none = SimpleNamespace(
        reason=np.array([-2, 3]), memory_bytes=np.array([90.0, 1.0]), tokens_per_s_per_gpu=np.array([150.0, 9.0])
    )
    assert choose(none) is None  # type: ignore[arg-type]


def test_a_case_whose_layouts_do_not_fit_is_not_predicted() -> None:
    import copy

    cases, _ = load_cases()
    raw = copy.deepcopy(next(c for c in cases if c.id == "megatron2021_t1_145.6B").raw)
    raw["parallelism"]["recompute"] = "none"
    raw["parallelism"]["tp"], raw["parallelism"]["dp"] = 1, raw["parallelism"]["dp"] * raw["parallelism"]["tp"]
    r = predict_case(Case("x", "steady_state", raw))
    assert r.predicted is None and r.error and "no layout fits" in r.error and "GiB" in r.error


def test_unpublished_settings_give_a_band_and_coverage_is_reported(report) -> None:  # type: ignore[no-untyped-def]
    banded = [c for c in report.cases if c.band is not None and c.unknown]
    assert banded, "some public cases leave micro-batch or vpp unpublished"
    for c in banded:
        lo, hi = c.band
        assert lo <= hi and hi == c.predicted and c.layouts >= 1
    inside, n = report.band_coverage()
    assert n == len(banded) and inside == sum(1 for c in banded if c.band[0] <= c.truth <= c.band[1])
    assert report.to_dict()["band_coverage"] == {"inside": inside, "cases": n}
