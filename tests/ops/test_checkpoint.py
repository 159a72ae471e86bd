from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wanka.ops import campaign_inputs, checkpoint_cost, optimal_checkpoint_interval

from .conftest import small


def test_young_daly_by_hand() -> None:
    # δ = 10 s, M = 1 h: sqrt(72000) = 268.33; r = 10/7200; ×(1 + sqrt(r)/3 + r/9) = 271.71; − δ = 261.71
    assert optimal_checkpoint_interval(10.0, 3600.0) == pytest.approx(261.71, abs=0.02)
    # small δ/M: Young's sqrt(2δM)
    assert optimal_checkpoint_interval(1e-3, 1e6) == pytest.approx(math.sqrt(2e3), rel=1e-3)
    assert optimal_checkpoint_interval(5000.0, 2000.0) == 2000.0  # δ ≥ 2M: M (Daly)
    assert optimal_checkpoint_interval(1.0, math.inf) == math.inf


@settings(max_examples=30, deadline=None)
@given(d=st.floats(0.01, 1000), m=st.floats(100, 1e7), k=st.floats(1.01, 100))
def test_optimum_shrinks_with_mtbf(d: float, m: float, k: float) -> None:
    assert optimal_checkpoint_interval(d, m / k) <= optimal_checkpoint_interval(d, m)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(4, 512), k=st.integers(2, 8))
def test_optimal_interval_shrinks_as_the_cluster_grows(n: int, k: int) -> None:
    a = campaign_inputs(small(nodes=n, checkpoint={"mode": "sync"}), step_time_s=1.0)
    b = campaign_inputs(small(nodes=n * k, checkpoint={"mode": "sync"}), step_time_s=1.0)
    assert b.optimal_interval_s < a.optimal_interval_s


def test_modes() -> None:
    sync = checkpoint_cost(small(checkpoint={"mode": "sync"}))
    asyn = checkpoint_cost(small(checkpoint={"mode": "async"}))
    mem = checkpoint_cost(small(checkpoint={"mode": "in_memory"}))
    assert sync.persist_lag_s == 0 and sync.blocking_s == sync.flush_s > 0
    assert asyn.blocking_s < sync.blocking_s and asyn.persist_lag_s > 0
    assert mem.load_s <= mem.storage_load_s
    assert sync.size_bytes == asyn.size_bytes > 1e11  # 8B-class model with Adam state


def test_interval_never_below_a_step_or_the_drain() -> None:
    inp = campaign_inputs(small(checkpoint={"interval_s": 1.0}), step_time_s=30.0)
    assert inp.interval_s == max(30.0, inp.checkpoint.persist_lag_s)
