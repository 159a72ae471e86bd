"""Consistency checks of the AMD and Ascend entries added for issue 18 against the vendor factors
they were derived from (compute units x FLOP/clock x clock), and their stated assumptions."""

from __future__ import annotations

import pytest

from wanka.catalog import accelerator, catalog


def test_mi355x_fp8_peak_is_cus_times_rate_times_clock() -> None:
    # 256 CUs x 8192 dense FP8 FLOP/clock/CU x 2.4 GHz (AMD CDNA 4)
    assert accelerator("MI355X").peak("fp8") == pytest.approx(256 * 8192 * 2.4e9, rel=1e-4)
    assert accelerator("MI355X").peak("fp4") == pytest.approx(2 * accelerator("MI355X").peak("fp8"), rel=1e-4)


def test_mi325x_keeps_mi300x_compute_with_more_memory() -> None:
    a, b = accelerator("MI300X"), accelerator("MI325X")
    assert a.peak("bf16") == b.peak("bf16") and a.peak("fp8") == b.peak("fp8")
    assert b.hbm_bytes > a.hbm_bytes and b.hbm_bandwidth > a.hbm_bandwidth


def test_910b3_peak_scales_with_enabled_cores() -> None:
    assert accelerator("Ascend-910B3").peak("bf16") == pytest.approx(
        accelerator("Ascend-910B2").peak("bf16") * 20 / 24, rel=0.01
    )
    assert not accelerator("Ascend-910B3").has_native("fp8")


@pytest.mark.parametrize("name", ["MI325X", "MI355X", "Ascend-910B3", "Ascend-910B4"])
def test_new_parts_name_their_assumptions_and_nodes(name: str) -> None:
    acc = accelerator(name)
    assert acc.default_node is not None
    node = next(n for n in catalog().nodes if n.name == acc.default_node)
    assert node.accelerator == acc.name
    entry = next(e for e in catalog().accelerators if e.name == acc.name)
    assert entry.assumptions, name


@pytest.mark.parametrize(
    ("name", "maf_tflops"),
    # AMD Max-Achievable FLOPs (ROCm blog 'Measuring Max-Achievable FLOPs - Part 2', Table 1, hipBLASLt) for
    # MI300X / MI325X; Bekman's mamf-finder v2 row for MI355X (no AMD figure)
    [("MI300X", 708.0), ("MI325X", 843.0), ("MI355X", 1565.0)],
)
def test_amd_matmul_fraction_is_the_measured_maf_over_the_datasheet_peak(name: str, maf_tflops: float) -> None:
    """Consistency check of the catalog against the measurement it was taken from."""
    acc = accelerator(name)
    assert acc.matmul_fraction == pytest.approx(maf_tflops * 1e12 / acc.peak("bf16"), abs=0.002)
    assert not any("matmul_fraction" in a for a in acc.assumptions), name


# HipKittens (HazyResearch/HipKittens at f09e968, MIT licence): MI355X, causal, head dim 128, BF16, batch 16,
# `tflops_ref` (AMD's AITER flash_attn_func) of analysis/attn/fwd/benchmark/mi355x_mha_causal_fwd.json and
# analysis/attn/bkwd/benchmark/mi355x_mha_bkwd_causal.json, 16 heads; backward FLOPs counted 2.5x the forward's
AITER_MI355X_MHA_CAUSAL = {  # sequence length: (forward, backward) TFLOPS
    2048: (876.3, 673.1),
    4096: (1069.0, 876.8),
    8192: (1173.2, 1034.1),
    16384: (1247.4, 1108.7),
}


def _fwd_bwd_share(fwd_tflops: float, bwd_tflops: float, peak_tflops: float) -> float:
    """Forward + backward share of peak, in the engine's FLOP count (backward 2.5x the forward)."""
    return 3.5 / (1.0 / fwd_tflops + 2.5 / bwd_tflops) / peak_tflops


def test_mi355x_attention_share_is_aiters_published_long_sequence_ceiling() -> None:
    """Consistency check of the catalog against the sweep it was taken from: the engine scales the ceiling by
    L / (L + attn_half_len_tokens) (engine.core._flash_time), so the ceiling that reproduces the sweep best
    (least squares) is the catalog's. Each length comes back within 25%: the law's half length, fit on H100
    kernels, is shorter than AITER's, so 2,048 tokens come out 20% fast and 16,384 9% slow."""
    from wanka.calibration import default_calibration

    acc = accelerator("MI355X")
    peak = acc.peak("bf16") / 1e12
    half = default_calibration().attn_half_len_tokens
    pts = [(n / (n + half), _fwd_bwd_share(f, b, peak)) for n, (f, b) in AITER_MI355X_MHA_CAUSAL.items()]
    ceiling = sum(x * y for x, y in pts) / sum(x * x for x, _ in pts)
    assert acc.attention_fraction == pytest.approx(ceiling, abs=0.002)
    for x, y in pts:
        assert acc.attention_fraction * x == pytest.approx(y, rel=0.25)
    entry = next(e for e in catalog().accelerators if e.name == "MI355X")
    assert not any(a.startswith("attention_fraction") for a in entry.assumptions)
