"""The calibration fit and its cross-validation (smoke tests on a few cases; the real runs are
`python -m benchmarks.fit_calibration [--cv]`, never part of the suite)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("scipy")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks import fit_calibration as fc  # noqa: E402

from wanka.calibration import calibration_info, default_calibration, load_calibration  # noqa: E402


@pytest.fixture(scope="module")
def few() -> list[fc.Case]:
    cases, _ = fc.prepare()
    return cases[::6]  # a spread of families, small enough for a smoke test


def test_fitted_constants_are_the_files_fit_entries_with_bounds() -> None:
    info = calibration_info()
    assert fc.FITTED and all(info[n].provenance == "fit" and info[n].bounds == b for n, b in fc.FITTED.items())


def test_neutral_start_is_mid_range_and_not_the_shipped_values() -> None:
    start = fc.neutral()
    shipped = default_calibration()
    assert np.allclose(fc.to_unit(start), 0.5)
    assert any(getattr(start, n) != getattr(shipped, n) for n in fc.FITTED)
    lo, hi = fc.FITTED["layer_overhead_s"]
    assert start.layer_overhead_s == pytest.approx((lo * hi) ** 0.5)  # log-middle for a scale constant


def test_unit_box_round_trip() -> None:
    cal = default_calibration()
    back = fc.from_unit(fc.to_unit(cal), cal)
    for n in fc.FITTED:
        assert getattr(back, n) == pytest.approx(getattr(cal, n), rel=1e-9)


def test_cross_validation_refits_every_fold_from_neutral_values(few: list[fc.Case]) -> None:
    cv = fc.cross_validate(few, folds=2, max_nfev=2, verbose=False)
    starts = cv.pop("_starts")
    assert len(starts) == 2
    shipped = default_calibration()
    for s in starts:
        assert s == fc.neutral()  # every fold starts from the neutral values ...
        assert s != shipped  # ... never from the shipped (all-data) fit
    assert cv["cases"] == len(few) and np.isfinite(cv["mape"]) and cv["max"] >= cv["median"]
    assert set(cv["errors"]) == {c.id for c in few}


def test_repeated_cross_validation_pools_every_seed_from_neutral_values(few: list[fc.Case]) -> None:
    cv = fc.repeated_cross_validate(few, folds=2, repeats=2, max_nfev=2)
    starts = cv.pop("_starts")
    assert len(starts) == 4 and all(s == fc.neutral() for s in starts)  # 2 folds x 2 seeds, all neutral
    seeds = [fc.cross_validate(few, folds=2, max_nfev=2, seed=s, verbose=False) for s in (0, 1)]
    # the splits differ by seed, and the pooled figures are over both repeats' out-of-fold errors
    assert [r["mape"] for r in cv["repeats"]] == pytest.approx([s["mape"] for s in seeds])
    assert cv["mape"] == pytest.approx(np.mean([s["mape"] for s in seeds]))
    assert cv["max"] == pytest.approx(max(s["max"] for s in seeds))
    assert cv["cases"] == len(few) and set(cv["errors"]) == {c.id for c in few}
    for c in few:
        assert cv["errors"][c.id] == pytest.approx(np.mean([s["errors"][c.id] for s in seeds]))


def test_fit_moves_from_its_start_and_improves_it(few: list[fc.Case]) -> None:
    start = fc.neutral()
    f = fc.fit(few, start, max_nfev=3)
    assert f.cal != start
    e0, e1 = np.abs(fc.errors(few, start)), np.abs(fc.errors(few, f.cal))
    assert e1.mean() < e0.mean()
    assert all(n in fc.FITTED for n in f.at_bound)


def test_write_back_keeps_provenance_and_sources(tmp_path: Path) -> None:
    shipped = ROOT / "src/wanka/data/calibration.yaml"
    p = tmp_path / "cal.yaml"
    p.write_text(shipped.read_text(encoding="utf-8"), encoding="utf-8")
    cal = fc.from_unit(np.full(len(fc.FITTED), 0.25), default_calibration())
    fc.write_calibration(cal, p)
    back = load_calibration(p)
    for n in fc.FITTED:
        assert getattr(back, n) == pytest.approx(getattr(cal, n), rel=1e-3)
    assert replace(back, **{n: getattr(default_calibration(), n) for n in fc.FITTED}) == default_calibration()
    assert p.read_text(encoding="utf-8").count("source:") == shipped.read_text(encoding="utf-8").count("source:")


def test_per_case_table_lists_every_case_worst_first(few: list[fc.Case]) -> None:
    errs = np.linspace(-0.4, 0.2, len(few))
    held = {"5-fold": {c.id: float(e) for c, e in zip(few, errs, strict=True)}, "family": {c.id: 0.0 for c in few}}
    lines = fc.per_case_table(few, held).splitlines()
    body = lines[2:]
    assert len(body) == len(few)
    assert body[0].startswith(few[0].id)  # -40% is the largest error in either column
    assert "-40.0%" in body[0] and "+0.0%" in body[0]
    firsts = [abs(held["5-fold"][line.split()[0]]) for line in body]
    assert firsts == sorted(firsts, reverse=True)
