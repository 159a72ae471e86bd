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
