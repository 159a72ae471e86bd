"""The strong-scaling split (benchmarks/strong_scaling.py): T(dp) = a/dp + b, for published and predicted steps."""

from __future__ import annotations

import numpy as np
import pytest
from benchmarks.strong_scaling import series, split


def test_split_recovers_the_work_and_the_per_step_cost() -> None:
    dp = np.array([4.0, 8.0, 12.0, 16.0])
    got = split(dp, 150.0 / dp + 2.5)
    assert got.a == pytest.approx(150.0, rel=1e-9)
    assert got.b == pytest.approx(2.5, rel=1e-9)


def test_split_needs_two_data_parallel_sizes() -> None:
    with pytest.raises(ValueError, match="two distinct dp"):
        split(np.array([8.0, 8.0]), np.array([10.0, 10.5]))


def test_public_strong_scaling_series_share_their_layout_and_follow_a_over_dp_plus_b() -> None:
    # consistency check on the published data the diagnostic reads: every series holds one layout
    # at several dp, and a/dp + b describes its published step times (within 2%: the premise that
    # per-GPU work falls as 1/dp at a fixed global batch while the per-step costs stay)
    found = series()
    assert found, "the public file has strong-scaling series (Megatron-LM 2021 Table 2, MegaScale Table 2)"
    for s in found:
        dps = [dp for _, dp, _, _ in s["cases"]]
        assert len(set(dps)) == len(dps) >= 2
        t = s["truth"]
        assert t.a > 0
        for _, dp, published, predicted in s["cases"]:
            assert predicted > 0
            assert t.a / dp + t.b == pytest.approx(published, rel=0.02)
