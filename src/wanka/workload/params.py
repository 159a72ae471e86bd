"""Parameter counts of a model spec: total, active per token, and by part.

Counts follow the layer definitions of Megatron-LM / Hugging Face implementations: attention
(MHA/GQA: q, k, v, o projections; MLA per DeepSeek-V2/V3 Sec. 2.1), FFN (SwiGLU three matrices,
GeLU two), MoE (router + routed experts + shared experts), two norms per layer, a final norm, the
input embedding and, unless tied, the output layer. Biases are ignored (< 0.1% of any LLM here).

Hybrid stacks (``ModelSpec.layer_pattern``) count each layer's own token mixer: softmax attention
for global/sliding/chunked layers (plus one sink logit per head with ``attention_sinks``, and the
doubled q projection of an ``attention_output_gate``), Gated DeltaNet projections, convolution,
decay/beta parameters and gated output norm for ``linear`` layers (Yang et al. 2024; the Qwen3-Next
implementation in Hugging Face transformers), Mamba/Mamba-2 projections, convolution, A, D and dt
parameters for ``ssm`` layers (Gu & Dao 2023, Dao & Gu 2024).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from wanka.spec.model import ModelSpec

__all__ = ["ParamCount", "attention_params", "ffn_matrices", "mixer_params", "parameter_count"]


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
        return q + kv + o + norms + (model.n_heads if model.attention_sinks else 0)
    d = model.kv_channels
    q_out = model.n_heads * d * (2 if model.attention_output_gate else 1)  # Qwen3-Next: q and its gate
    base = h * q_out + 2 * h * model.n_kv_heads * d + model.n_heads * d * h
    return base + (model.n_heads if model.attention_sinks else 0)  # one learned sink logit per head


def mixer_params(model: ModelSpec, kind: str) -> int:
    """Token-mixer weights of one layer of mixer ``kind`` (see ``ModelSpec.layer_pattern``).

    ``linear`` (Gated DeltaNet as in Qwen3-Next): fused q/k/v/z projection, per-head beta and decay
    projections, a depthwise causal convolution over q, k, v, per-head A and dt bias, a gated RMSNorm
    over the value head dimension and the output projection. ``ssm``: Mamba-2 in_proj (x, z, B, C,
    dt), depthwise convolution over x, B, C, per-head A, D, dt bias, gated norm, out_proj; Mamba-1
    in_proj (x, z), convolution, x_proj, dt_proj, A (d_inner x d_state), D, out_proj.
    """
    h = model.hidden
    if kind in ("global", "sliding", "chunked"):
        return attention_params(model)
    if kind == "linear":
        la = model.linear_attention
        if la is None:
            raise ValueError("linear layers need model.linear_attention")
        kd, vd = la.n_qk_heads * la.qk_head_dim, la.n_v_heads * la.v_head_dim
        in_proj = h * (2 * kd + 2 * vd) + h * 2 * la.n_v_heads
        conv = (2 * kd + vd) * la.conv_kernel
        per_head = 2 * la.n_v_heads  # A_log, dt_bias
        return in_proj + conv + per_head + la.v_head_dim + vd * h
    if kind == "ssm":
        sm = model.ssm
        if sm is None:
            raise ValueError("ssm layers need model.ssm")
        di = sm.expand * h
        if sm.kind == "mamba2":
            heads = max(1, di // sm.head_dim)
            conv_dim = di + 2 * sm.n_groups * sm.d_state
            in_proj = h * (2 * di + 2 * sm.n_groups * sm.d_state + heads)
            return in_proj + conv_dim * sm.d_conv + 3 * heads + di + di * h
        r = sm.dt_rank if sm.dt_rank is not None else -(-h // 16)
        return h * 2 * di + di * sm.d_conv + di * (r + 2 * sm.d_state) + r * di + di * sm.d_state + di + di * h
    raise ValueError(f"unknown layer kind {kind!r}")


def mixer_params_total(model: ModelSpec) -> int:
    """Token-mixer weights of all layers, MTP modules (global attention) included."""
    counts = model.layer_kind_counts()
    if set(counts) == {"global"}:
        return counts["global"] * attention_params(model)
    return sum(n * mixer_params(model, k) for k, n in counts.items())


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
    mixer_total: int = 0  # token-mixer weights over all layers (attention, linear attention, SSM)

    @property
    def non_embedding(self) -> int:
        """Everything but the input embedding table (the LM head is a GEMM every token pays for)."""
        return self.total - self.embedding

    @property
    def active_non_embedding(self) -> int:
        return self.active - self.embedding

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


# parameter_count per model object: specs are frozen, so a model's count never changes; the model is
# kept beside its count, so an id is never reused while its entry lives
_COUNTS: dict[int, tuple[ModelSpec, ParamCount]] = {}
_COUNTS_MAX = 256


def parameter_count(model: ModelSpec) -> ParamCount:
    """Parameters of ``model`` (computed once per model object).

    >>> from wanka.spec import load_model
    >>> round(parameter_count(load_model("llama3-405b")).total / 1e9, 1)
    405.9
    """
    got = _COUNTS.get(id(model))
    if got is not None and got[0] is model:
        return got[1]
    count = _parameter_count(model)
    if len(_COUNTS) >= _COUNTS_MAX:
        _COUNTS.clear()
    _COUNTS[id(model)] = (model, count)
    return count


def _parameter_count(model: ModelSpec) -> ParamCount:
    h = model.hidden
    mats = ffn_matrices(model)
    n_layers_total = model.n_layers + model.mtp_layers
    mixer_total = mixer_params_total(model)
    # per-layer mean over a hybrid stack; exactly attention_params(model) for an all-global one
    attn = attention_params(model) if model.layer_pattern is None else round(mixer_total / n_layers_total)
    norms_layer = 2 * h
    dense_ffn = mats * h * model.ffn_hidden
    emb = model.vocab * h
    out = 0 if model.tied_embeddings else model.vocab * h
    final_norm = h
    if model.moe is None:
        total = n_layers_total * (dense_ffn + norms_layer) + mixer_total + emb + out + final_norm
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
            mixer_total=mixer_total,
        )
    m = model.moe
    expert = mats * h * m.expert_ffn_hidden
    shared = mats * h * m.shared_ffn_hidden
    router = h * m.n_experts
    n_dense = m.n_dense_layers
    n_moe = model.n_layers - n_dense + model.mtp_layers
    dense_layer = dense_ffn + norms_layer
    moe_layer_total = m.n_experts * expert + shared + router + norms_layer
    moe_layer_active = m.top_k * expert + shared + router + norms_layer
    extra = emb + out + final_norm + model.mtp_layers * 2 * h * h + mixer_total
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
        mixer_total,
    )
