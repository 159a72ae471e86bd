"""A batch gives each strategy what that strategy alone gives: the batch path times each distinct
collective once (numpy over the distinct rows) and a single strategy in Python floats, so this checks
the two paths against each other."""

from __future__ import annotations

import numpy as np
import pytest

from wanka.engine import Strategies, evaluate_batch, make_context
from wanka.engine.core import BREAKDOWN_KEYS
from wanka.spec import load_scenario


def _strategies(gpus: int, moe: bool, n: int, seed: int) -> Strategies:
    rng = np.random.default_rng(seed)
    tp = rng.choice([1, 2, 4, 8], n)
    pp = rng.choice([1, 2, 4, 8, 16], n)
    cp = rng.choice([1, 2, 4], n)
    dp = np.maximum(1, gpus // (tp * pp * cp))
    cols: dict[str, object] = dict(
        tp=tp,
        pp=pp,
        dp=dp,
        cp=cp,
        ep=rng.choice([1, 2, 8, 32], n) if moe else 1,
        vpp=rng.choice([1, 2, 3], n),
        micro_batch=rng.choice([1, 2], n),
        zero=rng.choice([0, 1, 2, 3], n),
        recompute=rng.choice([0, 1, 2], n),
        sp=rng.random(n) < 0.7,
        shard=rng.choice([0, 0, 8], n),
        cp_comm=rng.choice([0, 1, 2, 3], n),
    )
    for k in (
        "tp_overlap",
        "dp_overlap",
        "pp_overlap",
        "ep_overlap",
        "deepep",
        "dualpipe",
        "zero_bubble",
        "shared_overlap",
    ):
        cols[k] = rng.random(n) < 0.5
    cols["hybridep"] = cols["deepep"] & (rng.random(n) < 0.5)  # HybridEP is a deduplicated dispatch
    return Strategies.from_columns(**cols)


def _row(st: Strategies, i: int) -> Strategies:
    return Strategies(**{f: getattr(st, f)[i : i + 1] for f in st.__dataclass_fields__})


@pytest.mark.parametrize("preset", ["meta-24k-h100-roce", "gb200-nvl72-576", "traditional-512-a100"])
def test_batch_row_equals_the_strategy_alone(preset: str) -> None:
    sc = load_scenario(preset)
    assert sc.model is not None
    ctx = make_context(sc)
    st = _strategies(sc.gpus, sc.model.moe is not None, 600, 7)
    with np.errstate(all="ignore"):
        batch = evaluate_batch(ctx, st, 1.0)
        # every row is evaluated (infeasible ones too); the layouts that pass the shape rules first
        rows = np.concatenate([np.flatnonzero(batch.reason < 0), np.flatnonzero(batch.reason >= 0)])[:40]
        for i in rows:
            one = evaluate_batch(ctx, _row(st, int(i)), 1.0)
            np.testing.assert_allclose(one.step_time_s[0], batch.step_time_s[i], rtol=1e-12, atol=0)
            np.testing.assert_allclose(one.memory_bytes[0], batch.memory_bytes[i], rtol=1e-12, atol=0)
            for k in BREAKDOWN_KEYS:
                np.testing.assert_allclose(one.breakdown[k][0], batch.breakdown[k][i], rtol=1e-12, atol=1e-300)
