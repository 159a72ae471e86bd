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


# AMD's AITER benchmark table (ROCm/aiter op_tests/cpp/mha/README.md, last changed ce08b75, 2026-01-13): BF16,
# causal, head dim 128, batch 8, GQA over 8 KV heads; forward and backward TFLOPS in FlashAttention's count
# (the backward 2.5x the forward's FLOPs). MI300X with fp32 atomics (a32), MI355X with bf16 atomics (a16): the
# settings AMD's Primus runs on each (docs/01-getting-started/bare-metal-installation.md at fd1eeab).
AITER_GQA_CAUSAL = {  # part: {query heads: {sequence length: (forward, backward)}}
    "MI300X": {
        64: {2048: (452.03, 347.89), 4096: (509.255, 402.18), 8192: (550.67, 432.715), 10240: (547.05, 439.785)},
        32: {2048: (412.99, 326.355), 4096: (513.1, 409.05), 8192: (537.36, 441.4), 10240: (556.045, 443.78)},
    },
    "MI355X": {
        64: {2048: (963.165, 817.49), 4096: (1190.295, 972.25), 8192: (1311.955, 1067.89), 10240: (1313.695, 1084.75)},
        32: {2048: (894.45, 806.96), 4096: (1166.875, 967.905), 8192: (1316.805, 1066.705), 10240: (1334.865, 1087.61)},
    },
}
# HipKittens (HazyResearch/HipKittens at f09e968, MIT licence), MI355X, causal, head dim 128, batch 16: its own
# GQA kernel (64 / 8 heads) and an older AITER build's MHA (16 heads), analysis/attn/{fwd,bkwd}/benchmark/*.json
HIPKITTENS_MI355X_CAUSAL = {
    "hipkittens_gqa": {2048: (932.7, 752.6), 4096: (1084.9, 852.1), 8192: (1215.5, 933.0), 16384: (1259.1, 995.0)},
    "aiter_mha": {2048: (876.3, 673.1), 4096: (1069.0, 876.8), 8192: (1173.2, 1034.1), 16384: (1247.4, 1108.7)},
}


def _ceiling(sweep: dict[int, tuple[float, float]], peak_tflops: float) -> tuple[float, list[tuple[float, float]]]:
    """Forward + backward share of peak at each length (the engine's FLOP count: backward 2.5x the forward),
    and the long-sequence ceiling that reproduces them best (least squares) under the engine's length law
    L / (L + attn_half_len_tokens) (engine.core._flash_time)."""
    from wanka.calibration import default_calibration

    half = default_calibration().attn_half_len_tokens
    pts = [(n / (n + half), 3.5 / (1.0 / f + 2.5 / b) / peak_tflops) for n, (f, b) in sweep.items()]
    return sum(x * y for x, y in pts) / sum(x * x for x, _ in pts), pts


@pytest.mark.parametrize("name", ["MI300X", "MI355X"])
def test_amd_attention_share_is_aiters_published_ceiling(name: str) -> None:
    """Consistency check of the catalog against the table it was taken from: the mean of the two GQA shapes'
    ceilings, each length within 15% of the law (2,048 tokens run below it, 10,240 above)."""
    acc = accelerator(name)
    peak = acc.peak("bf16") / 1e12
    fits = [_ceiling(sweep, peak) for sweep in AITER_GQA_CAUSAL[name].values()]
    assert acc.attention_fraction == pytest.approx(sum(c for c, _ in fits) / len(fits), abs=0.002)
    for _, pts in fits:
        for x, y in pts:
            assert acc.attention_fraction * x == pytest.approx(y, rel=0.15)
    entry = next(e for e in catalog().accelerators if e.name == name)
    assert not any(a.startswith("attention_fraction") for a in entry.assumptions)


def test_mi325x_attention_share_is_mi300xs_moved_by_the_measured_gemm_ratio() -> None:
    """Consistency check of the derived MI325X figure against its stated derivation (AMD publishes no MI325X
    attention table; the same CDNA 3 dies at a higher power limit, as GB200's is derived from B200's)."""
    derived = accelerator("MI300X").attention_fraction * 843.0 / 708.0
    assert accelerator("MI325X").attention_fraction == pytest.approx(derived, abs=0.002)
    entry = next(e for e in catalog().accelerators if e.name == "MI325X")
    assert any(a.startswith("attention_fraction 0.438 derived") for a in entry.assumptions)


def test_mi355x_attention_share_agrees_with_hipkittens_sweeps_it_was_not_built_from() -> None:
    """Independent check: HipKittens' own GQA kernel and an older AITER build, measured by another group on
    the same law, within 10% of the catalog's figure."""
    acc = accelerator("MI355X")
    for sweep in HIPKITTENS_MI355X_CAUSAL.values():
        ceiling, _ = _ceiling(sweep, acc.peak("bf16") / 1e12)
        assert ceiling == pytest.approx(acc.attention_fraction, rel=0.10)
