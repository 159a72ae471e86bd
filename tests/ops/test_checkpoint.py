from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wanka.errors import SpecError
from wanka.ops import campaign_inputs, checkpoint_cost, expected_ettr, optimal_checkpoint_interval

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
    # a fixed coordination cost: the default grows with log2(ranks), which lengthens the optimum
    ck = {"mode": "sync", "coordination_s": 0.0}
    a = campaign_inputs(small(nodes=n, checkpoint=ck), step_time_s=1.0)
    b = campaign_inputs(small(nodes=n * k, checkpoint=ck), step_time_s=1.0)
    assert b.optimal_interval_s < a.optimal_interval_s


def test_modes() -> None:
    sync = checkpoint_cost(small(checkpoint={"mode": "sync"}))
    asyn = checkpoint_cost(small(checkpoint={"mode": "async"}))
    mem = checkpoint_cost(small(checkpoint={"mode": "in_memory"}))
    assert sync.persist_lag_s == 0 and sync.blocking_s == sync.flush_s > 0
    assert asyn.blocking_s < sync.blocking_s and asyn.persist_lag_s > 0
    assert mem.load_s <= mem.storage_load_s
    assert sync.size_bytes == asyn.size_bytes > 1e11  # 8B-class model with Adam state


def test_interval_shorter_than_a_step_is_an_error_naming_the_field() -> None:
    with pytest.raises(SpecError, match=r"checkpoint\.interval_s.*one training step"):
        campaign_inputs(small(checkpoint={"interval_s": 1.0}), step_time_s=30.0)


@given(step=st.floats(0.5, 60.0), interval=st.floats(1.0, 3600.0))
@settings(max_examples=30, deadline=None)
def test_interval_is_whole_steps_and_at_least_the_persist_time(step: float, interval: float) -> None:
    if interval < step:
        return
    inp = campaign_inputs(small(checkpoint={"interval_s": interval}), step_time_s=step)
    k = inp.interval_s / step
    assert abs(k - round(k)) < 1e-6 and k >= 1
    assert inp.interval_s >= inp.checkpoint.persist_lag_s
    assert inp.interval_s >= interval - 1e-9


def test_default_interval_is_searched_within_the_limits() -> None:
    inp = campaign_inputs(small(), step_time_s=7.0)
    k = inp.interval_s / 7.0
    assert abs(k - round(k)) < 1e-9
    assert inp.interval_s >= max(7.0, inp.checkpoint.persist_lag_s)
    # no other whole-step interval within ±2 steps beats it (closed form)
    best = expected_ettr(inp)
    for d in (-2, -1, 1, 2):
        t = inp.interval_s + d * 7.0
        if t >= inp.interval_floor_s:
            assert expected_ettr(replace(inp, interval_s=t)) <= best + 1e-12
