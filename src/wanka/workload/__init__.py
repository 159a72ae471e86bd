"""Workload model (应用使能层): what a model computes and stores, per layer and per token."""

from wanka.workload.params import ParamCount, attention_params, ffn_matrices, mixer_params, parameter_count
from wanka.workload.routing import expected_nodes_per_token
from wanka.workload.shapes import (
    Gemm,
    LayerKind,
    activation_elems_per_token,
    attention_core_flops_per_token,
    attention_head_dims,
    attention_output_elems_per_token,
    clamp_fwd_elems_per_token,
    eager_mlp_elems_per_token,
    effective_context,
    elementwise_elems_per_token,
    gemm_input_elems_per_token,
    layer_gemms,
    layer_shares,
    logit_gemm,
    mixer_core_flops_per_token,
    model_flops_per_token,
    selective_recompute_elems_per_token,
)

__all__ = [
    "Gemm",
    "LayerKind",
    "ParamCount",
    "activation_elems_per_token",
    "attention_core_flops_per_token",
    "attention_head_dims",
    "attention_output_elems_per_token",
    "attention_params",
    "clamp_fwd_elems_per_token",
    "eager_mlp_elems_per_token",
    "effective_context",
    "elementwise_elems_per_token",
    "expected_nodes_per_token",
    "ffn_matrices",
    "gemm_input_elems_per_token",
    "layer_gemms",
    "layer_shares",
    "logit_gemm",
    "mixer_core_flops_per_token",
    "mixer_params",
    "model_flops_per_token",
    "parameter_count",
    "selective_recompute_elems_per_token",
]
