"""Consistency checks of the Blackwell entries (B200, GB200, B300, GB300) against the NVIDIA figures and
the GEMM measurements they were taken from, and the physical relations between same-die parts: they
differ by the SMs and clock they run, not by their datasheet peaks."""

from __future__ import annotations

import pytest

from wanka.catalog import accelerator, catalog

# Bekman, 'Maximum Achievable Matmul FLOPS comparison table' (mamf-finder, BF16), TFLOPS
MAMF_BF16 = {"B200": 1745.0, "B300": 1769.0, "GB200": 1822.0}
# device-reported maximum SM clocks, MHz (nvidia-smi, as tabulated in the same source)
MAX_SM_CLOCK_MHZ = {"B200": 1965.0, "GB200": 2062.0}
# enabled SMs: B200 148 (XLA's b200 device spec); GB200 152 (NVIDIA cudnn-frontend's peak_mma_tflops, 2,568 =
# 152 x 8,192 x 2,062 MHz; facebookexperimental/triton #2768)
SMS = {"B200": 148, "GB200": 152}
BF16_FLOP_PER_CLOCK_PER_SM = 8192  # Blackwell dense BF16 (2 x Hopper's 4096)
# NVIDIA cudnn-frontend sdpa_benchmark_training, llama3.1 results of 2026-09-28, peak_mma_tflops (BF16)
CUDNN_FRONTEND_PEAK_MMA = {"GB200": 2568.0, "GB300": 2578.0}


@pytest.mark.parametrize(("name", "mamf"), sorted(MAMF_BF16.items()))
def test_matmul_fraction_is_the_measured_mamf_over_the_datasheet_peak(name: str, mamf: float) -> None:
    """Consistency check of the catalog against the measurement it was taken from."""
    acc = accelerator(name)
    assert acc.matmul_fraction == pytest.approx(mamf * 1e12 / acc.peak("bf16"), abs=0.001)
    entry = next(e for e in catalog().accelerators if e.name == acc.name)
    assert not any(a.startswith("matmul_fraction") for a in entry.assumptions), name


def _sm_clock_peak(name: str) -> float:
    return SMS[name] * BF16_FLOP_PER_CLOCK_PER_SM * MAX_SM_CLOCK_MHZ[name] * 1e6


def test_gb200_sm_count_and_maximum_clock_reproduce_the_recorded_mma_peak() -> None:
    """Consistency check of the SM counts against NVIDIA's benchmark record (8,192 x SMs x the highest
    sampled SM clock): 152 SMs at the 2,062 MHz maximum, where 148 would need 2,118 MHz."""
    assert _sm_clock_peak("GB200") / 1e12 == pytest.approx(CUDNN_FRONTEND_PEAK_MMA["GB200"], rel=1e-3)
    assert CUDNN_FRONTEND_PEAK_MMA["GB300"] == pytest.approx(CUDNN_FRONTEND_PEAK_MMA["GB200"], rel=0.005)


@pytest.mark.parametrize("name", ["B200", "GB200"])
def test_datasheet_peaks_are_quoted_below_the_maximum_clock(name: str) -> None:
    """B200's 2.25 PF is 148 SMs at 1,856 MHz, GB200's 2.5 PF 152 SMs at 2,007 MHz: both run faster."""
    assert accelerator(name).peak("bf16") < _sm_clock_peak(name)


def test_same_die_parts_compute_about_the_same_per_sm_clock() -> None:
    """B200 and GB200 are one die: their measured GEMM rates per SM-clock agree within 4% (0.733 vs 0.710),
    so GB200 is faster by its SMs and clock (1.078 at most; measured 1.044), not by its datasheet peak
    (2500 / 2250 = 1.111)."""
    per_clock = {n: accelerator(n).matmul_fraction * accelerator(n).peak("bf16") / _sm_clock_peak(n) for n in SMS}
    assert per_clock["GB200"] == pytest.approx(per_clock["B200"], rel=0.04)


def test_gb200_attention_fraction_is_b200s_moved_by_the_measured_gemm_ratio() -> None:
    """Consistency check of the derived GB200 attention figure against its stated derivation."""
    gb200, b200 = accelerator("GB200"), accelerator("B200")
    gemm_ratio = MAMF_BF16["GB200"] / MAMF_BF16["B200"]
    derived = b200.attention_fraction * b200.peak("bf16") / gb200.peak("bf16") * gemm_ratio
    assert gb200.attention_fraction == pytest.approx(derived, abs=0.003)


@pytest.mark.parametrize("name", ["GB200", "GB300"])
def test_nvl72_per_gpu_figures_add_up_to_the_rack(name: str) -> None:
    """NVIDIA's NVL72 rack tables: 360 PF dense FP8, 180 PF dense BF16, 576 TB/s of HBM over 72 GPUs."""
    acc = accelerator(name)
    assert 72 * acc.peak("fp8") == pytest.approx(360e15)
    assert 72 * acc.peak("bf16") == pytest.approx(180e15)
    assert 72 * acc.hbm_bandwidth == pytest.approx(576e12)
    rack_hbm_tb = {"GB200": 13.5, "GB300": 20.0}[name]  # GB200 NVL72 13.4-13.5 TB, GB300 NVL72 20 TB
    # NVIDIA counts HBM in GiB and writes GB (nvidia-smi: 189,471 MiB on a GB200 = 0.995 x 186 GiB); the
    # rack's TB is 72 x those GB / 1000
    assert 72 * acc.hbm_bytes / 2**30 / 1000 == pytest.approx(rack_hbm_tb, rel=0.01)


def test_hgx_b200_per_gpu_bandwidth_fits_the_board_total() -> None:
    # HGX B200: 'up to 62 TB/s' over 8 GPUs; the per-GPU column says 7.7 TB/s
    assert 8 * accelerator("B200").hbm_bandwidth <= 62e12


@pytest.mark.parametrize(("ultra", "base"), [("B300", "B200"), ("GB300", "GB200")])
def test_blackwell_ultra_keeps_the_fp8_and_bf16_peaks_and_raises_fp4(ultra: str, base: str) -> None:
    u, b = accelerator(ultra), accelerator(base)
    assert u.peak("bf16") == b.peak("bf16") and u.peak("fp8") == b.peak("fp8")
    assert u.peak("fp4") > b.peak("fp4")
    assert u.hbm_bytes > 1.4 * b.hbm_bytes  # 12-high stacks
    assert u.attention_fraction > b.attention_fraction  # doubled exp (SFU EX2) units


# Azure AI-benchmarking-guide (Azure_Results/ND_GB300_v6_results.md, ND_GB200_v6_results.md): superbench
# cublaslt_gemm, FP8, random data, 10,000 warm-up iterations, 16384^3, TFLOPS
SUSTAINED_FP8_GEMM = {"GB300": 3308.5, "GB200": 2819.5}
# NVIDIA cudnn-frontend sdpa_benchmark_training, one cuDNN 9.26 build (results/dsv3/*/dsv3_20260724_*.csv):
# best DeepSeek-V3 (head dim 192 / 128) BF16 attention forward over sequence lengths and backends, TFLOPS
ATTN_FWD_BF16_BEST = {"GB300": 2179.0, "GB200": 1846.0}


def test_gb300_gemm_share_is_gb200s_times_the_sustained_gemm_ratio() -> None:
    """Consistency check of the catalog against the measurements it was derived from, and the assumption it
    names (no mamf-finder figure exists for GB300)."""
    entry = next(e for e in catalog().accelerators if e.name == "GB300")
    assert any(a.startswith("matmul_fraction 0.855 derived") for a in entry.assumptions)
    ratio = SUSTAINED_FP8_GEMM["GB300"] / SUSTAINED_FP8_GEMM["GB200"]
    expected = accelerator("GB200").matmul_fraction * ratio
    assert accelerator("GB300").matmul_fraction == pytest.approx(expected, abs=0.001)


def test_gb300_gemm_gain_matches_a_same_build_kernel_it_was_not_taken_from() -> None:
    """Check against a published figure the fraction was not built from: one cuDNN build's MMA-bound
    attention forward is 18% faster on GB300, as the GEMM ratio from another harness and CUDA release."""
    gain = accelerator("GB300").matmul_fraction / accelerator("GB200").matmul_fraction
    assert gain == pytest.approx(ATTN_FWD_BF16_BEST["GB300"] / ATTN_FWD_BF16_BEST["GB200"], rel=0.02)


def test_gb300_gemm_gain_fits_the_power_it_has_over_gb200() -> None:
    """Same peaks from the same 152 SMs at the same maximum clock (2,070 vs 2,062 MHz): the sustained gain
    can only come from the clock the power limit holds. Dynamic power C V^2 f grows at least in proportion
    to the clock, so the clock (and GEMM rate) ratio is at most the ratio of the dynamic-power budgets, TDP
    over idle: (1,400 - 150) / (1,200 - 150) = 1.19."""
    u, b = accelerator("GB300"), accelerator("GB200")
    assert u.peak("bf16") == b.peak("bf16") and u.peak("fp8") == b.peak("fp8")
    gain = u.matmul_fraction / b.matmul_fraction
    budget = (u.tdp_w - u.idle_w) / (b.tdp_w - b.idle_w)
    assert 1.0 < gain <= budget


# Azure/AI-benchmarking-guide (Benchmarks/NVIDIA/FlashAttention.py: flash-attn's benchmark_flash_attention.py,
# forward + backward, head dim 128, batch 2, 8,192 tokens), Azure_Results/ND_*_results.md, TFLOPS
AZURE_FA2 = {"H100-SXM5-80GB": 327.9, "H200": 329.3, "GB200": 373.9, "GB300": 399.7}


def test_flash_attention_2_share_on_blackwell_is_the_measured_rate() -> None:
    """FlashAttention-2's Ampere-style kernels do not use Blackwell's tensor cores well: Azure's harness
    measures GB200 and GB300 at 1.14-1.22x H100's rate, not 2.4x. The Blackwell entries are those figures
    (consistency check: x 1.055, the catalog's H100 share over the same harness's) and Hopper's 0.35, from
    the FlashAttention-3 paper, agrees with the harness within 6% (an independent check)."""
    h100 = accelerator("H100-SXM5-80GB")
    scale = h100.attention_fraction_fa2 * h100.peak("bf16") / (AZURE_FA2["H100-SXM5-80GB"] * 1e12)
    assert scale == pytest.approx(1.055, abs=0.002)
    for name in ("H100-SXM5-80GB", "H200"):
        share = AZURE_FA2[name] * 1e12 / accelerator(name).peak("bf16")
        assert accelerator(name).attention_fraction_fa2 == pytest.approx(share, rel=0.06)
    for name in ("GB200", "GB300"):
        acc = accelerator(name)
        assert acc.attention_fraction_fa2 == pytest.approx(AZURE_FA2[name] * 1e12 * scale / acc.peak("bf16"), abs=0.001)
        assert acc.attention_fraction_fa2 < 0.5 * acc.attention_fraction  # cuDNN's kernel is the Blackwell one
    # B200 and B300 carry it by SMs x clock and by the measured GB300 / GB200 ratio (assumptions)
    b200 = accelerator("B200")
    want = AZURE_FA2["GB200"] * (148 * 1965.0) / (152 * 2062.0) * 1e12 * scale / b200.peak("bf16")
    assert b200.attention_fraction_fa2 == pytest.approx(want, abs=0.001)
    ratio = AZURE_FA2["GB300"] / AZURE_FA2["GB200"]
    assert accelerator("B300").attention_fraction_fa2 == pytest.approx(b200.attention_fraction_fa2 * ratio, abs=0.001)
