"""Every calibration constant of wanka, in one place.

These are the only tuned numbers in the model. Each is global (no constant keys on a case, a model
name or a GPU count), has a physical meaning, and says how it was set:

* "datasheet/benchmark" — read off a public benchmark (nccl-tests, GEMM sweeps), not fit;
* "fit" — fit on ``validation/public_runs.yaml`` (``cases`` only) by least squares on log error,
  with the other constants held at their benchmark values (``benchmarks/fit_calibration.py``).
"""

from __future__ import annotations

__all__ = [
    "A2A_EFFICIENCY",
    "ATTN_EFFICIENCY",
    "COLLECTIVE_LAUNCH_S",
    "DP_EXPOSED_FLOOR",
    "ELEMENTWISE_EFFICIENCY",
    "FP8_CAST_OVERHEAD",
    "GEMM_EFF_MAX",
    "GEMM_HALF_DIM",
    "GROUPED_GEMM_PENALTY",
    "MOE_ROUTING_IMBALANCE",
    "PP_P2P_EXPOSED",
    "SCALE_OUT_EFFICIENCY",
    "SCALE_OUT_LATENCY_S",
    "SCALE_UP_EFFICIENCY",
    "SCALE_UP_LATENCY_S",
    "TP_OVERLAP_HIDDEN",
]

# ---------------------------------------------------------------- network (nccl-tests)
# Achieved bus bandwidth / link rate for large messages.
# NVLink: DGX A100 all-reduce busbw ~235 GB/s of 300 GB/s; DGX H100 ~370 of 450 (nccl-tests, NVIDIA
# DGX SuperPOD reference numbers) -> 0.80. datasheet/benchmark.
SCALE_UP_EFFICIENCY = 0.80
# InfiniBand / RoCE NICs: multi-node all-reduce busbw ~185-190 GB/s on 8x200G DGX A100 (200 GB/s line)
# and ~370 GB/s on 8x400G DGX H100 -> 0.92. datasheet/benchmark.
SCALE_OUT_EFFICIENCY = 0.92
# All-to-all reaches a lower fraction of line rate (many peers, small chunks; DeepSeek-V3 Sec. 3.2
# and nccl-tests alltoall on 8x400G reach ~0.6-0.7). benchmark.
A2A_EFFICIENCY = 0.65
# Per-step latency of one ring/tree hop (NCCL LL128 protocol; nccl-tests small-message latencies).
SCALE_UP_LATENCY_S = 3e-6
SCALE_OUT_LATENCY_S = 8e-6
# Fixed cost of launching one collective (kernel launch + NCCL proxy).
COLLECTIVE_LAUNCH_S = 10e-6

# ---------------------------------------------------------------- compute
# GEMM efficiency: achieved/peak = GEMM_EFF_MAX * m/(m+H) * n/(n+H) * k/(k+H) for an (m,n,k) GEMM,
# a saturating curve that captures tile quantisation and wave effects of small dimensions.
# GEMM_EFF_MAX from cuBLAS large-GEMM sweeps (~0.80 of dense BF16 peak on A100/H100). fit.
GEMM_EFF_MAX = 0.80
GEMM_HALF_DIM = 96.0
# FlashAttention-2 forward+backward reaches ~0.55-0.70 of peak on A100/H100 (Dao 2023). fit.
ATTN_EFFICIENCY = 0.55
# Memory-bound kernels (norms, activations, dropout, rotary, optimizer) reach this share of HBM bw.
ELEMENTWISE_EFFICIENCY = 0.70
# FP8: casts/amax bookkeeping around each FP8 GEMM, as a fraction of the GEMM's BF16 time. fit.
FP8_CAST_OVERHEAD = 0.10
# MoE expert GEMMs run grouped with uneven per-expert token counts; extra cost over a dense GEMM of
# the same shape. fit.
GROUPED_GEMM_PENALTY = 1.15
# Dropless routing without forced balance: the busiest expert rank gets this many times the mean. fit.
MOE_ROUTING_IMBALANCE = 1.20

# ---------------------------------------------------------------- overlap
# Share of TP communication hidden behind GEMMs when TP-comm overlap is on (Transformer Engine
# userbuffers on H100; Megatron-LM 2021 had none). fit.
TP_OVERLAP_HIDDEN = 0.60
# Share of the DP gradient/parameter communication that stays exposed even when overlapped
# (the last bucket, the first all-gather; MegaScale NSDI'24 Sec. 3). fit.
DP_EXPOSED_FLOOR = 0.10
# Share of pipeline p2p transfer time not hidden behind compute. fit.
PP_P2P_EXPOSED = 0.50
