"""`config.json` import: published numbers, round trip through YAML, and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from wanka.errors import SpecError
from wanka.spec import dump_yaml, load_model, parse_model
from wanka.spec.hf_import import load_hf_config, model_from_hf_config

DATA = Path(__file__).parent.parent / "data" / "hf_configs"
CONFIGS = sorted(DATA.glob("*.json"))


def test_at_least_four_configs_shipped() -> None:
    assert len(CONFIGS) >= 4


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_roundtrip_through_yaml(path: Path, tmp_path: Path) -> None:
    m = load_hf_config(path)
    out = tmp_path / "m.yaml"
    out.write_text(dump_yaml(m), encoding="utf-8")
    assert load_model(out) == m
    assert parse_model(yaml.safe_load(dump_yaml(m))) == m


def test_llama3_8b_matches_published() -> None:
    m = load_hf_config(DATA / "Meta-Llama-3-8B.json")
    # Llama 3 paper Table 3 (8B): 32 layers, 4096 dim, FFN 14336, 32 heads, 8 KV heads, vocab 128K
    assert (m.n_layers, m.hidden, m.ffn_hidden, m.n_heads, m.n_kv_heads) == (32, 4096, 14336, 32, 8)
    assert (m.vocab, m.seq_len, m.type, m.ffn_act, m.tied_embeddings) == (
        128256,
        8192,
        "dense",
        "swiglu",
        False,
    )
    assert m.name == "Meta-Llama-3-8B"
    assert m == load_model("llama3-8b").model_copy(update={"name": m.name, "source": m.source, "notes": m.notes})


def test_mixtral_matches_published() -> None:
    m = load_hf_config(DATA / "Mixtral-8x7B-v0.1.json", name="mixtral")
    assert m.type == "moe" and m.moe is not None
    assert (m.moe.n_experts, m.moe.top_k, m.moe.expert_ffn_hidden, m.moe.n_dense_layers) == (8, 2, 14336, 0)
    assert m.name == "mixtral" and m.vocab == 32000


def test_deepseek_v3_matches_published() -> None:
    m = load_hf_config(DATA / "DeepSeek-V3.json")
    # DeepSeek-V3 report Sec. 4.2: 61 layers, 7168 hidden, 256 routed + 1 shared, top-8, 3 dense, MTP 1
    assert m.moe is not None and m.attention is not None
    assert (m.n_layers, m.hidden, m.n_heads) == (61, 7168, 128)
    assert (m.moe.n_experts, m.moe.top_k, m.moe.n_shared_experts, m.moe.n_dense_layers) == (256, 8, 1, 3)
    assert m.moe.expert_ffn_hidden == 2048 and m.ffn_hidden == 18432
    a = m.attention
    assert (a.q_lora_rank, a.kv_lora_rank, a.qk_nope_head_dim, a.qk_rope_head_dim, a.v_head_dim) == (
        1536,
        512,
        128,
        64,
        128,
    )
    assert m.mtp_layers == 1
    assert m.seq_len == 4096  # pre-training context (YaRN original_max_position_embeddings), not 163840
    assert load_hf_config(DATA / "DeepSeek-V3.json", seq_len=32768).seq_len == 32768
    preset = load_model("deepseek-v3")
    # the preset adds the paper's node limit (M = 4, Sec. 2.1.2), which config.json does not state
    assert m.moe == preset.moe.model_copy(update={"max_nodes_per_token": None}) and m.attention == preset.attention


def test_qwen3_moe_matches_published() -> None:
    m = load_hf_config(DATA / "Qwen3-30B-A3B.json")
    assert m.moe is not None
    assert (m.n_layers, m.hidden, m.n_heads, m.n_kv_heads, m.head_dim) == (48, 2048, 32, 4, 128)
    assert (m.moe.n_experts, m.moe.top_k, m.moe.expert_ffn_hidden, m.vocab) == (128, 8, 768, 151936)


def test_qwen2_dense_has_no_head_dim_override() -> None:
    m = load_hf_config(DATA / "Qwen2.5-7B.json")
    assert m.type == "dense" and m.head_dim is None and m.kv_channels == 128
    assert (m.n_layers, m.hidden, m.n_kv_heads, m.ffn_hidden) == (28, 3584, 4, 18944)


def test_malformed_json_has_line(tmp_path: Path) -> None:
    p = tmp_path / "config.json"
    p.write_text('{\n  "hidden_size": 4096,\n  "num_hidden_layers": 32,,\n}\n', encoding="utf-8")
    with pytest.raises(SpecError) as e:
        load_hf_config(p)
    assert "malformed JSON" in str(e.value) and e.value.line == 3


def test_missing_key_named() -> None:
    cfg = json.loads((DATA / "Meta-Llama-3-8B.json").read_text())
    del cfg["num_hidden_layers"]
    with pytest.raises(SpecError) as e:
        model_from_hf_config(cfg)
    assert e.value.field == "num_hidden_layers" and "missing" in str(e.value)


def test_wrong_type_named() -> None:
    cfg = json.loads((DATA / "Meta-Llama-3-8B.json").read_text())
    cfg["hidden_size"] = "4096"
    with pytest.raises(SpecError) as e:
        model_from_hf_config(cfg)
    assert e.value.field == "hidden_size" and "'4096'" in str(e.value)


def test_unsupported_architecture_lists_supported() -> None:
    with pytest.raises(SpecError) as e:
        model_from_hf_config({"architectures": ["GPT2LMHeadModel"], "n_embd": 768})
    assert "GPT2LMHeadModel" in str(e.value) and "LlamaForCausalLM" in str(e.value)


def test_not_an_object() -> None:
    with pytest.raises(SpecError):
        model_from_hf_config([1, 2, 3])


def test_invalid_values_reach_modelspec_validation() -> None:
    cfg = json.loads((DATA / "Meta-Llama-3-8B.json").read_text())
    cfg["num_key_value_heads"] = 7  # 32 heads are not a multiple of 7
    with pytest.raises(SpecError) as e:
        model_from_hf_config(cfg)
    assert "n_kv_heads" in str(e.value)
