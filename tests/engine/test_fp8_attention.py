"""FP8 attention (Transformer Engine ``fp8_dot_product_attention``): cuDNN's FP8 / MXFP8 backward masks a
sliding-window layer's band instead of skipping its tiles, so it runs the whole causal triangle, while the
FP8 forward keeps the BF16 kernel's banded, linear time. Source: NVIDIA/cudnn-frontend
benchmark/attention_training/results/gpt_oss/gb200/gpt_oss_20260928_114754.csv (cuDNN 9.27, window 128:
MXFP8 backward 2.07 / 7.37 / 27.8 / 106.9 ms at 4k / 8k / 16k / 32k tokens, BF16 0.463 / 0.918 / 1.845 /
3.662; forward 0.201 vs 0.207 ms at 4k)."""

from typing import Any

import numpy as np
import pytest

from wanka.catalog.software import software_switches
from wanka.engine import Strategies
from wanka.engine.api import estimate_step
from wanka.engine.context import Context, make_context
from wanka.engine.core import _layer_fwd
from wanka.spec import load_model, parse_scenario
from wanka.spec.training import ParallelSpec
from wanka.workload import attention_core_flops_per_token, effective_context

SWA = {"layer_pattern": ["sliding", "global"], "sliding_window": 128}


def _scenario(seq: int, precision: str, fp8_attention: bool, **model_kw: Any) -> Any:
    """Llama 3 8B cut into 64 heads of 64 (GPT-OSS's head shape), ``model_kw`` on top, one GB200 tray."""
    model: dict[str, Any] = load_model("llama3-8b").model_dump(exclude_none=True)
    model.update(n_heads=64, head_dim=64, n_kv_heads=8, **model_kw)
    return parse_scenario(
        {
            "cluster": {"accelerator": "GB200", "nodes": 2},
            "model": model,
            "training": {"global_batch_seqs": 64, "precision": precision, "seq_len": seq},
            "parallel": {"tp": 1, "pp": 1, "dp": 8, "fp8_attention": fp8_attention, "recompute": "none"},
        }
    )


def _pieces(ctx: Context, fp8_attention: bool) -> tuple[float, float]:
    """(forward, backward-basis) attention core of one layer and micro-batch of ``ctx.seq_len`` tokens."""
    one = np.ones(1)
    st = Strategies.from_columns(tp=1, pp=1, dp=8, fp8_attn=fp8_attention)
    d = _layer_fwd(ctx, "dense", one * ctx.seq_len, st, one, one, one)
    return float(d["attn"][0]), float(d["attn_b"][0])


def test_unbanded_context_counts_a_sliding_layer_as_causal_global() -> None:
    m = _scenario(8192, "fp8", True, **SWA).model
    assert effective_context(m, "sliding", 8192, banded=False) == 8192.0
    assert effective_context(m, "sliding", 8192) < 300.0  # the band: 2w - w^2/s
    everything_global = _scenario(8192, "fp8", True).model
    assert attention_core_flops_per_token(m, 8192, banded=False) == pytest.approx(
        attention_core_flops_per_token(everything_global, 8192), rel=1e-12
    )


def test_fp8_attention_backward_runs_the_sliding_layers_whole_triangle() -> None:
    on = make_context(_scenario(8192, "fp8", True, **SWA))
    fwd, bwd = _pieces(on, True)
    fwd_off, bwd_off = _pieces(on, False)
    assert fwd == fwd_off == bwd_off  # the forward keeps the band; BF16 attention's backward too
    # with half the layers sliding the mean layer's backward basis approaches the all-global one's
    glob_fwd, _ = _pieces(make_context(_scenario(8192, "fp8", True)), False)
    assert bwd == pytest.approx(glob_fwd, rel=1e-9)
    assert bwd > 1.7 * fwd
    # an all-sliding stack: per micro-batch of s tokens the banded forward is linear in s, the FP8
    # backward quadratic (the benchmark's 2.07 -> 7.37 ms from 4k to 8k, BF16 0.463 -> 0.918)
    only = {"layer_pattern": ["sliding"], "sliding_window": 128}
    f8, b8 = _pieces(make_context(_scenario(8192, "fp8", True, **only)), True)
    f16, b16 = _pieces(make_context(_scenario(16384, "fp8", True, **only)), True)
    assert f16 / f8 == pytest.approx(2.0, rel=0.01)
    assert b16 / b8 > 3.5


def test_no_effect_without_sliding_layers_or_without_an_fp8_recipe() -> None:
    glob = make_context(_scenario(8192, "fp8", True))
    assert _pieces(glob, True) == _pieces(glob, False)
    bf16 = make_context(_scenario(8192, "bf16", True, **SWA))  # fp8_dot_product_attention needs FP8
    assert _pieces(bf16, True) == _pieces(bf16, False)


def test_the_step_pays_it_in_the_backward_only() -> None:
    on = estimate_step(_scenario(8192, "fp8", True, **SWA), require_fit=False)
    off = estimate_step(_scenario(8192, "fp8", False, **SWA), require_fit=False)
    assert on.step_time_s > off.step_time_s
    assert on.mfu < off.mfu  # the masked band is work, not model FLOPs
    assert on.breakdown["compute"] > off.breakdown["compute"]


def test_switch_defaults_off() -> None:
    assert ParallelSpec().fp8_attention is False
    assert software_switches("nemo", "26.06").switches["fp8_attention"] is False
