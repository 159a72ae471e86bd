"""Workload accounting of sliding-window, chunked, linear-attention and SSM layers, sinks, and
parameter counts of imported Hugging Face configs against the published totals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from wanka.spec import load_model, parse_model
from wanka.spec.hf_import import load_hf_config
from wanka.workload import (
    activation_elems_per_token,
    attention_core_flops_per_token,
    elementwise_elems_per_token,
    layer_gemms,
    model_flops_per_token,
    parameter_count,
)
from wanka.workload.params import mixer_params
from wanka.workload.shapes import effective_context, mixer_core_flops_per_token

HF = Path(__file__).parent.parent / "data" / "hf_configs"
BASE: dict[str, Any] = {
    "n_layers": 8,
    "hidden": 1024,
    "n_heads": 16,
    "n_kv_heads": 4,
    "ffn_hidden": 4096,
    "vocab": 32000,
    "seq_len": 8192,
}


def _m(**kw: Any) -> Any:
    return parse_model({**BASE, **kw})


# ---------------------------------------------------------------- published totals (import -> count)
# (file, total B, active non-embedding B, relative tolerance); sources in each comment
PUBLISHED = [
    # OpenAI gpt-oss model card (2025) Table 1: 116.83B total, 5.13B active (active excl. the embedding)
    ("gpt-oss-120b", 116.83, 5.13, 0.005),
    # Mistral AI, Mixtral of Experts (2024): 46.7B total, 12.9B active (active incl. embeddings: 12.88)
    ("Mixtral-8x7B-v0.1", 46.7, 12.75, 0.01),
    # Qwen3 technical report (2025) Table 2 / model card: 30.5B total, 3.3B activated (incl. embedding)
    ("Qwen3-30B-A3B", 30.5, 3.3 - 0.31, 0.02),
]


@pytest.mark.parametrize(("name", "total_b", "active_b", "rel"), PUBLISHED)
def test_imported_counts_match_published(name: str, total_b: float, active_b: float, rel: float) -> None:
    p = parameter_count(load_hf_config(HF / f"{name}.json"))
    assert p.total / 1e9 == pytest.approx(total_b, rel=rel)
    assert p.active_non_embedding / 1e9 == pytest.approx(active_b, rel=rel)


def test_deepseek_v3_import_matches_report() -> None:
    # DeepSeek-V3 report (arXiv:2412.19437) Sec. 4.2: 671B total, 37B activated, +14B for the MTP module
    m = load_hf_config(HF / "DeepSeek-V3.json")
    main = parameter_count(m.model_copy(update={"mtp_layers": 0}))
    assert main.total / 1e9 == pytest.approx(671, rel=0.01)
    assert main.active / 1e9 == pytest.approx(37, rel=0.03)
    mtp = parameter_count(m).total - main.total
    assert 10e9 < mtp < 14e9  # one MoE layer + 2h^2 projection; the 14B also counts shared embedding/head


def test_qwen3_next_import_matches_model_card() -> None:
    # Qwen/Qwen3-Next-80B-A3B model card: 80B total, 79B non-embedding, "3B activated" (rounded)
    m = load_hf_config(HF / "Qwen3-Next-80B-A3B.json")
    assert m.layer_pattern == ("linear", "linear", "linear", "global") and m.attention_output_gate
    p = parameter_count(m)
    assert p.total / 1e9 == pytest.approx(80, rel=0.01)
    assert p.non_embedding / 1e9 == pytest.approx(79, rel=0.01)
    assert 3.0 <= p.active_non_embedding / 1e9 < 4.0


def test_gpt_oss_import_has_window_and_sinks() -> None:
    m = load_hf_config(HF / "gpt-oss-120b.json")
    assert m.layer_pattern == ("sliding", "global") and m.sliding_window == 128 and m.attention_sinks
    assert m.moe is not None and (m.moe.n_experts, m.moe.top_k) == (128, 4)
    assert m.seq_len == 4096  # YaRN original context


# ---------------------------------------------------------------- attention cost per layer kind
def _brute_context(w: int | None, chunk: int | None, s: int) -> float:
    """2 x the mean number of keys a query attends to under a causal mask (non-causal equivalent)."""
    i = np.arange(s)
    keys = i + 1.0
    if w is not None:
        keys = np.minimum(keys, w)
    if chunk is not None:
        keys = (i % chunk) + 1.0
    return 2.0 * float(keys.mean())


@pytest.mark.parametrize(("w", "s"), [(128, 4096), (4096, 32768), (1000, 1000), (5000, 4096)])
def test_sliding_window_context_matches_mask_count(w: int, s: int) -> None:
    m = _m(layer_pattern=["sliding"] * 7 + ["global"], sliding_window=w)
    assert effective_context(m, "sliding", s) == pytest.approx(_brute_context(w, None, s), rel=2e-3)


@pytest.mark.parametrize(("c", "s"), [(8192, 32768), (512, 4096)])
def test_chunked_context_matches_mask_count(c: int, s: int) -> None:
    m = _m(layer_pattern=["chunked", "global"], attention_chunk=c)
    assert effective_context(m, "chunked", s) == pytest.approx(_brute_context(None, c, s), rel=2e-3)


def test_sliding_attention_is_linear_in_context_global_quadratic() -> None:
    slid = _m(layer_pattern=["sliding"] * 7 + ["global"], sliding_window=128)
    glob = _m()
    ratio_s = attention_core_flops_per_token(slid, 65536) / attention_core_flops_per_token(slid, 32768)
    ratio_g = attention_core_flops_per_token(glob, 65536) / attention_core_flops_per_token(glob, 32768)
    assert ratio_g == pytest.approx(2.0)  # per token: linear in s, i.e. s^2 per sequence
    assert ratio_s == pytest.approx((7 * 256 / 65536 + 1) / (7 * 256 / 32768 + 1) * 2.0, rel=1e-2)
    assert attention_core_flops_per_token(slid, 32768) < 0.14 * attention_core_flops_per_token(glob, 32768)


def test_explicit_all_global_pattern_changes_nothing() -> None:
    a, b = _m(), _m(layer_pattern=["global"])
    assert parameter_count(a) == parameter_count(b)
    assert attention_core_flops_per_token(a, 8192) == attention_core_flops_per_token(b, 8192)
    fl = [sum(2 * g.n * g.k * g.tokens for g in layer_gemms(x, "dense")) for x in (a, b)]
    assert fl[0] == fl[1]
    assert elementwise_elems_per_token(a, "dense") == elementwise_elems_per_token(b, "dense")
    assert activation_elems_per_token(a, "dense") == activation_elems_per_token(b, "dense")
    assert model_flops_per_token(a, 8192) == model_flops_per_token(b, 8192)


# ---------------------------------------------------------------- hybrid stacks
def test_hybrid_mean_layer_gemm_flops_equal_the_stack() -> None:
    """L mean layers do the token-mixer GEMM FLOPs of the real stack: 2 FLOPs per mixer weight
    (biases, convolution taps, norms and per-head scalars aside: < 0.5% of the weights)."""
    m = load_hf_config(HF / "Qwen3-Next-80B-A3B.json")
    ffn = {"router", "expert_fc1", "expert_fc2", "shared_fc1", "shared_fc2", "fc1", "fc2"}
    mean = sum(2.0 * g.n * g.k * g.tokens for g in layer_gemms(m, "moe") if g.name not in ffn)
    stack = 2.0 * parameter_count(m).mixer_total
    assert m.n_layers * mean == pytest.approx(stack, rel=5e-3)
    shares = {g.name: g.share for g in layer_gemms(m, "moe")}
    assert shares["qkv_proj"] == 0.25 and shares["lin_in_proj"] == 0.75


def test_linear_layers_add_no_context_dependent_cost() -> None:
    hyb = _m(
        layer_pattern=["linear", "linear", "linear", "global"],
        linear_attention={"n_qk_heads": 8, "n_v_heads": 16, "qk_head_dim": 64, "v_head_dim": 64},
    )
    glob = _m()
    d_hyb = model_flops_per_token(hyb, 16384) - model_flops_per_token(hyb, 8192)
    d_glob = model_flops_per_token(glob, 16384) - model_flops_per_token(glob, 8192)
    assert d_hyb == pytest.approx(0.25 * d_glob)
    assert mixer_core_flops_per_token(hyb, "linear") > 0.0 and mixer_core_flops_per_token(hyb, "global") == 0.0


def test_mamba2_layer_params_follow_the_reference_layout() -> None:
    # Mamba-2 2.7B (state-spaces/mamba2-2.7b): d_model 2560, 64 layers, d_state 128, expand 2, head 64,
    # 1 group; in_proj 2560 x (2*5120 + 2*128 + 80), conv (5120 + 256) x 4, out_proj 5120 x 2560
    m = _m(
        hidden=2560,
        n_heads=20,
        n_kv_heads=20,
        layer_pattern=["ssm"] * 7 + ["global"],
        ssm={"kind": "mamba2", "d_state": 128},
    )
    expected = 2560 * (2 * 5120 + 256 + 80) + (5120 + 256) * 4 + 3 * 80 + 5120 + 5120 * 2560
    assert mixer_params(m, "ssm") == expected
    assert elementwise_elems_per_token(m, "dense") > elementwise_elems_per_token(
        _m(hidden=2560, n_heads=20, n_kv_heads=20), "dense"
    )


def test_attention_sinks_add_one_logit_per_head_per_layer() -> None:
    a, b = _m(), _m(attention_sinks=True)
    assert parameter_count(b).total - parameter_count(a).total == BASE["n_layers"] * BASE["n_heads"]


def test_deepseek_preset_unchanged_by_routing_fields() -> None:
    m = load_model("deepseek-v3")
    plain = m.model_copy(
        update={"moe": m.moe.model_copy(update={"n_groups": 1, "topk_groups": None, "max_nodes_per_token": None})}
    )
    assert parameter_count(m) == parameter_count(plain)
    assert model_flops_per_token(m, 4096) == model_flops_per_token(plain, 4096)


def test_pure_gated_deltanet_300m_matches_primus_guide() -> None:
    # AMD-AGI/Primus hybrid-models/gdn-guide.md: 12 GDN + 12 MLP blocks, hidden 1024, FFN 4096, 4 QK / 8 V heads of
    # 64, conv 4, tied 128k embeddings: "Total parameters: 0.308B"
    m = _m(
        n_layers=12,
        hidden=1024,
        n_heads=4,
        n_kv_heads=4,
        ffn_hidden=4096,
        vocab=128256,
        seq_len=2048,
        tied_embeddings=True,
        layer_pattern=["linear"],
        linear_attention={"n_qk_heads": 4, "n_v_heads": 8, "qk_head_dim": 64, "v_head_dim": 64},
    )
    assert parameter_count(m).total / 1e9 == pytest.approx(0.308, rel=0.005)
    assert attention_core_flops_per_token(m, 2048) == 0.0
    assert all(g.name.startswith("lin_") or g.name.startswith("fc") for g in layer_gemms(m, "dense"))
