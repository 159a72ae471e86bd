"""Model specs: dense and MoE transformers, MHA/GQA/MLA attention (the 应用使能层's workload description).

Beyond a uniform stack of global-attention layers, a model may mix layer kinds along its depth
(``layer_pattern``, repeated cyclically from the first layer):

- ``global``: causal softmax attention over the whole context;
- ``sliding``: causal attention over the last ``sliding_window`` tokens (Mistral 7B, Gemma 2/3,
  GPT-OSS's alternate layers);
- ``chunked``: causal attention inside fixed chunks of ``attention_chunk`` tokens (Llama 4's
  local layers);
- ``linear``: linear attention with a recurrent state (``linear_attention``: Gated DeltaNet, Yang et
  al. 2024, the 3-of-4 layers of Qwen3-Next);
- ``ssm``: a selective state-space mixer (``ssm``: Mamba, Gu & Dao 2023; Mamba-2, Dao & Gu 2024; the
  non-attention layers of Jamba, Nemotron-H).

``attention_sinks`` adds a learned per-head logit to every softmax (GPT-OSS; Xiao et al. 2023,
StreamingLLM). MoE routing may be group- or node-limited (``moe.n_groups``/``moe.topk_groups``,
``moe.max_nodes_per_token``; DeepSeek-V2 Sec. 2.2.2 device-limited and DeepSeek-V3 Sec. 2.1.2
node-limited routing), and multi-token-prediction modules are ``mtp_layers`` (DeepSeek-V3 Sec. 2.2).
GPT-OSS's clamped gated activation (``ffn_act_clamp``), biased experts (``moe.expert_bias``) and YaRN
rotary scaling (``rope_attention_factor``) are described so that the framework's unfused passes over
them can be costed.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PositiveInt, field_validator, model_validator

from wanka.spec.base import FieldError, Spec

__all__ = ["LAYER_KINDS", "LinearAttentionSpec", "MLASpec", "MoESpec", "ModelSpec", "SSMSpec"]

LayerMixer = Literal["global", "sliding", "chunked", "linear", "ssm"]
LAYER_KINDS: tuple[str, ...] = ("global", "sliding", "chunked", "linear", "ssm")


class MoESpec(Spec):
    """Mixture-of-experts layers (GShard/Switch style routing, DeepSeek style shared experts)."""

    n_experts: PositiveInt
    top_k: PositiveInt
    n_shared_experts: int = Field(0, ge=0)
    expert_ffn_hidden: PositiveInt
    n_dense_layers: int = Field(0, ge=0, description="leading layers with a dense FFN instead of experts")
    dispatch: Literal["dropless", "token_drop"] = "dropless"
    capacity_factor: float | None = Field(None, gt=0, le=64, description="token_drop only; None = 1.0")
    balanced_routing: bool = False
    shared_expert_ffn_hidden: PositiveInt | None = Field(
        None, description="FFN width of one shared expert where it differs from expert_ffn_hidden (Qwen2-MoE)"
    )
    n_groups: PositiveInt = Field(
        1, description="routing groups the experts are split into (DeepSeek-V3 n_group; 1 = no group limit)"
    )
    topk_groups: PositiveInt | None = Field(
        None, description="groups a token may pick experts from (DeepSeek-V3 topk_group); None = all groups"
    )
    max_nodes_per_token: PositiveInt | None = Field(
        None, description="node-limited routing: a token's experts span at most this many nodes (DeepSeek-V3 M = 4)"
    )
    expert_bias: bool = Field(
        False,
        description="the routed experts' FC1 and FC2 carry biases (GPT-OSS: add_bias_linear); unfused, the FC2 "
        "bias is added per expert after the GEMM, scaled by the routing probability",
    )

    @model_validator(mode="after")
    def _check(self) -> MoESpec:
        if self.top_k > self.n_experts:
            raise FieldError("top_k", f"top_k = {self.top_k} exceeds n_experts = {self.n_experts}")
        if self.n_experts % self.n_groups:
            raise FieldError("n_groups", f"n_groups = {self.n_groups} must divide n_experts = {self.n_experts}")
        if self.topk_groups is not None:
            if self.n_groups == 1:
                raise FieldError(
                    "topk_groups", "topk_groups needs n_groups > 1 (the experts split into routing groups)"
                )
            if self.topk_groups > self.n_groups:
                raise FieldError("topk_groups", f"topk_groups = {self.topk_groups} exceeds n_groups = {self.n_groups}")
            reachable = self.topk_groups * (self.n_experts // self.n_groups)
            if self.top_k > reachable:
                raise FieldError(
                    "top_k",
                    f"top_k = {self.top_k} exceeds the {reachable} experts of topk_groups = {self.topk_groups} groups",
                )
        if self.max_nodes_per_token is not None and self.max_nodes_per_token > self.top_k:
            raise FieldError(
                "max_nodes_per_token",
                f"max_nodes_per_token = {self.max_nodes_per_token} exceeds top_k = {self.top_k}: "
                "a token reaches at most top_k nodes",
            )
        return self

    @property
    def shared_ffn_hidden(self) -> int:
        """FFN width of all shared experts of a layer together."""
        f = self.shared_expert_ffn_hidden if self.shared_expert_ffn_hidden is not None else self.expert_ffn_hidden
        return self.n_shared_experts * f


class MLASpec(Spec):
    """Multi-head latent attention (DeepSeek-V2/V3): low-rank compressed Q and KV."""

    kind: Literal["mla"] = "mla"
    q_lora_rank: int = Field(ge=0, description="0 = no Q compression")
    kv_lora_rank: PositiveInt
    qk_nope_head_dim: PositiveInt
    qk_rope_head_dim: PositiveInt
    v_head_dim: PositiveInt


class LinearAttentionSpec(Spec):
    """Linear attention with a matrix-valued recurrent state (Gated DeltaNet: Yang, Kautz & Hatamizadeh,
    "Gated Delta Networks", ICLR 2025; used by Qwen3-Next as ``linear_*`` config keys).

    Per layer: q/k projections to ``n_qk_heads x qk_head_dim``, v and an output gate z to
    ``n_v_heads x v_head_dim``, per-head decay/beta projections, a depthwise causal convolution of
    ``conv_kernel`` taps over q, k, v, and an output projection back to ``hidden``.
    """

    kind: Literal["gated_deltanet"] = "gated_deltanet"
    n_qk_heads: PositiveInt
    n_v_heads: PositiveInt
    qk_head_dim: PositiveInt
    v_head_dim: PositiveInt
    conv_kernel: PositiveInt = 4
    chunk_size: PositiveInt = Field(64, description="chunkwise-parallel training kernel's chunk (fla: 64)")

    @model_validator(mode="after")
    def _check(self) -> LinearAttentionSpec:
        if self.n_v_heads % self.n_qk_heads:
            raise FieldError(
                "n_v_heads", f"n_v_heads = {self.n_v_heads} must be a multiple of n_qk_heads = {self.n_qk_heads}"
            )
        return self


class SSMSpec(Spec):
    """A selective state-space mixer layer (Mamba: Gu & Dao 2023; Mamba-2/SSD: Dao & Gu 2024).

    ``d_inner = expand x hidden``; ``in_proj`` makes x and the gate z (2·d_inner) plus, for Mamba-2,
    B and C (2·n_groups·d_state) and one dt per head; Mamba-1 instead projects x to dt_rank + 2·d_state
    (x_proj) and dt_rank to d_inner (dt_proj). A depthwise convolution of ``d_conv`` taps, the scan,
    and ``out_proj`` (d_inner to hidden) follow.
    """

    kind: Literal["mamba", "mamba2"] = "mamba2"
    d_state: PositiveInt
    d_conv: PositiveInt = 4
    expand: PositiveInt = 2
    n_groups: PositiveInt = 1
    head_dim: PositiveInt = Field(64, description="Mamba-2 head dimension (d_inner / heads)")
    dt_rank: PositiveInt | None = Field(None, description="Mamba-1 only; None = ceil(hidden / 16)")
    chunk_size: PositiveInt = Field(256, description="SSD chunk of the Mamba-2 training kernel")


class ModelSpec(Spec):
    """A decoder-only transformer. Field names follow the `wanka-validation/1` schema."""

    name: str = "custom"
    type: Literal["dense", "moe"] = "dense"
    n_layers: PositiveInt = Field(le=10_000)
    hidden: PositiveInt = Field(le=1_000_000)
    n_heads: PositiveInt
    n_kv_heads: PositiveInt
    head_dim: PositiveInt | None = Field(None, description="only where n_heads*head_dim != hidden")
    ffn_hidden: PositiveInt
    ffn_act: Literal["swiglu", "gelu"] = "swiglu"
    ffn_act_clamp: float | None = Field(
        None,
        gt=0,
        le=1e6,
        description="gated FFN only: the gate input is clamped to <= this and the linear input to +-this before "
        "the activation (GPT-OSS swiglu_limit 7); None = no clamp",
    )
    vocab: PositiveInt
    seq_len: PositiveInt = Field(le=100_000_000)
    tied_embeddings: bool = False
    moe: MoESpec | None = None
    attention: MLASpec | None = None
    mtp_layers: int = Field(0, ge=0, le=64, description="multi-token-prediction modules (DeepSeek-V3 Sec. 2.2)")
    layer_pattern: tuple[LayerMixer, ...] | None = Field(
        None, description="token mixer of each layer, repeated cyclically from layer 0; None = all global"
    )
    sliding_window: PositiveInt | None = Field(None, description="tokens a 'sliding' layer attends to")
    attention_chunk: PositiveInt | None = Field(None, description="chunk length of a 'chunked' layer")
    attention_sinks: bool = Field(False, description="a learned per-head sink logit in each softmax (GPT-OSS)")
    rope_attention_factor: float = Field(
        1.0,
        gt=0,
        le=100,
        description="factor the rotary embedding's cos and sin are scaled by: YaRN's attention temperature, "
        "0.1 ln(s) + 1 for a context stretched s-fold (Peng et al. 2023, Sec. 3.4; GPT-OSS s = 32: 1.3466); "
        "1 = plain RoPE",
    )
    attention_output_gate: bool = Field(
        False, description="a sigmoid gate on the attention output, projected from x with q (Qwen3-Next)"
    )
    linear_attention: LinearAttentionSpec | None = None
    ssm: SSMSpec | None = None
    source: str = ""
    notes: str = ""

    @field_validator("layer_pattern", mode="before")
    @classmethod
    def _pattern_tuple(cls, v: Any) -> Any:
        return tuple(v) if isinstance(v, list) else v

    @model_validator(mode="after")
    def _check(self) -> ModelSpec:
        self._check_pattern()
        if self.n_heads % self.n_kv_heads:
            raise FieldError(
                "n_heads", f"n_heads = {self.n_heads} must be a multiple of n_kv_heads = {self.n_kv_heads}"
            )
        if self.head_dim is None and self.n_heads > self.hidden:
            raise FieldError(
                "n_heads",
                f"n_heads = {self.n_heads} exceeds hidden = {self.hidden} (head dim hidden / n_heads would be 0); "
                "give head_dim or fewer heads",
            )
        if self.ffn_act_clamp is not None and self.ffn_act != "swiglu":
            raise FieldError(
                "ffn_act_clamp", f"= {self.ffn_act_clamp} needs a gated FFN (ffn_act swiglu), not {self.ffn_act}"
            )
        if self.type == "moe" and self.moe is None:
            raise FieldError("moe", "type = 'moe' needs a moe block")
        if self.type == "dense" and self.moe is not None:
            raise FieldError("moe", "type = 'dense' must not have a moe block")
        if self.moe is not None and self.moe.n_dense_layers > self.n_layers:
            raise FieldError(
                "moe.n_dense_layers",
                f"moe.n_dense_layers = {self.moe.n_dense_layers} exceeds n_layers = {self.n_layers}",
            )
        return self

    def _check_pattern(self) -> None:
        pat = self.layer_pattern
        kinds = set(pat) if pat is not None else {"global"}
        if pat is not None:
            if not pat:
                raise FieldError("layer_pattern", "layer_pattern must not be empty (omit it for an all-global stack)")
            if len(pat) > self.n_layers:
                raise FieldError(
                    "layer_pattern", f"layer_pattern has {len(pat)} entries, more than n_layers = {self.n_layers}"
                )
        needs = (
            ("sliding", "sliding_window", self.sliding_window),
            ("chunked", "attention_chunk", self.attention_chunk),
            ("linear", "linear_attention", self.linear_attention),
            ("ssm", "ssm", self.ssm),
        )
        for kind, fld, value in needs:
            if kind in kinds and value is None:
                raise FieldError(fld, f"{fld} is required: layer_pattern has {kind!r} layers")
            if kind not in kinds and value is not None:
                raise FieldError(fld, f"{fld} is set but layer_pattern has no {kind!r} layer")

    def layer_kinds(self) -> tuple[str, ...]:
        """The token mixer of each of the ``n_layers`` main layers (MTP modules are global-attention)."""
        pat = self.layer_pattern or ("global",)
        return tuple(pat[i % len(pat)] for i in range(self.n_layers))

    def layer_kind_counts(self) -> dict[str, int]:
        """Layers of each mixer kind, MTP modules counted as global attention."""
        counts: dict[str, int] = {}
        for k in self.layer_kinds():
            counts[k] = counts.get(k, 0) + 1
        if self.mtp_layers:
            counts["global"] = counts.get("global", 0) + self.mtp_layers
        return counts

    @property
    def kv_channels(self) -> int:
        """Per-head dimension (hidden / n_heads unless given)."""
        return self.head_dim if self.head_dim is not None else self.hidden // self.n_heads

    @property
    def n_moe_layers(self) -> int:
        return 0 if self.moe is None else self.n_layers - self.moe.n_dense_layers

    @property
    def stack_layers(self) -> tuple[int, int]:
        """(dense, MoE) layers of the whole stack, multi-token-prediction layers included (an MTP layer
        carries the model's MoE block where it has one)."""
        n_moe = self.n_moe_layers + (self.mtp_layers if self.moe is not None else 0)
        return self.n_layers + self.mtp_layers - n_moe, n_moe
