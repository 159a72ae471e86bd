"""Partial CUDA-graph scope and recompute of named modules, as Megatron-Bridge's GPT-OSS presets set them.

GB300 / B300 presets capture ``cuda_graph_scope = ["attn", "moe_router", "moe_preprocess"]`` with
Transformer Engine graphs (``cuda_graphs_moe: false``): the MoE token dispatch, experts and combine
stay eager and keep their launch cost. GB200 / B200 / H100 presets recompute ``["layernorm",
"moe_act"]`` (``recompute: selective`` with a fused attention kernel): the norms and the expert
activation, with its eager clamp, run again in the backward.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from wanka.calibration import default_calibration
from wanka.catalog import accelerator
from wanka.engine import StepResult
from wanka.spec import load_model
from wanka.validate.cases import load_cases
from wanka.workload import clamp_fwd_elems_per_token

ROOT = Path(__file__).resolve().parents[2]
NEMO = ROOT / "benchmarks" / "extra_runs" / "nemo_perf_tables.yaml"
GB300_ROW = "nemo2604_gpt_oss_120b_gb300_bf16_64g"
GB200_ROW = "nemo2604_gpt_oss_120b_gb200_bf16_64g"


def test_rows_carry_the_presets_switches() -> None:
    cases = {c.id: c.raw for c in load_cases(NEMO)[0]}
    gb300, gb200 = cases[GB300_ROW], cases[GB200_ROW]
    assert gb300["software"]["cuda_graphs"] is True and gb300["software"]["cuda_graphs_moe"] is False
    assert gb300["parallelism"]["recompute"] == "none"
    assert gb200["parallelism"]["recompute"] == "selective"
    assert gb200["software"]["cuda_graphs"] is False


def test_partial_scope_keeps_the_moe_launch_cost_per_layer_pass(nemo_step: Callable[..., StepResult]) -> None:
    none = nemo_step(GB300_ROW, **{"software.cuda_graphs": False})
    partial = nemo_step(GB300_ROW)
    full = nemo_step(GB300_ROW, **{"software.cuda_graphs_moe": True})
    # full graphs < partial scope < no graphs
    assert full.step_time_s < partial.step_time_s < none.step_time_s
    cal = default_calibration()
    passes = 3.0 * 36 * (1280 // (64 * 4))  # forward + backward (2x) of 36 MoE layers, 5 micro-batches
    # the partial scope removes the layer's own launch cost, the MoE block's stays
    assert none.breakdown["compute"] - partial.breakdown["compute"] == pytest.approx(
        passes * cal.layer_overhead_s, rel=1e-6
    )
    assert partial.breakdown["compute"] - full.breakdown["compute"] == pytest.approx(
        passes * cal.moe_layer_overhead_s, rel=1e-6
    )


def test_partial_scope_means_nothing_without_graphs_or_moe(nemo_step: Callable[..., StepResult]) -> None:
    off = nemo_step(GB300_ROW, **{"software.cuda_graphs": False})
    off_partial = nemo_step(GB300_ROW, **{"software.cuda_graphs": False, "software.cuda_graphs_moe": False})
    assert off.step_time_s == off_partial.step_time_s
    dense = {"model.type": "dense", "model.moe": None, "model.ffn_act_clamp": None, "parallelism.ep": 1}
    full = nemo_step(GB300_ROW, **dense, **{"software.cuda_graphs_moe": True})
    partial = nemo_step(GB300_ROW, **dense)
    assert full.step_time_s == partial.step_time_s


def test_selective_recompute_reruns_the_eager_clamp_unless_fused(nemo_step: Callable[..., StepResult]) -> None:
    eager = nemo_step(GB200_ROW)
    fused = nemo_step(GB200_ROW, **{"software.mlp_op_fuser": True})
    plain = nemo_step(GB200_ROW, **{"model.ffn_act_clamp": None})
    # the recompute pass re-runs the clamp's forward (8f per token) once, at the HBM's elementwise rate
    m = load_model("gpt-oss-120b")
    clamp = clamp_fwd_elems_per_token(m, "moe")
    assert clamp == 8.0 * 2880 * 4
    tokens = 1280 * 4096 / 64
    bw = accelerator("GB200").hbm_bandwidth * default_calibration().elementwise_efficiency
    extra = eager.breakdown["recompute"] - fused.breakdown["recompute"]
    assert extra == pytest.approx(36 * tokens * clamp * 2.0 / bw, rel=1e-6)
    assert fused.breakdown["recompute"] == pytest.approx(plain.breakdown["recompute"], rel=1e-12)
    # without recompute nothing is re-run
    none = nemo_step(GB200_ROW, **{"parallelism.recompute": "none"})
    assert none.breakdown["recompute"] == 0.0
    assert clamp_fwd_elems_per_token(m, "dense") == 8.0 * m.ffn_hidden
    assert clamp_fwd_elems_per_token(m.model_copy(update={"ffn_act_clamp": None}), "moe") == 0.0
