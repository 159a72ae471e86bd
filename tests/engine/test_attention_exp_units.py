"""The softmax's exponentials run on the special-function units (MUFU.EX2), not the tensor cores (issues 13
and 18): the softmax share of a fused-attention kernel follows each accelerator's bf16-peak / exp-rate
balance, so small heads lose more on Blackwell (tensor rate doubled per SM-clock, exp units not) than on
Hopper, and less on Blackwell Ultra (exp units doubled)."""

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from pydantic import ValidationError

from wanka.catalog import accelerator
from wanka.catalog.entries import AcceleratorEntry
from wanka.engine.context import Context
from wanka.engine.core import head_dim_throughput, softmax_ratio


def test_the_reference_gpu_reproduces_the_measured_softmax_ratio(attention_ctx: Callable[..., Context]) -> None:
    # consistency check: attn_softmax_ratio was measured on H100 SXM5, whose catalog balances are the
    # calibration's reference ones, so the per-accelerator split must give it back unchanged
    h100 = attention_ctx(64, "H100-SXM5-80GB")
    assert softmax_ratio(h100) == pytest.approx(h100.cal.attn_softmax_ratio, rel=2e-3)
    # FlashAttention-3 (Sec. 3.1): 989 TFLOPS vs 3.9 T exp/s, 512 matmul FLOPs per exp at head dim 128, so the
    # exponentials alone take ~50% of the forward matmul time
    acc = h100.acc
    assert acc.exp_rate is not None
    assert acc.peak("bf16") / acc.exp_rate / 512.0 == pytest.approx(0.5, abs=0.01)


def test_small_heads_lose_more_on_blackwell_and_less_on_blackwell_ultra(attention_ctx: Callable[..., Context]) -> None:
    hd = {a: head_dim_throughput(attention_ctx(64, a)) for a in ("A100-SXM4-80GB", "H100-SXM5-80GB", "B200", "B300")}
    r = {a: softmax_ratio(attention_ctx(64, a)) for a in hd}
    assert r["A100-SXM4-80GB"] < r["H100-SXM5-80GB"] < r["B300"] < r["B200"]
    assert hd["B200"] < hd["B300"] < hd["H100-SXM5-80GB"] < hd["A100-SXM4-80GB"] < 1.0
    # head dim 128 + 128 is where the catalog's fractions are quoted: no change there on any accelerator
    for a in hd:
        assert head_dim_throughput(attention_ctx(128, a)) == 1.0


def test_the_exp_part_follows_the_exp_rate_and_an_unknown_rate_falls_back_to_the_reference(
    attention_ctx: Callable[..., Context],
) -> None:
    b200 = attention_ctx(64, "B200")
    assert b200.acc.exp_rate is not None
    doubled = replace(b200, acc=replace(b200.acc, exp_rate=2.0 * b200.acc.exp_rate))
    exp_part = 2.0 * (b200.acc.peak("bf16") / b200.acc.exp_rate) / (7.0 * 256.0)
    assert softmax_ratio(b200) - softmax_ratio(doubled) == pytest.approx(exp_part / 2.0, rel=1e-9)
    assert head_dim_throughput(doubled) > head_dim_throughput(b200)
    unknown = replace(b200, acc=replace(b200.acc, exp_rate=None))
    assert softmax_ratio(unknown) == b200.cal.attn_softmax_ratio


def test_catalog_exp_rates_match_the_per_sm_clock_balances() -> None:
    # consistency check of the catalog entries against their stated derivation: dense BF16 FLOPs per exp
    # per SM per clock = 2,048/16 (Ampere), 4,096/16 (Hopper), 8,192/16 (Blackwell), 8,192/32 (Blackwell Ultra)
    expected = {"A100-SXM4-80GB": 128, "H100-SXM5-80GB": 256, "H200": 256, "B200": 512, "GB200": 512}
    expected |= {"B300": 256, "GB300": 256}
    for name, ratio in expected.items():
        acc = accelerator(name)
        assert acc.exp_rate is not None
        assert acc.peak("bf16") / acc.exp_rate == pytest.approx(ratio, rel=2e-3), name


def test_blackwell_ultra_attention_fraction_is_derived_from_blackwell_by_the_softmax_share(
    attention_ctx: Callable[..., Context],
) -> None:
    # consistency check: B300 / GB300 have no published kernel figure; their catalog fraction is the
    # measured B200 one (GB200: B200's at the superchip clock) with only the softmax share changed
    for ultra, base in (("B300", "B200"), ("GB300", "GB200")):
        u, b = attention_ctx(64, ultra), attention_ctx(64, base)
        derived = b.acc.attention_fraction * (1.0 + softmax_ratio(b)) / (1.0 + softmax_ratio(u))
        assert u.acc.attention_fraction == pytest.approx(derived, abs=0.002), ultra
        assert u.acc.attention_fraction > b.acc.attention_fraction


def test_a_negative_exp_rate_is_refused_naming_the_field() -> None:
    entry: dict[str, Any] = {
        "name": "X",
        "vendor": "Y",
        "dense_tflops": {"bf16": 100.0},
        "hbm_gib": 80,
        "hbm_tbytes_per_s": 2.0,
        "scale_up_gbytes_per_s_per_direction": 100,
        "scale_up_domains": [8],
        "tdp_w": 500,
        "idle_w": 50,
        "source": "test",
        "exp_tera_per_s": -1.0,
    }
    with pytest.raises(ValidationError, match="exp_tera_per_s"):
        AcceleratorEntry.model_validate(entry)


def test_hopper_to_blackwell_attention_fraction_follows_the_softmax_share(
    attention_ctx: Callable[..., Context],
) -> None:
    # check against a published figure the softmax split was not built from: the matmul-only share of a
    # fused kernel, fraction x (1 + r), measured on H100 (0.60, FlashAttention-3 / cuDNN) and moved to B200's
    # softmax share gives B200's cuDNN figure from the FlashAttention-4 paper (0.45) within 6%
    h100, b200 = attention_ctx(64, "H100-SXM5-80GB"), attention_ctx(64, "B200")
    predicted = h100.acc.attention_fraction * (1.0 + softmax_ratio(h100)) / (1.0 + softmax_ratio(b200))
    assert predicted == pytest.approx(b200.acc.attention_fraction, rel=0.06)
    # the mechanism removed (no exp rates: r as on H100 everywhere), the same prediction is a third too high
    flat = replace(b200, acc=replace(b200.acc, exp_rate=None))
    flat_prediction = h100.acc.attention_fraction * (1.0 + softmax_ratio(h100)) / (1.0 + softmax_ratio(flat))
    assert flat_prediction > 1.3 * b200.acc.attention_fraction
