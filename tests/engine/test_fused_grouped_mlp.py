"""Transformer Engine's fused grouped MLP under MXFP8 (op fuser, CuTe DSL kernels): FC1's epilogue runs the
gated activation and writes FC2's quantized input, FC2's dgrad epilogue runs the activation's backward and
writes FC1's quantized output gradient. Those two casts and the routed experts' activation passes are not
charged where the fusion applies; FC1's input and FC2's output-gradient casts are. The MoE router gate runs
outside Transformer Engine in BF16/FP32 and is charged no FP8 cast."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import wanka.engine.core as core
from wanka.engine import make_context
from wanka.engine.core import fused_grouped_mlp
from wanka.validate.cases import case_scenario, load_cases
from wanka.workload import Gemm

NEMO_TABLES = Path(__file__).resolve().parents[2] / "benchmarks" / "extra_runs" / "nemo_perf_tables.yaml"
DSV3 = "nemo2606_deepseek_v3_gb300_fp8mx_256g"  # MXFP8, balanced routing, tp = etp = 1, micro-batch 1 x 4096
GPT_OSS = "nemo2606_gpt_oss_120b_gb300_fp8mx_64g"  # MXFP8, hidden and expert FFN 2880 = 45 x 64, biased experts


@pytest.fixture
def moe_pieces(monkeypatch: pytest.MonkeyPatch, nemo_step: Callable[..., Any]) -> Iterator[Callable[..., dict]]:
    """The MoE layer's forward pieces of a NeMo row (first strategy), with dotted-path changes."""
    orig = core._layer_fwd

    def run(row: str, **changes: Any) -> dict[str, float]:
        seen: dict[str, dict[str, Any]] = {}

        def spy(ctx: Any, kind: str, tokens: Any, st: Any, tp: Any, ep: Any, etp: Any) -> dict[str, Any]:
            out = orig(ctx, kind, tokens, st, tp, ep, etp)
            seen[kind] = {"tokens": tokens, "hbm": ctx.hbm_bw * ctx.cal.elementwise_efficiency, **out}
            return out

        monkeypatch.setattr(core, "_layer_fwd", spy)
        nemo_step(row, **changes)
        monkeypatch.setattr(core, "_layer_fwd", orig)
        return {k: float(np.asarray(v).ravel()[0]) for k, v in seen["moe"].items()}

    yield run


def test_fused_mlp_drops_fc2_input_and_fc1_grad_casts_and_the_routed_activation(
    moe_pieces: Callable[..., dict],
) -> None:
    fused = moe_pieces(DSV3, **{"software.mlp_op_fuser": True})
    plain = moe_pieces(DSV3, **{"software.mlp_op_fuser": False})
    tokens, hbm = fused["tokens"], fused["hbm"]
    top_k, f = 8.0, 2048.0  # DeepSeek-V3 routed experts
    per = 4.0  # calibration fp8_cast_bytes_per_element: read bf16, write the row- and column-wise fp8 copies
    # forward: FC2's input (top_k copies of f per token) comes quantized out of FC1's epilogue
    assert plain["cast_f"] - fused["cast_f"] == pytest.approx(tokens * top_k * f * per / hbm, rel=1e-9)
    # backward: FC1's output gradient (2f, gate and up) comes quantized out of FC2's dgrad epilogue
    assert plain["cast_b"] - fused["cast_b"] == pytest.approx(tokens * top_k * 2.0 * f * per / hbm, rel=1e-9)
    # the SwiGLU pass (read 2f, write f per routed copy, bf16) runs in the epilogue
    assert plain["elem"] - fused["elem"] == pytest.approx(tokens * top_k * 3.0 * f * 2.0 / hbm, rel=1e-9)
    # FC1's input and FC2's output gradient are still quantized: casts remain
    assert fused["cast_f"] > tokens * top_k * 7168.0 * per / hbm * 0.999
    assert fused["gemm"] == pytest.approx(plain["gemm"], rel=1e-12)


def test_fusion_needs_the_mxfp8_recipe(moe_pieces: Callable[..., dict]) -> None:
    cs = {"precision_recipe": "fp8_current_scaling"}
    fused = moe_pieces(DSV3, **cs, **{"software.mlp_op_fuser": True})
    plain = moe_pieces(DSV3, **cs, **{"software.mlp_op_fuser": False})
    for key in ("cast_f", "cast_b", "elem"):
        assert fused[key] == pytest.approx(plain[key], rel=1e-12)


def test_fusion_takes_dims_multiple_of_64_and_biased_clamped_experts(moe_pieces: Callable[..., dict]) -> None:
    # GPT-OSS 120B: hidden and expert FFN 2880 are multiples of 64 (not of 256, the first dev commit's rule),
    # its experts biased and their GeGLU clamped: Transformer Engine 2.15+ runs the fused kernels for it
    fused = moe_pieces(GPT_OSS, **{"software.mlp_op_fuser": True})
    plain = moe_pieces(GPT_OSS, **{"software.mlp_op_fuser": False})
    top_k, f, per = 4.0, 2880.0, 4.0
    tokens, hbm = fused["tokens"], fused["hbm"]
    assert plain["cast_f"] - fused["cast_f"] == pytest.approx(tokens * top_k * f * per / hbm, rel=1e-9)
    assert plain["cast_b"] - fused["cast_b"] == pytest.approx(tokens * top_k * 2.0 * f * per / hbm, rel=1e-9)


def _ctx_of(row: str) -> Any:
    case = next(c for c in load_cases(NEMO_TABLES)[0] if c.id == row)
    return make_context(case_scenario(case)[0])


def test_fused_grouped_mlp_follows_the_expert_split() -> None:
    ctx = _ctx_of(DSV3)

    class _St:
        op_fuser = np.array([True, True, True, False])

    # expert FFN 2048 split etp ways: 2048, 1024 and 64 per rank are multiples of 64; the fuser off never fuses
    got = fused_grouped_mlp(ctx, _St(), np.array([1.0, 2.0, 32.0, 1.0]))  # type: ignore[arg-type]
    assert got.tolist() == [True, True, True, False]
    got = fused_grouped_mlp(ctx, _St(), np.array([64.0, 64.0, 64.0, 64.0]))  # type: ignore[arg-type]
    assert got.tolist() == [False, False, False, False]  # 32 per rank


def test_router_gate_is_charged_no_fp8_cast() -> None:
    ctx = _ctx_of(DSV3)
    assert ctx.fp8
    one = np.array([4096.0])
    casts = {"fwd": 0.0 * one, "bwd": 0.0 * one}
    router = Gemm("router", 256, 7168, None)
    t, _, _, _ = core._gemms_fwd_time(ctx, (router,), one, one, one, one, 1.0, None, casts)
    assert float(t[0]) > 0.0  # the GEMM itself is timed
    assert float(casts["fwd"][0]) == 0.0 and float(casts["bwd"][0]) == 0.0
    # a TE linear of the same shape is quantized (consistency check of the harness)
    dense = Gemm("q_down", 256, 7168, None)
    core._gemms_fwd_time(ctx, (dense,), one, one, one, one, 1.0, None, casts)
    assert float(casts["fwd"][0]) > 0.0
