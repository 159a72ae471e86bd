"""FP8 GEMMs run at the accelerator's measured FP8 share of its FP8 peak where the catalog has one
(mamf-finder's FP8 sweep), else at the BF16 share times the calibration's fp8_gemm_ratio."""

import numpy as np
import pytest

from wanka.catalog import accelerator as get_accelerator
from wanka.engine import estimate_step, make_context
from wanka.engine.core import _gemm_eff
from wanka.spec import Scenario, parse_scenario


def _sc(acc: str, precision: str) -> Scenario:
    return parse_scenario(
        {
            "name": "t",
            "cluster": {"accelerator": acc, "nodes": 2, "fabric": {"nic_gbps_per_gpu": 400}},
            "model": "llama3-8b",
            "training": {"global_batch_seqs": 64, "micro_batch": 1, "precision": precision},
            "parallel": {"tp": 1, "pp": 1, "dp": 16},
        }
    )


def test_catalog_fp8_fractions_are_the_published_measurements() -> None:
    # Bekman's mamf-finder table, FP8 column, over the dense FP8 peaks
    assert get_accelerator("B200").matmul_fraction_fp8 == pytest.approx(3432.5 / 4500, abs=1e-3)
    assert get_accelerator("GB200").matmul_fraction_fp8 == pytest.approx(3615.6 / 5000, abs=1e-3)
    assert get_accelerator("B300").matmul_fraction_fp8 == pytest.approx(3353.3 / 4500, abs=1e-3)
    assert get_accelerator("H100").matmul_fraction_fp8 is None  # no FP8 mamf-finder figure


@pytest.mark.parametrize("acc", ["B200", "GB200", "H100"])
def test_fp8_gemm_ceiling_uses_the_measured_fp8_share(acc: str) -> None:
    big = np.array([65536.0])
    fp8 = make_context(_sc(acc, "fp8"))
    bf16 = make_context(_sc(acc, "bf16"))
    a = get_accelerator(acc)
    ratio = float(_gemm_eff(fp8, big, big, big, True)[0] / _gemm_eff(bf16, big, big, big, False)[0])
    want = a.matmul_fraction_fp8 / a.matmul_fraction if a.matmul_fraction_fp8 else fp8.cal.fp8_gemm_ratio
    assert ratio == pytest.approx(want, rel=1e-12)


def test_blackwell_fp8_step_is_slower_than_its_bf16_share_would_make_it() -> None:
    # B200 keeps 0.763 of its FP8 peak against 0.776 of its BF16 peak: FP8 GEMMs a little slower
    # than twice the BF16 rate, so an FP8 step gains less than the ratio of the peaks over BF16
    f = estimate_step(_sc("B200", "fp8"), require_fit=False)
    b = estimate_step(_sc("B200", "bf16"), require_fit=False)
    assert f.step_time_s < b.step_time_s
    assert f.breakdown["compute"] > 0.5 * b.breakdown["compute"]
