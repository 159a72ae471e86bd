"""Workload model (应用使能层): what a model computes and stores, per layer and per token."""

from wanka.workload.params import ParamCount, attention_params, ffn_matrices, parameter_count
from wanka.workload.shapes import (
    Gemm,
    LayerKind,
    activation_elems_per_token,
    attention_core_flops_per_token,
    elementwise_elems_per_token,
    layer_gemms,
    logit_gemm,
    model_flops_per_token,
    selective_recompute_elems_per_token,
)

__all__ = [
    "Gemm",
    "LayerKind",
    "ParamCount",
    "activation_elems_per_token",
    "attention_core_flops_per_token",
    "attention_params",
    "elementwise_elems_per_token",
    "ffn_matrices",
    "layer_gemms",
    "logit_gemm",
    "model_flops_per_token",
    "parameter_count",
    "selective_recompute_elems_per_token",
]
