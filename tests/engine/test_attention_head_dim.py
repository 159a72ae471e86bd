"""Fused attention with small heads (issue 18, GPT-OSS's 64 x 64 heads): per score element the kernel
does 2(d_qk + d_v) matmul FLOPs but a fixed amount of softmax work, so at head dim 64 it reaches fewer
FLOP/s than at 128, where the accelerators' attention fractions are quoted."""

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from wanka.engine import Strategies
from wanka.engine.context import Context
from wanka.engine.core import _layer_fwd, head_dim_throughput


def _attn(ctx: Context) -> float:
    one = np.ones(1)
    st = Strategies.from_columns(tp=1, pp=1, dp=8)
    return float(_layer_fwd(ctx, "dense", one * 8192, st, one, one, one)["attn"][0])


def test_small_heads_run_at_the_flop_rate_the_flashattention3_sweep_measured(
    attention_ctx: Callable[..., Context],
) -> None:
    wide, small = attention_ctx(128), attention_ctx(64)
    assert wide.attn_flops_per_token == pytest.approx(small.attn_flops_per_token)
    # consistency check against the source of attn_softmax_ratio (FlashAttention-3, Figs. 5-6, cuDNN
    # on H100 at seq 4k): forward + backward at head dim 64 runs at 414 / 526 = 0.788 of head dim 128
    assert head_dim_throughput(wide) == pytest.approx(1.0)
    assert head_dim_throughput(small) == pytest.approx(0.788, abs=0.002)
    assert _attn(small) / _attn(wide) == pytest.approx(1.0 / head_dim_throughput(small), rel=1e-9)
    # the mechanism removed (no per-element softmax work), equal FLOPs take equal time
    flat = replace(small, cal=replace(small.cal, attn_softmax_ratio=0.0), acc=replace(small.acc, exp_rate=None))
    assert _attn(flat) == pytest.approx(_attn(wide), rel=1e-9)


def test_wider_heads_are_not_credited_and_more_softmax_work_slows_small_heads_further(
    attention_ctx: Callable[..., Context],
) -> None:
    assert head_dim_throughput(attention_ctx(256)) == 1.0
    small = attention_ctx(64)
    heavier = replace(small, cal=replace(small.cal, attn_softmax_ratio=2.0 * small.cal.attn_softmax_ratio))
    assert head_dim_throughput(heavier) < head_dim_throughput(small) < 1.0
    assert _attn(heavier) > _attn(small)
