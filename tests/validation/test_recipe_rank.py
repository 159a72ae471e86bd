"""`wanka search` and NVIDIA's tuned recipe (measured, never fitted): for Llama 3.1 405B on 1,024 H100
(the NeMo / Megatron-Bridge performance tables' newest row), the published layout ranks in the search's
top 5%. (How far the search's best layout is from it is measured, not tested: see
benchmarks/check_recipe_rank.py and benchmarks/results/calibration.json.)"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.check_recipe_rank import rank, recipe_cases  # noqa: E402

from wanka.catalog.software import release_version  # noqa: E402


def test_newest_tuned_405b_h100_recipe_ranks_in_the_top_5_percent() -> None:
    rows = recipe_cases()
    assert rows
    newest = max(rows, key=lambda c: release_version(str(c.raw["software"]["release"])))
    r = rank(newest)
    assert "error" not in r, r
    assert r["gpus"] == 1024 and r["feasible"] > 1000
    assert r["percentile"] <= 0.05, r
    assert r["best_over_recipe"] >= 0.0  # the recipe is one of the layouts searched: the best is no slower


def test_the_gap_terms_add_up_to_the_step_difference_and_set_rejects_unknown_constants() -> None:
    from benchmarks.check_recipe_rank import calibration_with

    rows = recipe_cases()
    r = rank(min(rows, key=lambda c: c.raw["hardware"]["count"]))
    assert "error" not in r, r
    # consistency: the breakdown terms of each layout sum to its step, so their differences sum to
    # the difference of the steps
    assert abs(sum(r["gap_s"].values()) - (r["best_step_s"] - r["recipe_step_s"])) < 1e-6 * r["recipe_step_s"]
    assert calibration_with([]) is None
    assert calibration_with(["tp_overlap_efficiency=0.5"]).tp_overlap_efficiency == 0.5  # type: ignore[union-attr]
    for bad in (["no_such_constant=1"], ["tp_overlap_efficiency"], ["tp_overlap_efficiency=x"]):
        try:
            calibration_with(bad)
        except ValueError as e:
            assert "--set" in str(e)
        else:
            raise AssertionError(f"{bad} accepted")
