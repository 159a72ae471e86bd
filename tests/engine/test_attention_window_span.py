"""Fused attention on sliding-window layers: the kernel skips the key tiles outside the band (its time
is linear in the sequence), but each query tile then loops over only the window's keys, and a short
key loop runs far below the long-sequence rate (the short-key efficiency ``attn_half_len_tokens``).
Sources: NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results (gpt_oss, llama3.1)."""

from typing import Any

import numpy as np
import pytest

from wanka.engine import Strategies
from wanka.engine.context import Context, make_context
from wanka.engine.core import _layer_fwd, head_dim_throughput
from wanka.spec import load_model, parse_scenario
from wanka.workload import attention_key_spans, effective_context


def _ctx(seq: int, accelerator: str = "H100-SXM5-80GB", **model_kw: Any) -> Context:
    """Llama 3 8B cut into 64 heads of 64 (GPT-OSS's head shape), ``model_kw`` on top, one node."""
    model: dict[str, Any] = load_model("llama3-8b").model_dump(exclude_none=True)
    model.update(n_heads=64, head_dim=64, n_kv_heads=8, **model_kw)
    sc = parse_scenario(
        {
            "cluster": {"accelerator": accelerator, "nodes": 1},
            "model": model,
            "training": {"global_batch_seqs": 64, "precision": "bf16", "seq_len": seq},
            "parallel": {"tp": 1, "pp": 1, "dp": 8},
        }
    )
    return make_context(sc)


def _attn(ctx: Context, cp: int = 1) -> float:
    one = np.ones(1)
    st = Strategies.from_columns(tp=1, pp=1, dp=8, cp=cp)
    return float(_layer_fwd(ctx, "dense", one * ctx.seq_len, st, one, one, one)["attn"][0])


def _rate(ctx: Context, cp: int = 1) -> float:
    """Causal attention-core FLOPs per second of the layer's fused kernel."""
    return 0.5 * ctx.attn_flops_per_token * ctx.seq_len / _attn(ctx, cp)


def test_key_spans_weigh_each_layer_kind_by_its_share_of_the_attention_flops() -> None:
    glob = _ctx(4096)
    assert glob.attn_key_spans == ((1.0, 4096.0),)
    gpt = _ctx(4096, layer_pattern=["sliding", "global"], sliding_window=128)
    m = gpt.model
    c_sw, c_gl = effective_context(m, "sliding", 4096), effective_context(m, "global", 4096)
    assert dict((span, share) for share, span in attention_key_spans(m, 4096)) == pytest.approx(
        {128.0: c_sw / (c_sw + c_gl), 4096.0: c_gl / (c_sw + c_gl)}
    )
    # a window as wide as the sequence spans the sequence, as a global layer does
    wide = _ctx(4096, layer_pattern=["sliding", "global"], sliding_window=8192)
    assert {span for _, span in wide.attn_key_spans} == {4096.0}
    assert sum(share for share, _ in wide.attn_key_spans) == pytest.approx(1.0)


def test_global_only_model_keeps_the_sequence_length_rate() -> None:
    ctx = _ctx(8192)
    half = ctx.cal.attn_half_len_tokens
    # the short-key factor of a causal global layer is s / (s + L_half), as before sliding spans
    ceiling = ctx.bf16_peak * ctx.acc.attention_fraction * ctx.cal.attn_efficiency * head_dim_throughput(ctx)
    assert _rate(ctx) == pytest.approx(ceiling * 8192 / (8192 + half), rel=1e-9)
    # an all-global layer_pattern is the same model
    assert _attn(_ctx(8192, layer_pattern=["global"])) == pytest.approx(_attn(ctx), rel=1e-12)


def test_sliding_layers_run_their_band_at_the_short_key_rate() -> None:
    s, w = 8192, 128
    glob, slid = _ctx(s), _ctx(s, layer_pattern=["sliding"], sliding_window=w)
    # the band is skipped: far fewer FLOPs than causal, so far less time ...
    assert _attn(slid) < 0.2 * _attn(glob)
    # ... but each FLOP is slower by the short-key factor of a w-key loop against an s-key loop
    half = glob.cal.attn_half_len_tokens
    assert _rate(slid) / _rate(glob) == pytest.approx((w / (w + half)) / (s / (s + half)), rel=1e-9)
    assert _rate(slid) < 0.3 * _rate(glob)
    # a wider window loops longer and runs nearer the long-sequence rate
    assert _rate(_ctx(s, layer_pattern=["sliding"], sliding_window=1024)) > 2.0 * _rate(slid)


def test_context_parallel_ring_step_caps_the_span() -> None:
    # with cp = 4 a ring step sees 2048 keys: a 4096-wide window is no longer than a global layer's step
    s = 8192
    glob, slid = _ctx(s), _ctx(s, layer_pattern=["sliding"], sliding_window=4096)
    assert _rate(slid, cp=4) == pytest.approx(_rate(glob, cp=4), rel=1e-9)
    assert _rate(slid, cp=1) < _rate(glob, cp=1)


@pytest.mark.parametrize(
    ("accelerator", "w", "measured"),
    [
        # H200, cuDNN 9.19.1, 64 q / 8 kv heads of 64, s = 4096, window 1024, BF16 (h200_919_only_cudnn/
        # gpt_oss_20260227_034819.csv: fwd 0.358 + bwd 1.042 ms = 301 TFLOP/s on the band's FLOPs),
        # against causal Llama 3.1 heads of 128 at 4096 (llama3.1_20260227_034703.csv: 0.465 + 1.450 ms =
        # 502 TFLOP/s) x 0.788 for heads of 64 (head_dim_throughput on H100): 301 / 396 = 0.76
        ("H100-SXM5-80GB", 1024, 0.76),
        # GB200, cuDNN 9.22, 128 heads of 64, s = 4096, window 128, BF16 (gpt_oss/gb200: fwd 0.210 + bwd
        # 0.465 ms = 175 TFLOP/s on the band), against causal Llama 3.1 at 4096 (llama3.1/gb200: 0.391 +
        # 1.198 ms = 1211 TFLOP/s) x 0.70 for heads of 64 on GB200: 175 / 848 = 0.21
        ("GB200", 128, 0.21),
    ],
)
def test_consistency_with_cudnn_sliding_window_benchmarks(accelerator: str, w: int, measured: float) -> None:
    s = 4096
    glob = _ctx(s, accelerator)
    slid = _ctx(s, accelerator, layer_pattern=["sliding"], sliding_window=w)
    assert _rate(slid) / _rate(glob) == pytest.approx(measured, rel=0.15)
