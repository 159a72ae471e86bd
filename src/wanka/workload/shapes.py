"""What one transformer layer does per token: GEMM shapes, attention-core FLOPs, memory traffic,
stored activations. The engine turns these into time for a given parallel strategy.

GEMM shapes are given as (n, k) of ``Y[m, n] = X[m, k] · W[k, n]`` with ``m`` the tokens; which
dimension tensor parallelism splits is recorded (Megatron column/row parallel linear layers,
Shoeybi et al. 2019). Forward FLOPs of a GEMM are ``2·m·n·k``; backward is twice that (input and
weight gradients).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from wanka.spec.model import ModelSpec
from wanka.workload.params import ffn_matrices

__all__ = [
    "Gemm",
    "LayerKind",
    "activation_elems_per_token",
    "attention_core_flops_per_token",
    "elementwise_elems_per_token",
    "layer_gemms",
    "logit_gemm",
    "model_flops_per_token",
    "selective_recompute_elems_per_token",
]

LayerKind = Literal["dense", "moe"]


@dataclass(frozen=True)
class Gemm:
    """One weight GEMM of a layer, per token: ``n`` output and ``k`` input features.

    ``split`` is the dimension tensor parallelism divides ("n" column-parallel, "k" row-parallel,
    None replicated); ``tokens`` multiplies the token count (top-k for routed experts); ``expert``
    marks routed-expert GEMMs (run grouped, one GEMM per local expert).
    """

    name: str
    n: int
    k: int
    split: Literal["n", "k"] | None
    tokens: float = 1.0
    expert: bool = False


def _attention_gemms(model: ModelSpec) -> list[Gemm]:
    h = model.hidden
    a = model.attention
    if a is not None:  # MLA, DeepSeek-V3 Sec. 2.1.1
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        g: list[Gemm] = []
        if a.q_lora_rank:
            g.append(Gemm("q_down", a.q_lora_rank, h, None))
            g.append(Gemm("q_up", model.n_heads * qk, a.q_lora_rank, "n"))
        else:
            g.append(Gemm("q_proj", model.n_heads * qk, h, "n"))
        g.append(Gemm("kv_down", a.kv_lora_rank + a.qk_rope_head_dim, h, None))
        g.append(Gemm("kv_up", model.n_heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank, "n"))
        g.append(Gemm("o_proj", h, model.n_heads * a.v_head_dim, "k"))
        return g
    d = model.kv_channels
    return [
        Gemm("qkv_proj", (model.n_heads + 2 * model.n_kv_heads) * d, h, "n"),
        Gemm("o_proj", h, model.n_heads * d, "k"),
    ]


def layer_gemms(model: ModelSpec, kind: LayerKind) -> list[Gemm]:
    """The weight GEMMs of one layer of ``kind``."""
    h = model.hidden
    mats = ffn_matrices(model)
    g = _attention_gemms(model)
    if kind == "dense" or model.moe is None:
        g.append(Gemm("fc1", (mats - 1) * model.ffn_hidden, h, "n"))
        g.append(Gemm("fc2", h, model.ffn_hidden, "k"))
        return g
    m = model.moe
    g.append(Gemm("router", m.n_experts, h, None))
    g.append(Gemm("expert_fc1", (mats - 1) * m.expert_ffn_hidden, h, None, tokens=m.top_k, expert=True))
    g.append(Gemm("expert_fc2", h, m.expert_ffn_hidden, None, tokens=m.top_k, expert=True))
    if m.n_shared_experts:
        f = m.n_shared_experts * m.expert_ffn_hidden
        g.append(Gemm("shared_fc1", (mats - 1) * f, h, "n"))
        g.append(Gemm("shared_fc2", h, f, "k"))
    return g


def logit_gemm(model: ModelSpec) -> Gemm:
    """The output layer (vocab-parallel under tp)."""
    return Gemm("logits", model.vocab, model.hidden, "n")


def _qk_v_dims(model: ModelSpec) -> tuple[int, int]:
    a = model.attention
    if a is not None:
        return a.qk_nope_head_dim + a.qk_rope_head_dim, a.v_head_dim
    return model.kv_channels, model.kv_channels


def attention_core_flops_per_token(model: ModelSpec, seq_len: int) -> float:
    """Forward FLOPs per token of softmax(QKᵀ)V over a full (non-causal) ``seq_len`` context.

    ``2·s·n_heads·(d_qk + d_v)``; a causal kernel (FlashAttention-2) executes about half.
    """
    dqk, dv = _qk_v_dims(model)
    return 2.0 * seq_len * model.n_heads * (dqk + dv)


def elementwise_elems_per_token(model: ModelSpec, kind: LayerKind) -> float:
    """Elements read + written per token by memory-bound kernels of one layer, forward.

    Two norms (read+write h), two residual adds (3h), rotary on q and k, the FFN activation
    (SwiGLU reads 2f writes f; GeLU reads f writes f), and for MoE the token permutation and
    un-permutation (read + write k·h each) and the router softmax/top-k.
    """
    h = model.hidden
    dqk, _ = _qk_v_dims(model)
    kv_heads = model.n_heads if model.attention is not None else model.n_kv_heads
    e = 4.0 * h + 6.0 * h + 2.0 * (model.n_heads + kv_heads) * dqk
    if kind == "dense" or model.moe is None:
        f = model.ffn_hidden
        return e + (3.0 * f if model.ffn_act == "swiglu" else 2.0 * f)
    m = model.moe
    f = m.expert_ffn_hidden
    act = (3.0 if model.ffn_act == "swiglu" else 2.0) * f * (m.top_k + m.n_shared_experts)
    return e + act + 4.0 * m.top_k * h + 4.0 * m.n_experts


def activation_elems_per_token(model: ModelSpec, kind: LayerKind) -> float:
    """Elements stored for backward per token of one layer, no recompute, FlashAttention.

    Follows the tensor inventory of Korthikanti et al. 2022 (Sec. 4.1; 34·s·b·h bytes for GPT with
    dropout) without dropout masks and without the s² attention scores that FlashAttention never
    stores: norm inputs and outputs, q/k/v, attention output, FFN input, fc1 output, activation
    output; for MoE the permuted tokens and per-expert intermediates for top-k (+ shared) experts.
    """
    h = model.hidden
    dqk, dv = _qk_v_dims(model)
    kv_heads = model.n_heads if model.attention is not None else model.n_kv_heads
    attn = 2.0 * h + model.n_heads * dqk + kv_heads * (dqk + dv) + model.n_heads * dv
    if model.attention is not None:
        a = model.attention
        attn += a.q_lora_rank + a.kv_lora_rank  # compressed latents
    mats = 3.0 if model.ffn_act == "swiglu" else 2.0
    if kind == "dense" or model.moe is None:
        ffn = 2.0 * h + mats * model.ffn_hidden
        return attn + ffn
    m = model.moe
    t = m.top_k + m.n_shared_experts
    ffn = 2.0 * h + m.top_k * h + mats * m.expert_ffn_hidden * t
    return attn + ffn


def selective_recompute_elems_per_token(model: ModelSpec, kind: LayerKind) -> tuple[float, float]:
    """What fine-grained ("selective") recompute drops and re-reads per token of one layer.

    With a fused attention kernel there are no attention scores to drop (Korthikanti et al.'s
    selective recompute), so frameworks recompute the cheap modules instead (Megatron-Core
    ``recompute_modules``: layernorm, the MLP activation, MLA up-projections; DeepSeek-V3 Sec.
    3.2.3 recomputes RMSNorm and the MLA up-projections): the two norm outputs, the activation
    function's output, and for MLA the up-projected q and k/v. Returns ``(elements no longer
    stored, elements read + written again by the recomputed memory-bound kernels)``; the MLA
    up-projection GEMMs are re-run on top (see :func:`layer_gemms`, names ``q_up`` and ``kv_up``).
    """
    h = model.hidden
    if kind == "dense" or model.moe is None:
        f = float(model.ffn_hidden)
    else:
        f = float(model.moe.expert_ffn_hidden * (model.moe.top_k + model.moe.n_shared_experts))
    gated = model.ffn_act == "swiglu"
    saved = 2.0 * h + f
    traffic = 4.0 * h + (3.0 if gated else 2.0) * f  # two norms (read + write) and the activation
    a = model.attention
    if a is not None:
        saved += model.n_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim)  # q_up output
        saved += model.n_heads * (a.qk_nope_head_dim + a.v_head_dim)  # kv_up output
    return saved, traffic


def model_flops_per_token(model: ModelSpec, seq_len: int) -> float:
    """Model FLOPs per token for MFU: ``6·N + 6·attention`` (PaLM, Chowdhery et al. 2022, App. B).

    ``N`` counts the parameters a token touches except the input embedding (active experts only
    for MoE; the LM head counts, it is a GEMM); the attention term is PaLM's ``12·L·h·s`` written for
    any head dimensions (non-causal, as PaLM and Megatron count it).
    """
    from wanka.workload.params import parameter_count

    p = parameter_count(model)
    layers = model.n_layers + model.mtp_layers
    return 6.0 * p.active_non_embedding + 3.0 * layers * attention_core_flops_per_token(model, seq_len)
