"""Every calibration constant of wanka, in one place.

These are the only tuned numbers in the model. Each is global (no constant keys on a case, a model
name or a GPU count), has a physical meaning, and says how it was set:

* "datasheet/benchmark" — read off a public benchmark (nccl-tests, GEMM sweeps), not fit;
* "fit" — fit on ``validation/public_runs.yaml`` (``cases`` only, steady state) by coordinate
  descent on the mean absolute relative error of tokens/s/GPU plus a steep penalty beyond 19%,
  with the benchmark constants held fixed (``python -m benchmarks.fit_calibration``). Public fit:
  MAPE 6.9%, max 19.1% over 66 cases; random 5-fold cross-validation (``--cv --folds 5``) gives
  the held-out error, and ``python -m benchmarks.check_extra_runs`` the error on further published
  runs the fit never sees. A fitted value at its search bound is marked "(at bound)".
"""

from __future__ import annotations

__all__ = [
    "A2A_EFFICIENCY",
    "ATTN_EFFICIENCY",
    "COLLECTIVE_LAUNCH_S",
    "CUDA_GRAPH_OVERHEAD_FACTOR",
    "DP_BUCKET_PARAMS",
    "DP_BUCKET_PARAMS_PER_RANK",
    "DP_EXPOSED_FLOOR",
    "ELEMENTWISE_EFFICIENCY",
    "EP_OVERLAP_FLOOR",
    "EP_OVERLAP_HIDDEN",
    "FP8_CAST_BYTES_PER_ELEMENT",
    "FP8_GEMM_RATIO",
    "FRAMEWORK_OVERHEAD_BYTES",
    "GEMM_EFF_MAX",
    "GEMM_HALF_DIM",
    "GROUPED_GEMM_PENALTY",
    "LAYER_OVERHEAD_S",
    "MEMORY_MODEL_TOLERANCE",
    "MOE_LAYER_OVERHEAD_S",
    "MOE_ROUTING_IMBALANCE",
    "NVLS_EFFICIENCY",
    "OPTIMIZER_BYTES_PER_PARAM",
    "PP_P2P_EXPOSED",
    "SCALE_OUT_EFFICIENCY",
    "SCALE_OUT_LATENCY_S",
    "SCALE_UP_EFFICIENCY",
    "SCALE_UP_LATENCY_S",
    "TP_OVERLAP_HIDDEN",
    "ZERO3_BUCKET_PARAMS",
]

# ---------------------------------------------------------------- network (nccl-tests)
# Achieved bus bandwidth / link rate for large messages.
# NVLink: DGX A100 all-reduce busbw ~235 GB/s of 300 GB/s; DGX H100 ~370 of 450 (nccl-tests, NVIDIA
# DGX SuperPOD reference numbers) -> 0.80. datasheet/benchmark.
SCALE_UP_EFFICIENCY = 0.80
# InfiniBand / RoCE NICs: multi-node all-reduce busbw ~185-190 GB/s on 8x200G DGX A100 (200 GB/s line)
# and ~370 GB/s on 8x400G DGX H100 -> 0.92. datasheet/benchmark.
SCALE_OUT_EFFICIENCY = 0.92
# All-to-all across nodes: share of NIC line rate. nccl-tests alltoall on 6 H100 nodes with 8x400G
# reports ~48.5 GB/s busbw (issue #267); with 40 of 47 peers off-node that is 0.83 of line rate.
# benchmark (not fit: only one public case runs its all-to-all across nodes).
A2A_EFFICIENCY = 0.83
# NVLink SHARP all-reduce inside an NVSwitch domain: algbw / link rate. nccl-tests on DGX H100 with
# NVLS: ~275 GB/s algbw (480 GB/s busbw) of 450 GB/s (nccl-tests issue #212). benchmark.
NVLS_EFFICIENCY = 0.61
# Per-step latency of one ring/tree hop (NCCL LL128 protocol; nccl-tests small-message latencies of
# a few microseconds). Scale-up: benchmark. Scale-out: fit, mainly on the ZeRO-3 rows whose
# per-bucket ring all-gathers are latency-bound at hundreds of ranks.
SCALE_UP_LATENCY_S = 3e-6
SCALE_OUT_LATENCY_S = 2.2e-6
# Fixed cost of launching one collective (kernel launch + NCCL proxy).
COLLECTIVE_LAUNCH_S = 10e-6

# ---------------------------------------------------------------- compute
# GEMM efficiency: achieved/peak = GEMM_EFF_MAX * m/(m+H) * n/(n+H) * k/(k+H) for an (m,n,k) GEMM,
# a saturating curve that captures tile quantisation and wave effects of small dimensions.
# The large-GEMM ceiling is the accelerator's measured matmul_fraction (catalog); GEMM_EFF_MAX is
# the share of that ceiling production GEMM shapes keep. fit.
GEMM_EFF_MAX = 0.84
GEMM_HALF_DIM = 48.6
# The fused-attention ceiling is the accelerator's attention_fraction (catalog, from the kernels'
# papers); ATTN_EFFICIENCY is the share of it training runs keep (causal masking, GQA, short
# sequences, the kernel generation a framework ships). fit.
ATTN_EFFICIENCY = 0.48
# Memory-bound kernels (norms, activations, dropout, rotary, optimizer) reach this share of HBM bw.
# fit (at bound): fused kernels touch fewer bytes than the unfused element count assumes.
ELEMENTWISE_EFFICIENCY = 0.95
# FP8 GEMMs reach this share of the BF16 GEMMs' fraction of peak (achieved FP8 fraction =
# accelerator matmul_fraction x this ratio); the operand casts are costed apart
# (FP8_CAST_BYTES_PER_ELEMENT). fit (at bound 1.0: with the casts explicit, FP8 GEMMs keep the
# BF16 share of their doubled peak).
FP8_GEMM_RATIO = 1.0
# Bytes moved per operand element when an FP8 GEMM quantizes it: read bf16 (2) + write fp8 (1).
# The amax of current scaling is fused into the producing kernel in Transformer Engine. datasheet.
FP8_CAST_BYTES_PER_ELEMENT = 3.0
# MoE expert GEMMs run grouped with uneven per-expert token counts; extra cost over a dense GEMM of
# the same shape. fit (at bound 1.0: the per-MoE-layer fixed cost below absorbs it).
GROUPED_GEMM_PENALTY = 1.0
# Dropless routing without forced balance: the busiest expert rank gets this many times the mean.
# fit (at bound 1.0: the public MoE rows do not separate it from the fixed cost).
MOE_ROUTING_IMBALANCE = 1.0

# ---------------------------------------------------------------- overlap
# Share of TP communication hidden behind GEMMs when TP-comm overlap is on (Transformer Engine
# userbuffers on H100; Megatron-LM 2021 had none). fit: a small share, since the overlapped
# chunks compete with the GEMMs for SMs and HBM bandwidth.
TP_OVERLAP_HIDDEN = 0.14
# Share of the DP gradient/parameter communication that stays exposed even when overlapped: the
# NCCL kernels take SMs and HBM bandwidth from the compute they overlap (MegaScale NSDI'24 Sec. 3
# discusses the contention); the last bucket is counted apart. fit.
DP_EXPOSED_FLOOR = 0.37
# Share of blocking pipeline p2p time that shows (Megatron-LM 2021 and DeepSpeed send/recv sit on
# the critical path; asynchronous p2p is modelled by its fill/drain hops instead). fit (at bound 1.0).
PP_P2P_EXPOSED = 1.0

# ---------------------------------------------------------------- memory
# CUDA context, NCCL and cuBLAS workspaces and allocator fragmentation per GPU (PyTorch memory
# snapshots of Megatron runs show 2-4 GiB beyond tensors). benchmark.
FRAMEWORK_OVERHEAD_BYTES = 3.0 * 1024**3
# Relative error the activation-memory model is allowed when a validation case leaves a setting
# (vpp, micro-batch) unpublished: candidates up to this share over HBM still count as fitting. The
# model matches the Korthikanti et al. 2022 per-layer figures within 10% (tests/engine), so a
# candidate within 10% of capacity cannot be ruled out. benchmark.
MEMORY_MODEL_TOLERANCE = 0.10
# Adam step traffic per parameter: read fp32 param, grad, m, v; write param, m, v and the bf16 copy,
# plus the gradient-norm read (30 + 4 bytes).
OPTIMIZER_BYTES_PER_PARAM = 34.0
# With batch-level EP overlap (DeepSeek-V3 DualPipe, Sec. 3.2.1: all-to-all "fully overlapped"), the
# share of the all-to-all that still shows. benchmark (not fit: one public case uses it).
EP_OVERLAP_FLOOR = 0.10
# Expert all-to-all share hidden behind compute (0 = none; DeepSeek DualPipe hides most). fit.
EP_OVERLAP_HIDDEN = 0.36

# ---------------------------------------------------------------- fixed costs
# Host-side and launch cost per transformer layer per micro-batch forward (backward counts twice):
# ~30-40 kernels at a few microseconds each plus the Python/host work around them (PyTorch/TE
# launch latency). fit.
LAYER_OVERHEAD_S = 180e-6
# CUDA graphs replay captured kernels: the per-layer launch/host cost shrinks to this share.
# fit (at bound 0: graphs remove the host-side cost entirely in the public rows that use them).
CUDA_GRAPH_OVERHEAD_FACTOR = 0.0
# Extra per MoE layer forward: router top-k, token permutation, the device-to-host sync of
# per-expert token counts in dropless grouped GEMMs. fit.
MOE_LAYER_OVERHEAD_S = 510e-6
# Data-parallel collectives run in buckets: Megatron-Core DDP bucket = max(40M, 1M x dp) params
# (megatron/core/distributed); ZeRO-3 gathers in prefetch buckets of 5e7 params (DeepSpeed
# stage3_prefetch_bucket_size default). datasheet (software defaults).
DP_BUCKET_PARAMS = 40e6
DP_BUCKET_PARAMS_PER_RANK = 1e6
ZERO3_BUCKET_PARAMS = 5e7
