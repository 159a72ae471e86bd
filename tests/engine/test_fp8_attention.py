"""FP8 attention (Transformer Engine ``fp8_dot_product_attention``): cuDNN's FP8 / MXFP8 backward masks a
sliding-window layer's band instead of skipping its tiles, so it runs the whole causal triangle, while the
FP8 forward keeps the BF16 kernel's banded, linear time. Source: NVIDIA/cudnn-frontend
benchmark/attention_training/results/gpt_oss/gb200/gpt_oss_20260928_114754.csv (cuDNN 9.27, window 128:
MXFP8 backward 2.07 / 7.37 / 27.8 / 106.9 ms at 4k / 8k / 16k / 32k tokens, BF16 0.463 / 0.918 / 1.845 /
3.662; forward 0.201 vs 0.207 ms at 4k). The FP8 kernels' own speed over the BF16 one is the accelerator's
``fp8_attention_time`` (catalog), measured by cuDNN's attention benchmarks (NVIDIA/cudnn-frontend
benchmark/sdpa_benchmark_training/results, cuDNN 9.22)."""

from typing import Any

import numpy as np
import pytest

from wanka.catalog import accelerator
from wanka.catalog.software import software_switches
from wanka.engine import Strategies
from wanka.engine.api import estimate_step
from wanka.engine.context import Context, make_context
from wanka.engine.core import _layer_fwd, fp8_attention_factors
from wanka.spec import load_model, parse_scenario
from wanka.spec.training import ParallelSpec
from wanka.workload import attention_core_flops_per_token, effective_context

SWA = {"layer_pattern": ["sliding", "global"], "sliding_window": 128}


def _scenario(
    seq: int, precision: str, fp8_attention: bool, gpu: str = "GB200", recipe: str | None = None, **model_kw: Any
) -> Any:
    """Llama 3 8B cut into 64 heads of 64 (GPT-OSS's head shape), ``model_kw`` on top, eight ``gpu``s."""
    model: dict[str, Any] = load_model("llama3-8b").model_dump(exclude_none=True)
    model.update({"n_heads": 64, "head_dim": 64, "n_kv_heads": 8, **model_kw})
    nodes = 2 if gpu.startswith("GB") else 1
    return parse_scenario(
        {
            "cluster": {"accelerator": gpu, "nodes": nodes},
            "model": model,
            "training": {
                "global_batch_seqs": 64,
                "precision": precision,
                "seq_len": seq,
                "precision_recipe": recipe,
            },
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
    f_fwd, f_bwd = fp8_attention_factors(on)
    fwd, bwd = _pieces(on, True)
    fwd_off, bwd_off = _pieces(on, False)
    assert fwd_off == bwd_off  # BF16 attention's backward keeps the band
    assert fwd == pytest.approx(f_fwd * fwd_off, rel=1e-12)  # the FP8 forward keeps the band too
    # with half the layers sliding the mean layer's backward basis approaches the all-global one's
    glob_fwd, _ = _pieces(make_context(_scenario(8192, "fp8", True)), False)
    assert bwd == pytest.approx(f_bwd * glob_fwd, rel=1e-9)
    assert bwd > 1.7 * fwd_off
    # an all-sliding stack: per micro-batch of s tokens the banded forward is linear in s, the FP8
    # backward quadratic (the benchmark's 2.07 -> 7.37 ms from 4k to 8k, BF16 0.463 -> 0.918)
    only = {"layer_pattern": ["sliding"], "sliding_window": 128}
    f8, b8 = _pieces(make_context(_scenario(8192, "fp8", True, **only)), True)
    f16, b16 = _pieces(make_context(_scenario(16384, "fp8", True, **only)), True)
    assert f16 / f8 == pytest.approx(2.0, rel=0.01)
    assert b16 / b8 > 3.5


def test_fp8_attention_runs_at_the_fp8_kernels_measured_rate() -> None:
    """Global layers: the FP8 forward and backward are the BF16 kernel's times scaled by the catalog's
    cuDNN ratios, MXFP8's under an MXFP8 recipe and per-tensor FP8's otherwise."""
    for recipe, key in (("mxfp8", "mxfp8"), ("fp8_current_scaling", "fp8"), (None, "fp8")):
        ctx = make_context(_scenario(4096, "fp8", True, recipe=recipe, head_dim=128))
        fwd, bwd = _pieces(ctx, True)
        fwd_off, bwd_off = _pieces(ctx, False)
        table = accelerator("GB200").fp8_attention_time[key]
        d256 = next(r for r in table if r[0] == 256)
        assert fp8_attention_factors(ctx) == pytest.approx(d256[1:], rel=1e-12)
        assert fwd == pytest.approx(d256[1] * fwd_off, rel=1e-12)
        assert bwd == pytest.approx(d256[2] * bwd_off, rel=1e-12)
    # GB200's MXFP8 backward at 128 + 128 is slower than BF16's, the forward faster (measured, not assumed)
    mx = make_context(_scenario(4096, "fp8", True, recipe="mxfp8", head_dim=128))
    f_fwd, f_bwd = fp8_attention_factors(mx)
    assert f_fwd < 0.9 and f_bwd > 1.0
    # wider heads (192 + 128, DeepSeek's MLA) gain more; between and beyond the tabulated dims: linear, clamped
    wide = make_context(_scenario(4096, "fp8", True, recipe="mxfp8", head_dim=160))  # 160 + 160 = 320
    assert fp8_attention_factors(wide) == pytest.approx((0.731, 0.774), rel=1e-12)
    mid = make_context(_scenario(4096, "fp8", True, recipe="mxfp8", head_dim=144))  # 288: halfway
    assert fp8_attention_factors(mid) == pytest.approx(((0.834 + 0.731) / 2, (1.089 + 0.774) / 2), rel=1e-12)
    small = make_context(_scenario(4096, "fp8", True, recipe="mxfp8"))  # 64 + 64: the nearest row, 256
    assert fp8_attention_factors(small) == fp8_attention_factors(mx)


def test_no_effect_without_an_fp8_attention_kernel_or_its_measurement() -> None:
    bf16 = make_context(_scenario(8192, "bf16", True, **SWA))  # fp8_dot_product_attention needs FP8
    assert _pieces(bf16, True) == _pieces(bf16, False)
    assert fp8_attention_factors(bf16) == (1.0, 1.0)
    # Float8BlockScaling: Transformer Engine turns FP8 fused attention off, so neither the rate nor the mask rule
    blockwise = make_context(_scenario(8192, "fp8", True, recipe="fp8_blockwise", **SWA))
    assert fp8_attention_factors(blockwise) == (1.0, 1.0)
    assert _pieces(blockwise, True) == _pieces(blockwise, False)
    # an FP8 GPU without a cuDNN FP8 attention measurement keeps the BF16 kernel's rate on global layers
    mi = make_context(_scenario(8192, "fp8", True, gpu="MI300X"))
    assert fp8_attention_factors(mi) == (1.0, 1.0)
    assert _pieces(mi, True) == _pieces(mi, False)
    # Hopper has no MXFP8 attention kernel (Transformer Engine needs sm100): an MXFP8 row there stays at BF16
    assert "mxfp8" not in accelerator("H200").fp8_attention_time


# cuDNN 9.22 fused attention, causal (top_left), 4,096 tokens, batch 2, median ms (forward, backward), from
# NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results/{llama3.1,dsv3}/{gb200,gb300}/*_20260424_*.csv
_CUDNN_MS = {
    ("GB200", 256): {"bfloat16": (0.391, 1.198), "fp8": (0.305, 1.167), "mxfp8": (0.326, 1.305)},
    ("GB300", 256): {"bfloat16": (0.323, 1.101), "fp8": (0.217, 0.985), "mxfp8": (0.242, 1.203)},
    ("GB200", 320): {"bfloat16": (0.977, 3.383), "fp8": (0.656, 2.112), "mxfp8": (0.714, 2.620)},
    ("GB300", 320): {"bfloat16": (0.864, 3.127), "fp8": (0.493, 1.803), "mxfp8": (0.546, 2.348)},
}
# cuDNN 9.19 on H200 (h200_919_only_cudnn/llama3.1_20260227_034703.csv, batch 1): per-tensor FP8 only
_CUDNN_MS_H200 = {"bfloat16": (0.465, 1.450), "fp8": (0.322, 1.459)}


def test_consistency_catalog_fp8_attention_time_matches_the_cudnn_benchmark() -> None:
    """Consistency check: the catalog's ratios are the benchmark's FP8 / BF16 times (to rounding), and the
    same-die parts (B200, B300, H100) carry their measured sibling's table."""
    for (gpu, dims), ms in _CUDNN_MS.items():
        table = accelerator(gpu).fp8_attention_time
        for key in ("fp8", "mxfp8"):
            row = next(r for r in table[key] if r[0] == dims)
            assert row[1] == pytest.approx(ms[key][0] / ms["bfloat16"][0], abs=6e-4)
            assert row[2] == pytest.approx(ms[key][1] / ms["bfloat16"][1], abs=6e-4)
    (row,) = accelerator("H200").fp8_attention_time["fp8"]
    assert row[1:] == pytest.approx(
        (
            _CUDNN_MS_H200["fp8"][0] / _CUDNN_MS_H200["bfloat16"][0],
            _CUDNN_MS_H200["fp8"][1] / _CUDNN_MS_H200["bfloat16"][1],
        ),
        abs=6e-4,
    )
    for part, sibling in (("B200", "GB200"), ("B300", "GB300"), ("H100-SXM5-80GB", "H200")):
        assert accelerator(part).fp8_attention_time == accelerator(sibling).fp8_attention_time


def test_the_step_pays_it_in_the_backward_only() -> None:
    on = estimate_step(_scenario(8192, "fp8", True, **SWA), require_fit=False)
    off = estimate_step(_scenario(8192, "fp8", False, **SWA), require_fit=False)
    assert on.step_time_s > off.step_time_s
    assert on.mfu < off.mfu  # the masked band is work, not model FLOPs
    assert on.breakdown["compute"] > off.breakdown["compute"]


def test_switch_defaults_off() -> None:
    assert ParallelSpec().fp8_attention is False
    assert software_switches("nemo", "26.06").switches["fp8_attention"] is False
