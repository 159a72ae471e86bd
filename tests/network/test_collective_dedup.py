"""Timing a batch of collectives once per distinct (bytes, group) row gives what timing every row gives."""

from __future__ import annotations

import numpy as np
import pytest

from wanka.network import collectives as col
from wanka.network.collectives import CommGroup, collective_time


def _batch(n: int, seed: int) -> tuple[np.ndarray, CommGroup]:
    rng = np.random.default_rng(seed)
    size = rng.choice([1.0, 2.0, 4.0, 8.0, 64.0, 512.0], n)
    per_domain = np.minimum(size, rng.choice([1.0, 2.0, 8.0], n))
    nbytes = rng.choice([1e3, 6e4, 3e6, 2.5e8, 1e9], n) * rng.choice([1.0, 3.0], n)
    group = CommGroup(
        size=size,
        per_domain=per_domain,
        scale_up_bw=rng.choice([450e9, 900e9], n),
        scale_out_bw=50e9,
        scale_out_contention=rng.choice([1.0, 1.3], n),
        scale_up_reduction=True,
        in_network_reduction=True,
        architecture="Hopper",
    )
    return nbytes, group


@pytest.mark.parametrize("op", ["all_reduce", "reduce_scatter", "all_gather", "all_to_all", "send_recv", "broadcast"])
@pytest.mark.parametrize("bits", [20, 2])  # 2 bits: every batch collides in the table and takes the sort
def test_deduplicated_batch_equals_every_row(op: str, bits: int, monkeypatch: pytest.MonkeyPatch) -> None:
    nbytes, group = _batch(4000, 1)
    monkeypatch.setattr(col, "_HASH_BITS", bits)
    fast = collective_time(op, nbytes, group)
    full = col._collective_time_all(op, nbytes, group)
    assert fast.choice is not None and full.choice is not None
    assert np.array_equal(np.asarray(fast.time_s), np.asarray(full.time_s))
    assert np.array_equal(np.asarray(fast.busbw), np.asarray(full.busbw))
    assert np.array_equal(fast.choice, full.choice)
    assert (fast.algorithm, fast.protocol) == (full.algorithm, full.protocol)


def test_distinct_rows_refuses_rows_that_barely_repeat() -> None:
    x = np.arange(1000.0)
    assert col._distinct_rows([x, x * 2.0]) is None
    rep_inv = col._distinct_rows([np.repeat(np.arange(10.0), 100)])
    assert rep_inv is not None
    rep, inverse = rep_inv
    assert rep.size == 10 and inverse.shape == (1000,)


def test_nan_rows_are_timed_one_by_one() -> None:
    nbytes, group = _batch(2000, 2)
    nbytes[5] = np.nan
    assert col._distinct_rows([nbytes, np.asarray(group.size)]) is None
    t = np.asarray(collective_time("all_reduce", nbytes, group).time_s)
    assert np.isnan(t[5]) and np.isfinite(np.delete(t, 5)).all()


@pytest.mark.parametrize("seed", [3, 4])
def test_reduce_scatter_mirrors_all_gather(seed: int) -> None:
    """The engine times a tensor-parallel reduce-scatter by the all-gather of the same bytes and group."""
    nbytes, group = _batch(3000, seed)
    ag = collective_time("all_gather", nbytes, group)
    rs = collective_time("reduce_scatter", nbytes, group)
    assert np.array_equal(np.asarray(ag.time_s), np.asarray(rs.time_s))
    for i in (0, 7, 99):
        one = CommGroup(
            size=float(group.size[i]),
            per_domain=float(group.per_domain[i]),
            scale_up_bw=float(group.scale_up_bw[i]),
            scale_out_bw=50e9,
            scale_out_contention=float(group.scale_out_contention[i]),
        )
        a = collective_time("all_gather", float(nbytes[i]), one).time_s
        assert a == collective_time("reduce_scatter", float(nbytes[i]), one).time_s


@pytest.mark.parametrize("op", ["all_reduce", "reduce_scatter", "all_gather", "all_to_all", "send_recv", "broadcast"])
def test_one_collective_in_floats_equals_numpy(op: str) -> None:
    """A single collective (0-d or one-element inputs) timed in Python floats agrees with numpy's path."""
    nbytes, group = _batch(300, 5)
    for i in range(300):
        for shaped in (False, True):

            def pick(v: object, i: int = i, shaped: bool = shaped) -> object:
                return np.asarray(v)[i : i + 1] if shaped else float(np.asarray(v)[i])

            one = CommGroup(
                size=pick(group.size),
                per_domain=pick(group.per_domain),
                scale_up_bw=pick(group.scale_up_bw),
                scale_out_bw=50e9,
                scale_out_contention=pick(group.scale_out_contention),
                scale_up_reduction=True,
                in_network_reduction=bool(i % 2),
                architecture="Hopper" if i % 3 else None,
                remote_dedup=0.5 if i % 5 == 0 else 1.0,
            )
            fast = collective_time(op, pick(nbytes), one)
            full = col._collective_time_all(op, pick(nbytes), one)
            assert np.ndim(fast.time_s) == np.ndim(full.time_s)
            np.testing.assert_allclose(fast.time_s, full.time_s, rtol=1e-12, atol=0)
            np.testing.assert_allclose(fast.busbw, full.busbw, rtol=1e-12, atol=0)
            assert (fast.algorithm, fast.protocol) == (full.algorithm, full.protocol)


def test_one_collective_with_a_zero_bandwidth_falls_back_to_numpy() -> None:
    g = CommGroup(size=16.0, per_domain=8.0, scale_up_bw=450e9, scale_out_bw=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        fast = collective_time("all_reduce", 1e8, g)
        full = col._collective_time_all("all_reduce", 1e8, g)
    assert fast.time_s == full.time_s or (np.isnan(fast.time_s) and np.isnan(full.time_s))
