"""One strategy on numpy scalars (:meth:`Strategies.scalars`, the path :func:`estimate_step` takes
through :mod:`wanka.engine.npx`'s fast paths) gives every number the batch path gives that strategy:
the feasibility code, and every output of :func:`evaluate` (step, breakdown, memory, traffic, link
busy and exposed times, MFU, HFU) to 1e-12 relative, on every preset and on random strategies."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from dataclasses import fields
from typing import Any

import numpy as np
import pytest

from wanka import npx
from wanka.engine import Strategies, estimate_step, make_context
from wanka.engine.context import Context
from wanka.engine.core import evaluate
from wanka.engine.feasibility import check
from wanka.errors import InfeasibleError
from wanka.spec import list_presets, load_scenario

PRESETS = list_presets()
RTOL = 1e-12
# strategies per preset, nine in ten feasible; WANKA_EQUIV_N=1600 for the full check (22,400 checked,
# 20,160 evaluated in full; ~3 min)
N_RANDOM = int(os.environ.get("WANKA_EQUIV_N", "200"))


def _leaves(raw: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(raw, dict):
        out: dict[str, Any] = {}
        for k, v in raw.items():
            out.update(_leaves(v, f"{prefix}/{k}"))
        return out
    return {prefix: raw}


def random_strategies(gpus: int, moe: bool, n: int, seed: int) -> Strategies:
    """Random layouts of ``gpus`` (world size mostly right), every switch drawn."""
    rng = np.random.default_rng(seed)
    tp = rng.choice([1, 2, 4, 8], n)
    pp = rng.choice([1, 2, 3, 4, 5, 6, 8, 10, 13, 15, 16], n)
    cp = rng.choice([1, 1, 2, 4], n)
    dp = np.maximum(1, gpus // (tp * pp * cp))
    cols: dict[str, Any] = dict(
        tp=tp,
        pp=pp,
        dp=dp,
        cp=cp,
        ep=rng.choice([1, 2, 8, 32, 64], n) if moe else 1,
        vpp=rng.choice([1, 1, 2, 3, 4], n),
        micro_batch=rng.choice([1, 2, 4], n),
        zero=rng.choice([0, 1, 2, 3], n),
        recompute=rng.choice([0, 1, 2], n),
        shard=rng.choice([0, 0, 0, 8, 64], n),
        cp_comm=rng.choice([0, 1, 2, 3], n),
        cp_a2a=rng.choice([0, 0, 2], n),
    )
    for k in (
        "sp",
        "tp_overlap",
        "dp_overlap",
        "pp_overlap",
        "pp_scatter",
        "flash",
        "fa2",
        "ep_overlap",
        "cuda_graphs",
        "deepep",
        "dualpipe",
        "zero_bubble",
        "shared_overlap",
    ):
        cols[k] = rng.random(n) < (0.8 if k in ("sp", "flash") else 0.5)
    return Strategies.from_columns(**cols)


def mostly_feasible(ctx: Context, moe: bool, n: int, seed: int) -> Strategies:
    """``n`` random strategies, nine in ten of them passing the shape rules where the draw finds them."""
    st = random_strategies(ctx.gpus, moe, 40 * n, seed)
    code = check(ctx, st)
    ok, bad = np.flatnonzero(code == -1), np.flatnonzero(code >= 0)
    pick = np.concatenate([ok[: n - n // 10], bad[: n // 10]])
    return Strategies(**{f.name: getattr(st, f.name)[pick] for f in fields(st)})


def assert_rows_equal(ctx: Context, st: Strategies) -> int:
    """Check and evaluate each row of ``st`` alone on numpy scalars against the batch; returns how
    many rows passed the shape rules (and were compared in full)."""
    with np.errstate(all="ignore"):
        code = check(ctx, st)
        ok = np.flatnonzero(code == -1)
        batch = _leaves(evaluate(ctx, st))
    for i in range(len(st)):
        assert int(check(ctx, st.scalars(i))[0]) == int(code[i]), st.row(i)
    for i in ok:
        one = _leaves(evaluate(ctx, st.scalars(int(i))))
        assert one.keys() == batch.keys()
        for key, b in batch.items():
            b_i = np.broadcast_to(np.asarray(b, dtype=float), (len(st),))[i]
            a = float(np.asarray(one[key], dtype=float))
            assert not isinstance(one[key], np.ndarray) or one[key].ndim == 0, key
            if a != b_i:  # bit-identical is the rule; 1e-12 relative is the allowance
                assert abs(a - b_i) <= RTOL * abs(b_i), (key, st.row(int(i)), a, b_i)
    return len(ok)


@pytest.mark.parametrize("preset", PRESETS)
def test_estimate_step_equals_the_batch_path(preset: str) -> None:
    sc = load_scenario(preset)
    assert sc.parallel is not None and sc.training is not None
    ctx = make_context(sc)
    st = Strategies.from_specs([sc.parallel], [sc.training.micro_batch])
    assert_rows_equal(ctx, st)
    try:
        r = estimate_step(sc, require_fit=False)
    except InfeasibleError:
        assert int(check(ctx, st)[0]) >= 0
        return
    with np.errstate(all="ignore"):
        raw = evaluate(ctx, st)
    assert r.step_time_s == float(raw["step_time_s"][0])
    assert r.mfu == float(raw["mfu"][0])
    assert r.memory.total == pytest.approx(float(raw["memory_bytes"][0]), rel=RTOL)


@pytest.mark.parametrize("preset", PRESETS)
def test_random_strategies_alone_equal_the_batch(preset: str) -> None:
    sc = load_scenario(preset)
    assert sc.model is not None
    ctx = make_context(sc)
    st = mostly_feasible(ctx, sc.model.moe is not None, N_RANDOM, seed=len(preset))
    compared = assert_rows_equal(ctx, st)
    assert compared >= N_RANDOM // 2  # the draw reaches the model, not only the shape rules


def test_fast_paths_match_numpy_on_scalars() -> None:
    nan = float("nan")
    vals = [np.float64(x) for x in (-2.5, -0.5, -0.0, 0.0, 0.5, 1.0, 3.5, 2.0**60 + 1e3, 1e300, np.inf, -np.inf, nan)]
    for a in vals:
        for b in vals:
            for fn in ("maximum", "minimum"):
                want, got = getattr(np, fn)(a, b), getattr(npx, fn)(a, b)
                assert (np.isnan(want) and np.isnan(got)) or (want == got and np.signbit(want) == np.signbit(got))
            for c in (np.bool_(True), np.bool_(False)):
                assert np.array_equal(np.where(c, a, b), npx.where(c, a, b), equal_nan=True)
        with np.errstate(invalid="ignore"):
            for fn in ("sqrt", "ceil", "floor"):
                want, got = getattr(np, fn)(a), getattr(npx, fn)(a)
                assert (np.isnan(want) and np.isnan(got)) or (want == got and np.signbit(want) == np.signbit(got))
            assert np.array_equal(np.clip(a, 0.0, 2.0), npx.clip(a, 0.0, 2.0), equal_nan=True)
        assert npx.any(a) == bool(np.any(a)) and npx.all(a) == bool(np.all(a))
        u, w = npx.unique(a), np.unique(a)
        assert u.dtype == w.dtype and np.array_equal(u, w, equal_nan=True)
    x = np.array([1.0, nan, 3.0])
    assert npx.maximum(x, 2.0) is not x and np.array_equal(npx.maximum(x, 2.0), np.maximum(x, 2.0), equal_nan=True)
    assert type(npx.asarray(np.int64(3), dtype=float)) is np.float64
    assert type(npx.zeros_like(np.float64(2.0))) is np.float64
    assert npx.asarray([1, 2]).shape == (2,)
    assert npx.unique(3).dtype == np.unique(3).dtype and npx.unique(True).dtype == np.unique(True).dtype


def _same_bits(want: Any, got: Any) -> bool:
    want, got = np.asarray(want), np.asarray(got)
    same_type = want.dtype == got.dtype and want.shape == got.shape
    return bool(same_type and np.array_equal(want.view(np.uint8), got.view(np.uint8)))


def test_where_on_arrays_selects_numpys_bits() -> None:
    """npx.where's array path (bit selection instead of numpy's per-element branch) returns numpy's
    array: the same dtype and every bit (NaN payloads, signed zeros, infinities), for float64, int64
    and bool operands, arrays or scalars, and leaves other combinations to numpy."""
    rng = np.random.default_rng(7)
    n = 2000
    special = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 5e-324, -1.5, 2.0**60])
    payload_nan = np.array([0x7FF8000000000123], dtype=np.uint64).view(np.float64)[0]

    def floats() -> np.ndarray:
        x = rng.normal(size=n) * 1e3
        x[rng.integers(0, n, n // 5)] = rng.choice(special, n // 5)
        return x

    conds = [rng.random(n) < 0.5, np.zeros(n, bool), np.ones(n, bool), np.arange(n) < n // 3]
    float_ops: list[Any] = [floats(), floats(), 0.0, -0.0, 1.0, np.float64(3.5), float("nan"), payload_nan, np.inf]
    int_ops: list[Any] = [rng.integers(-(10**18), 10**18, n), rng.integers(0, 5, n), 0, 1, -7, np.int64(5), 2**62]
    bool_ops: list[Any] = [rng.random(n) < 0.3, rng.random(n) < 0.6, True, np.bool_(False)]
    mixed: list[tuple[Any, Any]] = [
        (float_ops[0], 1),
        (int_ops[1], 0.5),
        (float_ops[0], int_ops[1]),
        (np.float32(2.0), float_ops[0]),
        (float_ops[0][:1], 0.0),  # broadcasting
        (float_ops[0].astype(np.float32), 0.0),
        (int_ops[0], 2**70),
    ]
    cases = [(a, b) for ops in (float_ops, int_ops, bool_ops) for a in ops for b in ops] + mixed
    for c in conds:
        for a, b in cases:
            try:
                want = np.where(c, a, b)
            except (OverflowError, TypeError):
                with pytest.raises((OverflowError, TypeError)):
                    npx.where(c, a, b)
                continue
            assert _same_bits(want, npx.where(c, a, b)), (type(a), type(b))


def test_divides_is_numpys_modulo_test() -> None:
    """The layout's divisibility test (floor(x/d)·d == x) answers as np.mod(x, d) == 0 on every
    integer layout size, zero and negative ones included."""
    from wanka.engine.core import _divides

    d = np.arange(-64, 4097, dtype=float)
    with np.errstate(all="ignore"):
        for x in np.arange(0.0, 400.0):
            assert np.array_equal(_divides(d, x), np.mod(x, d) == 0), x
            assert bool(_divides(np.float64(7.0), x)) == (np.mod(x, 7.0) == 0)


_FAULTS = """
import resource
import numpy as np
from wanka.engine import Strategies, evaluate_batch, make_context
from wanka.spec import load_scenario
ctx = make_context(load_scenario("meta-24k-h100-roce"))
rng = np.random.default_rng(0)
n = 20_000
cols = dict(tp=[1, 2, 4, 8], pp=[1, 2, 4, 8], dp=[64, 128], zero=[0, 1, 2, 3], recompute=[0, 1, 2])
st = Strategies.from_columns(**{k: rng.choice(v, n) for k, v in cols.items()})
evaluate_batch(ctx, st, 1.0)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
evaluate_batch(ctx, st, 1.0)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="glibc's malloc thresholds"
)
def test_a_second_batch_reuses_its_heap() -> None:
    """A batch's ~140 temporaries are freed as it goes; glibc would give the freed top of its heap back
    to the kernel and fault it in again, page by page, on the next batch (~5,000 pages for 20,000
    strategies). evaluate_batch raises glibc's trim threshold once per process, so a second batch
    finds its heap: a fresh interpreter (no earlier large block freed) counts the second batch's faults."""
    out = subprocess.run([sys.executable, "-c", _FAULTS], capture_output=True, text=True, check=True, timeout=120)
    assert int(out.stdout.strip()) < 250, out.stdout
