"""Spares, recovery and the failure floor as operators run them; checks against published figures.

Which figures built the model and which check it:
- BUILT FROM: Llama 3 Table 5 (per-cause counts, 54 days, 16,384 H100) - the rates and the
  size-independent floor (its software causes). The Llama 3 window test is a consistency check.
- HELD OUT (not used to build any rate): Kokolis et al. 2024 (Meta RSC, A100, arXiv:2410.21680):
  projected job MTTF ~7.9 h at 1,024 GPUs and ~1.8 h at 16,384 GPUs; OPT-175B's 53-54 restarts in
  56 days on 992 A100; 10 GPU failures in 55 days on 504 B200 (Lablup, arXiv:2605.09370).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wanka.cli import main
from wanka.ops import campaign_inputs, ettr_limits, job_failure_rates, simulate_campaign
from wanka.ops.recovery import default_spares, erlang_b
from wanka.spec import load_scenario

from .conftest import small

H800 = Path(__file__).parent / "data" / "h800-8k-70b.yaml"
STEP_S = 3.8  # the engine's step for this job (≈ 3.77 s); fixed here so the test does not depend on it


def _h800(**failures: object):  # type: ignore[no-untyped-def]
    s = load_scenario(str(H800))
    return s.model_copy(update={"failures": s.failures.model_copy(update=failures)})


def test_unstated_spares_get_the_operators_pool_and_ettr_above_85_percent() -> None:
    r = simulate_campaign(_h800(), step_time_s=STEP_S, replicas=300, seed=0)
    assert r.spares_from == "default rule" and r.hot_spares >= 11  # ≥ 1 % of 1,024 nodes
    assert r.p_no_spare <= 0.01
    assert r.ettr.mean >= 0.85
    assert any(a.startswith("spares: failures.hot_spares not given") for a in r.assumptions)


def test_no_spares_and_no_elasticity_reproduce_the_pessimistic_figure() -> None:
    r = simulate_campaign(_h800(hot_spares=0), step_time_s=STEP_S, replicas=300, seed=0)
    assert r.spares == 0 and r.p_no_spare == 1.0
    assert r.ettr.mean < 0.65  # the trial: 57 %
    assert r.limited_by == "waiting for spare nodes"
    el = simulate_campaign(_h800(hot_spares=0, elastic=True), step_time_s=STEP_S, replicas=300, seed=0)
    assert el.ettr.mean > r.ettr.mean + 0.2  # shrink and continue instead of waiting 4 h
    assert "running shrunk" in el.ettr_limits


def test_limits_add_up_to_the_closed_form_loss() -> None:
    inp = campaign_inputs(_h800(hot_spares=3), step_time_s=STEP_S)
    from wanka.ops import expected_ettr

    assert sum(ettr_limits(inp).values()) == pytest.approx(1 - expected_ettr(inp), rel=1e-9)


def test_default_pool_rule() -> None:
    # at least 1 % of the job's nodes, and enough that a swap finds a spare 99 % of the time
    assert default_spares(1024, 0.0, 14400.0) == 11
    rate = 20 / 86400  # 20 swaps a day, 4 h repairs: offered load 3.33 nodes
    c = default_spares(100, rate, 14400.0)
    assert erlang_b(c, rate * 14400.0) <= 0.01 < erlang_b(c - 1, rate * 14400.0)
    # idle cluster nodes count toward the pool
    assert default_spares(1024, 0.0, 14400.0, idle=100) == 0


def test_negative_spares_and_short_intervals_are_errors_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(H800.read_text() + "failures:\n  hot_spares: -2\n")
    assert main(["reliability", str(bad), "--step-time", "3", "--replicas", "20"]) == 2
    err = capsys.readouterr().err
    assert "hot_spares" in err and "Traceback" not in err
    short = tmp_path / "short.yaml"
    short.write_text(H800.read_text() + "checkpoint:\n  interval_s: 1\n")
    assert main(["reliability", str(short), "--step-time", "3", "--replicas", "20"]) == 2
    err = capsys.readouterr().err
    assert "checkpoint.interval_s" in err and "one training step" in err


def test_held_out_kokolis_mttf_shape() -> None:
    """HELD OUT: Kokolis et al. 2024 project job MTTF 7.9 h at 1,024 GPUs and 1.8 h at 16,384 (ratio 4.4).

    A pure per-component model (MTTF ∝ 1/GPUs) would give a ratio of 16; the size-independent floor
    brings it to ~4.9. Their clusters are A100 research clusters (more user-code failures): the absolute
    MTTF at 1,024 GPUs comes out about 2x theirs, which the test bounds rather than hides.
    """
    s = small(cluster={"accelerator": "A100-SXM4-80GB", "nodes": 2048})
    m1k = job_failure_rates(s, gpus=1024).mtbf_s / 3600
    m16k = job_failure_rates(s, gpus=16384).mtbf_s / 3600
    assert 4.4 * 0.8 < m1k / m16k < 4.4 * 1.25
    assert 7.9 / 2.5 < m1k < 7.9 * 2.5
    assert 1.8 / 2.5 < m16k < 1.8 * 2.5


def test_generation_without_a_published_table_says_so() -> None:
    r = job_failure_rates(small(cluster={"accelerator": "A100-SXM4-80GB"}))
    assert any("A100" in n and "H100 rates used" in n for n in r.notes)
    assert job_failure_rates(small()).notes == ()


def test_held_out_opt175b_restarts() -> None:
    """HELD OUT: OPT-175B on 992 A100-80GB (124 nodes): 53-54 restarts in 56 days (Zhang, "The spark
    of OPT-175B" talk, 2023; Zhang et al. 2022 §2.5 logbook). wanka: ~88 (hardware 22 + floor 65): the
    floor of Llama 3's software causes over-counts a job that restarted by hand. Bounded by 2x."""
    s = small(cluster={"accelerator": "A100-SXM4-80GB", "nodes": 124}, days=56.0)
    n = job_failure_rates(s).total * 56 * 86400
    assert 53.5 / 2 < n < 53.5 * 2


def test_held_out_blackwell_gpu_failures() -> None:
    """HELD OUT: 504 B200 (63 nodes), 55 days: 10 XID-identified GPU failures (Lablup technical
    report, arXiv:2605.09370). wanka uses the H100 GPU-component rates for Blackwell (no table is
    published) and predicts ~8.4. Bounded by 2x."""
    s = small(cluster={"accelerator": "B200", "nodes": 63}, days=55.0)
    r = job_failure_rates(s)
    gpu = sum(rate for rate, cat in zip(r.rates, r.categories, strict=True) if cat == "GPU")
    n = gpu * 55 * 86400
    assert 10 / 2 < n < 10 * 2
