"""fp8_output_proj: under MXFP8 Megatron-Core runs the LM head as a Transformer Engine linear
(transformer/mxfp8_output_proj.py): its forward, dgrad and wgrad GEMMs at the FP8 rate, with its input and the
logits' gradient quantized. Under other recipes the switch does nothing (the head stays BF16)."""

from __future__ import annotations

import numpy as np
import pytest

from wanka.engine import estimate_step, make_context
from wanka.engine.core import _gemm_eff, _hbm_time
from wanka.spec import Scenario, parse_scenario

MICRO_BATCHES = 8  # 64 sequences over dp 8, micro-batch 1: the one pipeline stage runs 8 forward + backward


def _scenario(recipe: str, head: bool, precision: str = "fp8") -> Scenario:
    training: dict[str, object] = {"global_batch_seqs": 64, "micro_batch": 1, "seq_len": 8192, "precision": precision}
    if precision == "fp8":
        training["precision_recipe"] = recipe
    return parse_scenario(
        {
            "name": "fp8-head",
            "cluster": {"accelerator": "B200", "nodes": 1},
            "model": "llama3-8b",
            "training": training,
            "parallel": {"tp": 1, "pp": 1, "dp": 8, "fp8_output_proj": head},
        }
    )


def test_mxfp8_head_runs_at_the_fp8_rate_plus_its_two_casts() -> None:
    bf16_head = estimate_step(_scenario("mxfp8", False), require_fit=False).breakdown["compute"]
    fp8_head = estimate_step(_scenario("mxfp8", True), require_fit=False).breakdown["compute"]
    ctx = make_context(_scenario("mxfp8", True))
    lg = ctx.logits
    t, n, k = np.array([8192.0]), np.array([float(lg.n)]), np.array([float(lg.k)])
    flops = 2.0 * t * n * k
    t_bf16 = flops / (ctx.bf16_peak * _gemm_eff(ctx, t, n, k))
    t_fp8 = flops / (ctx.gemm_peak * _gemm_eff(ctx, t, n, k, True))
    casts = _hbm_time(ctx, (t * k + t * n) * ctx.cal.fp8_cast_bytes_per_element)  # input fwd, logits grad bwd
    # forward + backward = 3x the head's GEMM; the casts once each
    expected = MICRO_BATCHES * (3.0 * (t_bf16 - t_fp8) - casts)
    assert bf16_head - fp8_head == pytest.approx(float(expected[0]), rel=1e-9)
    assert bf16_head > fp8_head


@pytest.mark.parametrize(("recipe", "precision"), [("fp8_current_scaling", "fp8"), ("mxfp8", "bf16")])
def test_the_switch_needs_the_mxfp8_recipe(recipe: str, precision: str) -> None:
    off = estimate_step(_scenario(recipe, False, precision), require_fit=False)
    on = estimate_step(_scenario(recipe, True, precision), require_fit=False)
    assert on.step_time_s == pytest.approx(off.step_time_s, rel=1e-12)
