"""A published global batch that the published layout cannot run (not a multiple of dp x micro-batch,
as GPT-NeoX-20B's 1538 sequences on dp 12) is predicted at the nearest batch the layout runs, and the
case's assumptions say so; a batch the layout runs is taken as published."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from wanka.spec import Scenario
from wanka.validate import run_validation

_CASE = """schema: wanka-validation/1
cases:
- id: batch_case
  kind: steady_state
  model: {{type: dense, n_layers: 8, hidden: 4096, n_heads: 32, n_kv_heads: 8, ffn_hidden: 14336, vocab: 128256,
    seq_len: 4096}}
  hardware: {{gpu: H100-SXM5-80GB, count: 96, gpus_per_node: 8, nic_gbps_per_gpu: 400}}
  parallelism: {{tp: 2, pp: 4, dp: 12, zero: 1, recompute: full}}
  batch: {{global_batch_seqs: {gbs}, micro_batch: {mb}}}
  precision: bf16
  truth: {{tokens_per_s_per_gpu: 1000}}
"""

Build = Callable[[str], Scenario]  # the scenario_of_case fixture (tests/conftest.py)


@pytest.mark.parametrize(
    ("gbs", "mb", "runs"), [(1538, "null", 1536), (1543, "null", 1548), (1538, 4, 1536), (100, 4, 96)]
)
def test_batch_the_layout_cannot_run_is_rounded_and_said(scenario_of_case: Build, gbs: int, mb: str, runs: int) -> None:
    sc = scenario_of_case(_CASE.format(gbs=gbs, mb=mb))
    assert sc.training.global_batch_seqs == runs
    said = [a for a in sc.assumptions if "global batch" in str(a)]
    assert said and str(gbs) in str(said[0]) and str(runs) in str(said[0])


@pytest.mark.parametrize(("gbs", "mb"), [(5, 4), (40, 4), (300, 64)])
def test_batch_far_from_any_the_layout_runs_is_an_error_not_a_rounding(tmp_path: Path, gbs: int, mb: int) -> None:
    # 5 or 40 sequences on dp 12 x micro-batch 4 (48 a step), 300 on 768: more than 10% from any batch
    # the layout runs is a wrong field, reported as the layout's infeasibility, not predicted
    p = tmp_path / "cases.yaml"
    p.write_text(_CASE.format(gbs=gbs, mb=mb), encoding="utf-8")
    (c,) = run_validation(p).cases
    assert c.predicted is None and c.batch_adjusted is None
    assert c.error and "global batch must be divisible by dp × micro_batch" in c.error


def test_batch_the_layout_runs_is_taken_as_published(scenario_of_case: Build) -> None:
    sc = scenario_of_case(_CASE.format(gbs=1536, mb=4))
    assert sc.training.global_batch_seqs == 1536
    assert not [a for a in sc.assumptions if "global batch" in str(a)]


def test_validator_reports_the_adjustment(tmp_path: Path) -> None:
    # the validator's record and its JSON name what it changed, beside the prediction
    p = tmp_path / "cases.yaml"
    p.write_text(_CASE.format(gbs=1538, mb="null"), encoding="utf-8")
    rep = run_validation(p)
    (c,) = rep.cases
    assert c.predicted is not None and c.batch_adjusted == (1538, 1536)
    assert c.to_dict()["adjusted"] == {"global_batch_seqs": {"published": 1538, "predicted_at": 1536}}
    p.write_text(_CASE.format(gbs=1536, mb="null"), encoding="utf-8")
    (c,) = run_validation(p).cases
    assert c.predicted is not None and c.batch_adjusted is None and "adjusted" not in c.to_dict()
