"""A YaRN-scaled rotary embedding, as Megatron-Core applies it, and the fp32 routing probabilities the
eager expert bias runs in behind DeepEP / HybridEP dispatch.

Megatron-Core hands the rotary embedding to Transformer Engine's fused kernel only when YaRN's attention
factor is 1 (``rope_utils.apply_rotary_pos_emb``); otherwise the eager ``_apply_rotary_pos_emb_bshd``
runs about a dozen passes over q and k (``workload.eager_rope_elems_per_token``). Its DeepEP and HybridEP
managers cast the probabilities to fp32, and ``TEGroupedMLP._apply_bias`` promotes with them
(``workload.expert_bias_fp32_probs_bytes_per_token``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from small_moe import BASE, small_moe

from wanka.calibration import default_calibration
from wanka.catalog import accelerator
from wanka.catalog.software import pipeline_splits
from wanka.engine import StepResult
from wanka.errors import SpecError
from wanka.spec import load_model
from wanka.spec.hf_import import load_hf_config, model_from_hf_config
from wanka.workload import (
    eager_mlp_elems_per_token,
    eager_rope_elems_per_token,
    elementwise_elems_per_token,
    expert_bias_fp32_probs_bytes_per_token,
)

ROOT = Path(__file__).resolve().parents[2]
HF = ROOT / "tests" / "data" / "hf_configs"
_m = small_moe


def test_plain_rope_adds_nothing() -> None:
    assert eager_rope_elems_per_token(_m()) == 0.0
    assert eager_rope_elems_per_token(_m(rope_attention_factor=1.0)) == 0.0


def test_unfused_rope_passes_scale_with_q_and_k() -> None:
    m = _m(rope_attention_factor=1.35)
    n = (16 + 4) * 64  # q and k elements per token (head_dim 1024 / 16)
    # eager forward 12n + backward 14n, less the fused kernel's 2n + 4n already counted, per forward-equivalent
    assert eager_rope_elems_per_token(m) == pytest.approx(20.0 * n / 3.0)
    # the factor's size does not matter, only that it is not 1
    assert eager_rope_elems_per_token(_m(rope_attention_factor=2.0)) == eager_rope_elems_per_token(m)
    # kept apart from the fused elementwise count of the layer
    assert elementwise_elems_per_token(m, "moe") == elementwise_elems_per_token(_m(), "moe")


def test_unfused_rope_only_on_softmax_layers() -> None:
    hybrid = _m(
        rope_attention_factor=1.35,
        layer_pattern=["linear", "linear", "linear", "global"],
        linear_attention={"n_qk_heads": 16, "n_v_heads": 16, "qk_head_dim": 64, "v_head_dim": 64},
    )
    whole = eager_rope_elems_per_token(_m(rope_attention_factor=1.35))
    assert eager_rope_elems_per_token(hybrid) == pytest.approx(whole / 4.0)


def test_mla_rope_is_not_the_unfused_path() -> None:
    ds = load_model("deepseek-v3")
    assert eager_rope_elems_per_token(ds.model_copy(update={"rope_attention_factor": 1.35})) == 0.0


def test_bad_factor_is_named() -> None:
    for bad in (0.0, -1.0, 1e9):
        with pytest.raises(SpecError) as e:
            _m(rope_attention_factor=bad)
        assert "rope_attention_factor" in str(e.value)


def test_yarn_import_reads_the_attention_factor() -> None:
    m = load_hf_config(HF / "gpt-oss-120b.json")
    assert m.rope_attention_factor == pytest.approx(0.1 * math.log(32.0) + 1.0)
    assert load_model("gpt-oss-120b").rope_attention_factor == pytest.approx(m.rope_attention_factor, abs=1e-4)
    # DeepSeek-V3's mscale = mscale_all_dim cancel: factor 1
    assert load_hf_config(HF / "DeepSeek-V3.json").rope_attention_factor == 1.0
    # no yarn scaling: factor 1
    assert load_hf_config(HF / "Meta-Llama-3-8B.json").rope_attention_factor == 1.0


def test_yarn_import_prefers_a_given_attention_factor_and_names_bad_values() -> None:
    data = json.loads((HF / "gpt-oss-120b.json").read_text())
    data["rope_scaling"] = {**data["rope_scaling"], "attention_factor": 1.2}
    assert model_from_hf_config(data).rope_attention_factor == pytest.approx(1.2)
    data["rope_scaling"] = {**data["rope_scaling"], "attention_factor": None, "mscale": 0.707, "mscale_all_dim": 1.0}
    want = (0.1 * 0.707 * math.log(32.0) + 1.0) / (0.1 * math.log(32.0) + 1.0)
    assert model_from_hf_config(data).rope_attention_factor == pytest.approx(want)
    data["rope_scaling"] = {**data["rope_scaling"], "factor": "big"}
    with pytest.raises(SpecError) as e:
        model_from_hf_config(data)
    assert "rope_scaling.factor" in str(e.value)


def test_fp32_probabilities_cost_only_biased_experts_below_fp32_activations() -> None:
    biased = _m(moe={**BASE["moe"], "expert_bias": True})
    # per routed copy of h: (6P - 4A) forward + (8P - 4A) backward bytes with P = 4, A = 2; /3 forward-equivalent
    assert expert_bias_fp32_probs_bytes_per_token(biased, "moe", 2.0) == pytest.approx((16.0 + 24.0) * 4 * 1024 / 3.0)
    assert expert_bias_fp32_probs_bytes_per_token(biased, "moe", 4.0) == 0.0  # fp32 activations: no promotion
    assert expert_bias_fp32_probs_bytes_per_token(biased, "dense", 2.0) == 0.0
    assert expert_bias_fp32_probs_bytes_per_token(_m(), "moe", 2.0) == 0.0


# ---------------------------------------------------------------- through the engine, on published rows
A2A_ROW = "nemo2602_gpt_oss_120b_gb200_bf16_64g"  # all-to-all dispatch: probabilities in bf16
NO_RECOMPUTE = {"parallelism.recompute": "none"}
TOKENS = 1280 * 4096 / 64  # per GPU per step


def _elem_bw(gpu: str) -> float:
    return accelerator(gpu).hbm_bandwidth * default_calibration().elementwise_efficiency


def test_megatron_row_costs_the_unfused_rope(nemo_step: Callable[..., StepResult]) -> None:
    yarn = nemo_step(A2A_ROW, **NO_RECOMPUTE)
    plain = nemo_step(A2A_ROW, **NO_RECOMPUTE, **{"model.rope_attention_factor": 1.0})
    extra = yarn.breakdown["compute"] - plain.breakdown["compute"]
    r = eager_rope_elems_per_token(load_model("gpt-oss-120b"))
    assert r > 0
    # tp 1: every q and k head on this GPU; forward + backward, 36 layers, bf16
    assert extra == pytest.approx(3.0 * 36 * TOKENS * r * 2.0 / _elem_bw("GB200"), rel=1e-6)


def test_a_framework_without_megatron_core_keeps_the_fused_rope(nemo_step: Callable[..., StepResult]) -> None:
    assert not pipeline_splits("torchtitan").megatron
    other = {**NO_RECOMPUTE, "software": {"framework": "torchtitan"}}
    yarn = nemo_step(A2A_ROW, **other)
    plain = nemo_step(A2A_ROW, **other, **{"model.rope_attention_factor": 1.0})
    assert yarn.step_time_s == pytest.approx(plain.step_time_s, rel=1e-12)


def test_all_to_all_row_runs_the_bias_in_bf16(nemo_step: Callable[..., StepResult]) -> None:
    eager = nemo_step(A2A_ROW, **NO_RECOMPUTE)
    fused = nemo_step(A2A_ROW, **NO_RECOMPUTE, **{"software.mlp_op_fuser": True})
    traffic, _ = eager_mlp_elems_per_token(load_model("gpt-oss-120b"), "moe")
    extra = eager.breakdown["compute"] - fused.breakdown["compute"]
    # no fp32 term: the all-to-all dispatcher keeps the router's bf16 probabilities
    assert extra == pytest.approx(3.0 * 36 * TOKENS * traffic * 2.0 / _elem_bw("GB200"), rel=1e-6)
