from __future__ import annotations

from wanka.spec import parse_model
from wanka.storage import parameter_count

from .conftest import BLOOM_MODEL


def test_bloom_by_hand_and_published() -> None:
    h, L, v = 14336, 70, 250880
    by_hand = L * 12 * h * h + v * h + (2 * L + 1) * h  # 4h² attention + 8h² GeLU FFN; tied embedding; norms
    total, active = parameter_count(parse_model(BLOOM_MODEL))
    assert total == by_hand == active
    assert abs(total - 176_247e6) / 176_247e6 < 0.001  # BLOOM paper: 176,247 M incl. biases


def test_llama3_405b_gqa() -> None:
    m = parse_model(
        {
            "n_layers": 126,
            "hidden": 16384,
            "n_heads": 128,
            "n_kv_heads": 8,
            "ffn_hidden": 53248,
            "vocab": 128256,
            "seq_len": 8192,
        }
    )
    total, _ = parameter_count(m)
    assert 400e9 < total < 410e9  # Llama 3 paper: 405 B


def test_deepseek_v3_moe_mla() -> None:
    m = parse_model(
        {
            "type": "moe",
            "n_layers": 61,
            "hidden": 7168,
            "n_heads": 128,
            "n_kv_heads": 128,
            "ffn_hidden": 18432,
            "vocab": 129280,
            "seq_len": 4096,
            "moe": {
                "n_experts": 256,
                "top_k": 8,
                "n_shared_experts": 1,
                "expert_ffn_hidden": 2048,
                "n_dense_layers": 3,
            },
            "attention": {
                "q_lora_rank": 1536,
                "kv_lora_rank": 512,
                "qk_nope_head_dim": 128,
                "qk_rope_head_dim": 64,
                "v_head_dim": 128,
            },
        }
    )
    total, active = parameter_count(m)
    assert abs(total - 671e9) / 671e9 < 0.01  # DeepSeek-V3 report: 671 B total, 37 B active
    assert abs(active - 37e9) / 37e9 < 0.03
    with_mtp = parameter_count(m.model_copy(update={"mtp_layers": 1}))[0]
    assert 10e9 < with_mtp - total < 16e9  # report: 14 B of MTP module weights (head/embedding shared)


def test_tied_embeddings_and_swiglu() -> None:
    base = {
        "n_layers": 1,
        "hidden": 64,
        "n_heads": 4,
        "n_kv_heads": 4,
        "ffn_hidden": 256,
        "vocab": 1000,
        "seq_len": 128,
    }
    untied = parameter_count(parse_model(base))[0]
    tied = parameter_count(parse_model({**base, "tied_embeddings": True}))[0]
    assert untied - tied == 1000 * 64
    gelu = parameter_count(parse_model({**base, "ffn_act": "gelu"}))[0]
    assert untied - gelu == 64 * 256
