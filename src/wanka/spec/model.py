"""Model specs: dense and MoE transformers, MHA/GQA/MLA attention (the 应用使能层's workload description)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveInt, model_validator

from wanka.spec.base import Spec

__all__ = ["MLASpec", "MoESpec", "ModelSpec"]


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

    @model_validator(mode="after")
    def _check(self) -> MoESpec:
        if self.top_k > self.n_experts:
            raise ValueError(f"top_k = {self.top_k} exceeds n_experts = {self.n_experts}")
        return self


class MLASpec(Spec):
    """Multi-head latent attention (DeepSeek-V2/V3): low-rank compressed Q and KV."""

    kind: Literal["mla"] = "mla"
    q_lora_rank: int = Field(ge=0, description="0 = no Q compression")
    kv_lora_rank: PositiveInt
    qk_nope_head_dim: PositiveInt
    qk_rope_head_dim: PositiveInt
    v_head_dim: PositiveInt


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
    vocab: PositiveInt
    seq_len: PositiveInt = Field(le=100_000_000)
    tied_embeddings: bool = False
    moe: MoESpec | None = None
    attention: MLASpec | None = None
    mtp_layers: int = Field(0, ge=0)
    source: str = ""
    notes: str = ""

    @model_validator(mode="after")
    def _check(self) -> ModelSpec:
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads = {self.n_heads} must be a multiple of n_kv_heads = {self.n_kv_heads}")
        if self.head_dim is None and self.n_heads > self.hidden:
            raise ValueError(
                f"n_heads = {self.n_heads} exceeds hidden = {self.hidden} (head dim hidden / n_heads would be 0); "
                "give head_dim or fewer heads"
            )
        if self.type == "moe" and self.moe is None:
            raise ValueError("type = 'moe' needs a moe block")
        if self.type == "dense" and self.moe is not None:
            raise ValueError("type = 'dense' must not have a moe block")
        if self.moe is not None and self.moe.n_dense_layers > self.n_layers:
            raise ValueError(f"moe.n_dense_layers = {self.moe.n_dense_layers} exceeds n_layers = {self.n_layers}")
        return self

    @property
    def kv_channels(self) -> int:
        """Per-head dimension (hidden / n_heads unless given)."""
        return self.head_dim if self.head_dim is not None else self.hidden // self.n_heads

    @property
    def n_moe_layers(self) -> int:
        return 0 if self.moe is None else self.n_layers - self.moe.n_dense_layers
