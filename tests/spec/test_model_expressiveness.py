"""ModelSpec layer patterns, windows, hybrid mixers and routing limits: accepted and rejected input."""

from __future__ import annotations

from typing import Any

import pytest

from wanka.errors import SpecError
from wanka.spec import dump_yaml, load_model, parse_model

BASE: dict[str, Any] = {
    "n_layers": 4,
    "hidden": 512,
    "n_heads": 8,
    "n_kv_heads": 2,
    "ffn_hidden": 1024,
    "vocab": 1000,
    "seq_len": 4096,
}
LIN = {"n_qk_heads": 4, "n_v_heads": 8, "qk_head_dim": 64, "v_head_dim": 64}


def _m(**kw: Any) -> dict[str, Any]:
    return {**BASE, **kw}


def test_pattern_repeats_cyclically_and_counts_mtp_as_global() -> None:
    m = parse_model(_m(n_layers=6, layer_pattern=["sliding", "global"], sliding_window=128, mtp_layers=1))
    assert m.layer_kinds() == ("sliding", "global") * 3
    assert m.layer_kind_counts() == {"sliding": 3, "global": 4}


def test_pure_linear_attention_stack_accepted() -> None:
    m = parse_model(_m(layer_pattern=["linear"], linear_attention=LIN))
    assert m.layer_kind_counts() == {"linear": 4}


def test_hybrid_roundtrips_through_yaml(tmp_path: Any) -> None:
    m = parse_model(_m(layer_pattern=["linear", "linear", "linear", "global"], linear_attention=LIN))
    p = tmp_path / "m.yaml"
    p.write_text(dump_yaml(m), encoding="utf-8")
    assert load_model(p) == m


@pytest.mark.parametrize(
    ("extra", "field_or_text"),
    [
        ({"layer_pattern": ["sliding", "global"]}, "sliding_window is required"),
        ({"sliding_window": 128}, "sliding_window is set but layer_pattern has no 'sliding'"),
        ({"layer_pattern": ["chunked"]}, "attention_chunk is required"),
        ({"layer_pattern": ["linear", "global"]}, "linear_attention is required"),
        ({"layer_pattern": ["ssm", "global"]}, "ssm is required"),
        ({"layer_pattern": []}, "must not be empty"),
        ({"layer_pattern": ["global"] * 5}, "more than n_layers"),
        ({"layer_pattern": ["windowed"]}, "layer_pattern"),
        ({"linear_attention": LIN}, "linear_attention is set"),
    ],
)
def test_bad_pattern_combinations_rejected(extra: dict[str, Any], field_or_text: str) -> None:
    with pytest.raises(SpecError) as e:
        parse_model(_m(**extra))
    assert field_or_text in str(e.value)


MOE = {"n_experts": 64, "top_k": 8, "expert_ffn_hidden": 256}


@pytest.mark.parametrize(
    ("moe", "text"),
    [
        ({"n_groups": 6}, "n_groups = 6 must divide n_experts = 64"),
        ({"topk_groups": 2}, "topk_groups needs n_groups > 1"),
        ({"n_groups": 8, "topk_groups": 9}, "topk_groups = 9 exceeds n_groups = 8"),
        ({"n_groups": 32, "topk_groups": 2}, "top_k = 8 exceeds the 4 experts of topk_groups = 2 groups"),
        ({"max_nodes_per_token": 9}, "max_nodes_per_token = 9 exceeds top_k = 8"),
        ({"shared_expert_ffn_hidden": 0}, "moe.shared_expert_ffn_hidden"),
    ],
)
def test_bad_routing_rejected_with_field(moe: dict[str, Any], text: str) -> None:
    with pytest.raises(SpecError) as e:
        parse_model(_m(type="moe", moe={**MOE, **moe}))
    assert text in str(e.value)


def test_group_limited_routing_accepted() -> None:
    m = parse_model(_m(type="moe", moe={**MOE, "n_groups": 8, "topk_groups": 4, "max_nodes_per_token": 4}))
    assert m.moe is not None and (m.moe.n_groups, m.moe.topk_groups, m.moe.max_nodes_per_token) == (8, 4, 4)


def test_deepseek_v3_preset_carries_node_limit() -> None:
    m = load_model("deepseek-v3")
    assert m.moe is not None and m.moe.max_nodes_per_token == 4 and m.moe.topk_groups == 4


# ---------------------------------------------------------------- config.json layer patterns
def _gpt_oss(**kw: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "architectures": ["GptOssForCausalLM"],
        "hidden_size": 64,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "intermediate_size": 64,
        "vocab_size": 100,
        "max_position_embeddings": 256,
        "num_local_experts": 4,
        "num_experts_per_tok": 2,
        "sliding_window": 16,
        "layer_types": ["sliding_attention", "full_attention"] * 2,
    }
    cfg.update(kw)
    return cfg


def test_layer_types_compress_to_their_period() -> None:
    from wanka.spec.hf_import import model_from_hf_config

    m = model_from_hf_config(_gpt_oss())
    assert m.layer_pattern == ("sliding", "global") and m.attention_sinks and m.sliding_window == 16
    irregular = ["sliding_attention", "full_attention", "full_attention", "sliding_attention"]
    m2 = model_from_hf_config(_gpt_oss(layer_types=irregular))
    assert m2.layer_kinds() == ("sliding", "global", "global", "sliding")


@pytest.mark.parametrize(
    ("kw", "field", "text"),
    [
        ({"layer_types": ["sliding_attention"] * 3}, "layer_types", "num_hidden_layers = 4"),
        ({"layer_types": ["sliding_attention", "dilated"] * 2}, "layer_types", "unsupported layer type"),
        ({"sliding_window": None}, "sliding_window", "required key is missing"),
    ],
)
def test_bad_layer_types_name_the_key(kw: dict[str, Any], field: str, text: str) -> None:
    from wanka.spec.hf_import import model_from_hf_config

    with pytest.raises(SpecError) as e:
        model_from_hf_config(_gpt_oss(**kw))
    assert e.value.field == field and text in str(e.value)


def test_mistral_window_applies_to_every_layer_unless_disabled() -> None:
    from wanka.spec.hf_import import model_from_hf_config

    base = {
        "architectures": ["MistralForCausalLM"],
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": 128,
        "vocab_size": 100,
        "max_position_embeddings": 32768,
        "sliding_window": 4096,
    }
    assert model_from_hf_config(base).layer_pattern == ("sliding",)
    assert model_from_hf_config({**base, "use_sliding_window": False}).layer_pattern is None
