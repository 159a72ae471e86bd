"""Parameter counts of a model spec: total, active per token, and by part.

Counts follow the layer definitions of Megatron-LM / Hugging Face implementations: attention
(MHA/GQA: q, k, v, o projections; MLA per DeepSeek-V2/V3 Sec. 2.1), FFN (SwiGLU three matrices,
GeLU two), MoE (router + routed experts + shared experts), two norms per layer, a final norm, the
input embedding and, unless tied, the output layer. Biases are ignored (< 0.1% of any LLM here).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from wanka.spec.model import ModelSpec

__all__ = ["ParamCount", "attention_params", "ffn_matrices", "parameter_count"]


def ffn_matrices(model: ModelSpec) -> int:
    """Weight matrices per FFN: SwiGLU has gate, up and down (3), GeLU-style up and down (2)."""
    return 3 if model.ffn_act == "swiglu" else 2


def attention_params(model: ModelSpec) -> int:
    """Attention weights of one layer."""
    h = model.hidden
    a = model.attention
    if a is not None:  # MLA (DeepSeek-V3 Sec. 2.1.1)
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        q = h * a.q_lora_rank + a.q_lora_rank * model.n_heads * qk if a.q_lora_rank else h * model.n_heads * qk
        kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank * model.n_heads * (
            a.qk_nope_head_dim + a.v_head_dim
        )
        o = model.n_heads * a.v_head_dim * h
        norms = a.q_lora_rank + a.kv_lora_rank
        return q + kv + o + norms
    d = model.kv_channels
    return h * model.n_heads * d + 2 * h * model.n_kv_heads * d + model.n_heads * d * h


@dataclass(frozen=True)
class ParamCount:
    """Parameters of a model, by part (counts, not bytes)."""

    total: int
    active: int  # touched per token (top-k routed + shared experts)
    embedding: int  # input embedding table
    output: int  # LM head (0 when tied to the embedding)
    attention_per_layer: int
    dense_ffn_per_layer: int
    expert: int  # one routed expert
    shared_experts_per_layer: int
    router_per_layer: int
    norms: int
    n_dense_layers: int
    n_moe_layers: int

    experts_per_layer: int = 0

    @property
    def non_embedding(self) -> int:
        """Everything but the input embedding table (the LM head is a GEMM every token pays for)."""
        return self.total - self.embedding

    @property
    def active_non_embedding(self) -> int:
        return self.active - self.embedding

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def parameter_count(model: ModelSpec) -> ParamCount:
    """Parameters of ``model``.

    >>> from wanka.spec import load_model
    >>> round(parameter_count(load_model("llama3-405b")).total / 1e9, 1)
    405.9
    """
    h = model.hidden
    mats = ffn_matrices(model)
    attn = attention_params(model)
    norms_layer = 2 * h
    dense_ffn = mats * h * model.ffn_hidden
    emb = model.vocab * h
    out = 0 if model.tied_embeddings else model.vocab * h
    final_norm = h
    n_layers_total = model.n_layers + model.mtp_layers
    if model.moe is None:
        per_layer = attn + dense_ffn + norms_layer
        total = n_layers_total * per_layer + emb + out + final_norm
        # DeepSeek-style MTP modules add a projection of 2h -> h each
        total += model.mtp_layers * 2 * h * h
        return ParamCount(
            total,
            total,
            emb,
            out,
            attn,
            dense_ffn,
            0,
            0,
            0,
            norms_layer * n_layers_total + final_norm,
            n_layers_total,
            0,
        )
    m = model.moe
    expert = mats * h * m.expert_ffn_hidden
    shared = m.n_shared_experts * expert
    router = h * m.n_experts
    n_dense = m.n_dense_layers
    n_moe = model.n_layers - n_dense + model.mtp_layers
    dense_layer = attn + dense_ffn + norms_layer
    moe_layer_total = attn + m.n_experts * expert + shared + router + norms_layer
    moe_layer_active = attn + m.top_k * expert + shared + router + norms_layer
    extra = emb + out + final_norm + model.mtp_layers * 2 * h * h
    total = n_dense * dense_layer + n_moe * moe_layer_total + extra
    active = n_dense * dense_layer + n_moe * moe_layer_active + extra
    return ParamCount(
        total,
        active,
        emb,
        out,
        attn,
        dense_ffn,
        expert,
        shared,
        router,
        norms_layer * (n_dense + n_moe) + final_norm,
        n_dense,
        n_moe,
        m.n_experts,
    )
