"""GPT-OSS's clamped gated activation and biased experts, as Megatron-Core's grouped MLP runs them.

Without Transformer Engine's op fuser, ``TEGroupedMLP`` clamps the two halves of the FC1 output and
concatenates them again before the fused activation (``weighted_bias_quick_geglu_impl``), and adds
the FC2 bias per expert after the grouped GEMM (``_apply_bias``): memory-bound passes the model's
properties (``ffn_act_clamp``, ``moe.expert_bias``) cause and the op fuser (``mlp_op_fuser``) removes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from small_moe import BASE, small_moe

from wanka.calibration import default_calibration
from wanka.catalog import accelerator
from wanka.engine import StepResult
from wanka.errors import SpecError
from wanka.spec import load_model
from wanka.spec.hf_import import load_hf_config, model_from_hf_config
from wanka.workload import (
    eager_mlp_elems_per_token,
    elementwise_elems_per_token,
    expert_bias_fp32_probs_bytes_per_token,
)

ROOT = Path(__file__).resolve().parents[2]
HF = ROOT / "tests" / "data" / "hf_configs" / "gpt-oss-120b.json"
NEMO = ROOT / "benchmarks" / "extra_runs" / "nemo_perf_tables.yaml"
_m = small_moe


def test_no_clamp_no_bias_adds_nothing() -> None:
    m = _m()
    assert eager_mlp_elems_per_token(m, "moe") == (0.0, 0.0)
    assert eager_mlp_elems_per_token(m, "dense") == (0.0, 0.0)


def test_clamp_passes_scale_with_the_routed_ffn_width() -> None:
    m = _m(ffn_act_clamp=7.0)
    f = 512 * 4  # expert width x routed copies
    traffic, stored = eager_mlp_elems_per_token(m, "moe")
    # forward 8f (two clamps, one concatenation) + backward 10f, charged as forward-equivalent /3
    assert traffic == pytest.approx(18.0 * f / 3.0)
    assert stored == pytest.approx(2.0 * f)  # the FC1 output the clamp keeps
    # a dense layer of the same model clamps its own FFN
    assert eager_mlp_elems_per_token(m, "dense") == (pytest.approx(6.0 * 1024), pytest.approx(2048.0))


def test_expert_bias_passes_scale_with_routed_copies_of_hidden() -> None:
    m = _m(moe={**BASE["moe"], "expert_bias": True})
    traffic, stored = eager_mlp_elems_per_token(m, "moe")
    # forward 6h, backward 8h (two reductions, 6h, and the split's gradient concatenation, 2h) per routed copy
    assert traffic == pytest.approx(14.0 * 4 * 1024 / 3.0) and stored == 0.0
    assert eager_mlp_elems_per_token(m, "dense") == (0.0, 0.0)  # only routed experts carry the bias here
    # the fused elementwise count of the layer is unchanged: the eager passes are kept apart
    assert elementwise_elems_per_token(m, "moe") == elementwise_elems_per_token(_m(), "moe")


def test_clamp_needs_a_gated_ffn() -> None:
    with pytest.raises(SpecError) as e:
        _m(ffn_act="gelu", ffn_act_clamp=7.0)
    assert "ffn_act_clamp" in str(e.value)


def test_gpt_oss_import_and_preset_carry_clamp_and_expert_bias() -> None:
    for m in (load_hf_config(HF), load_model("gpt-oss-120b")):
        assert m.ffn_act_clamp == 7.0
        assert m.moe is not None and m.moe.expert_bias


@pytest.mark.parametrize("bad", ["seven", -1.0, 0, True, float("nan"), float("inf")])
def test_bad_swiglu_limit_is_named(bad: object) -> None:
    import json

    data = json.loads(HF.read_text())
    data["swiglu_limit"] = bad
    with pytest.raises(SpecError) as e:
        model_from_hf_config(data)
    assert "swiglu_limit" in str(e.value) and "positive number" in str(e.value)


# ---------------------------------------------------------------- through the engine, on a published row
ROW = "nemo2604_gpt_oss_120b_gb200_bf16_64g"
NO_RECOMPUTE = {"parallelism.recompute": "none"}  # the eager passes alone, not their recompute


def test_gpt_oss_row_costs_the_eager_passes_and_the_op_fuser_removes_them(
    nemo_step: Callable[..., StepResult],
) -> None:
    eager = nemo_step(ROW, **NO_RECOMPUTE)
    fused = nemo_step(ROW, **NO_RECOMPUTE, **{"software.mlp_op_fuser": True})
    plain = nemo_step(ROW, **NO_RECOMPUTE, **{"model.ffn_act_clamp": None, "model.moe.expert_bias": False})
    # fused, the clamp and bias cost nothing more than a model without them
    assert fused.step_time_s == pytest.approx(plain.step_time_s, rel=1e-12)
    assert fused.memory.activations == pytest.approx(plain.memory.activations, rel=1e-12)
    # eager: memory-bound time at the GPU's HBM bandwidth, forward + backward (3x the forward-equivalent)
    m = load_model("gpt-oss-120b")
    traffic, stored = eager_mlp_elems_per_token(m, "moe")
    # the row dispatches with HybridEP, whose fp32 routing probabilities the eager bias then runs in
    fp32 = expert_bias_fp32_probs_bytes_per_token(m, "moe", 2.0)
    assert fp32 > 0
    tokens = 1280 * 4096 / 64  # per GPU per step
    extra = eager.breakdown["compute"] - fused.breakdown["compute"]
    assert extra > 0
    bw = accelerator("GB200").hbm_bandwidth * default_calibration().elementwise_efficiency
    assert extra == pytest.approx(3.0 * 36 * tokens * (traffic * 2.0 + fp32) / bw, rel=1e-6)
    # the clamp keeps the FC1 output: 2f bf16 per token of the micro-batch (4 x 4096) in each layer
    grown = eager.memory.activations - fused.memory.activations
    assert grown == pytest.approx(36 * stored * 2.0 * 4 * 4096, rel=1e-9)
