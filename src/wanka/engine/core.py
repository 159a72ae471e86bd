"""The vectorised step-time and memory model, one function per concern.

:func:`evaluate` assembles, for a batch of strategies at once (a single strategy is a batch of
one), the typed records of each concern:

  shape      :class:`Shape`: columns, micro-batches, and the pipeline layout Megatron-Core builds
             (even split, embedding/loss in a layer slot, or uneven first/last stage or explicit
             layout), dense layers first.
  compute    :class:`Compute`: GEMMs at a shape-dependent efficiency (ctx.cal.gemm_*), FP8 where
             the chip has it plus the casts of FP8 operands; fused attention (causal half) at the
             chip's fraction x ATTN_EFFICIENCY; memory-bound kernels at ELEMENTWISE_EFFICIENCY of HBM
             bandwidth; backward 2x (attention 2.5x); recompute full/selective; MoE expert GEMMs at
             the busiest expert rank's load (routing_imbalance) with grouped-GEMM tile padding, and
             dropless MoE's host sync that CUDA graphs keep. The busiest of first/middle/last
             stage paces; the slowest model chunk paces the bubble.
  tp/cp/ep   :class:`Comm`: sequence-parallel all-gathers / reduce-scatters (Korthikanti et al.
             2022); ring attention K/V exchange + per-hop merge; MoE all-to-all (DeepEP
             deduplication, parallel folding). Exposed per micro-batch.
  pipeline   1F1B bubble (pp-1) slowest chunks, DualPipe (PP/2-1)(F&B+B-3W); p2p blocking or async.
  params     :class:`Params`: parameters of the busiest stage and the ZeRO shard / replica groups
             (hybrid sharding).
  dp         ZeRO-0 all-reduce, ZeRO-1 one RS + AG per step, ZeRO-2 RS every micro-batch, ZeRO-3 AG
             before every forward and backward and RS after, each hidden only behind its own
             micro-batch's compute; hybrid: + one cross-group all-reduce.
  optimizer  Adam over the local shard, HBM-bound; with Muon also the Newton-Schulz GEMMs of the
             matrices this rank steps (newton_schulz).
  links      :class:`Links`: each concern's busy time on each GPU link (scale-up, NIC) at its
             achievable bandwidth; on every link exposed >= busy - overlappable compute (a
             shortfall is shared by the concerns on the link); hidden collectives take
             comm_sm_share of the SMs.
  stragglers the slowest of N ranks: rank_jitter_cv x sqrt(2 ln N) of the compute.
  memory     :class:`Memory`: weights, grads, optimizer (ZeRO, shard group), activations of the
             busiest of first/middle/last stage x micro-batches in flight (less the layers offloaded
             to host memory, whose copies' exposed time goes under recompute), framework + allocator
             fragmentation + NCCL buffers; ``fits`` against the usable HBM.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy.typing as npt

from wanka import npx as np  # numpy, with fast paths for one strategy (numpy scalars)
from wanka.engine.context import Context
from wanka.engine.feasibility import cp_a2a_size
from wanka.engine.strategies import Strategies
from wanka.network import bus_factor, collective_time, comm_group
from wanka.network.collectives import all_to_all_nic_share
from wanka.workload import (
    Gemm,
    LayerKind,
    attention_head_dims,
    attention_output_elems_per_token,
    clamp_fwd_elems_per_token,
    expected_nodes_per_token,
    ffn_matrices,
    muon_matrices,
    muon_param_elems,
)

__all__ = ["BREAKDOWN_KEYS", "MEMORY_KEYS", "evaluate"]

Arr = npt.NDArray[np.float64]

BREAKDOWN_KEYS = (
    "compute",
    "recompute",
    "tp_comm",
    "cp_comm",
    "ep_comm",
    "pp_bubble",
    "pp_comm",
    "dp_comm",
    "optimizer",
    "stragglers",
)
MEMORY_KEYS = ("weights", "gradients", "optimizer", "activations", "buffers")


def _gemm_eff(ctx: Context, m: Arr, n: Arr, k: Arr, fp8: bool = False) -> Arr:
    """Achieved / peak for an (m, n, k) GEMM: the chip's large-GEMM ceiling times a shape factor."""
    h = ctx.cal.gemm_half_dim
    ceiling = ctx.acc.matmul_fraction * ctx.cal.gemm_eff_max * (ctx.cal.fp8_gemm_ratio if fp8 else 1.0)
    return np.asarray(ceiling * (m / (m + h)) * (n / (n + h)) * (k / (k + h)))


def _group(ctx: Context, size: Any, inner: Any, contention: float) -> Any:
    """A communicator of the job on its cluster, timed with the context's calibration."""
    return comm_group(ctx.cluster, size, inner, contention, calibration=ctx.cal)


def _hbm_time(ctx: Context, nbytes: Arr | float) -> Arr:
    """Time of a memory-bound kernel that moves ``nbytes`` through HBM."""
    return np.asarray(nbytes / (ctx.hbm_bw * ctx.cal.elementwise_efficiency))


LINKS = ("scale_up", "nic")
COMM_KEYS = ("tp", "cp", "ep", "pp", "dp")


def _link_time(
    ctx: Context, op: str, nbytes: Arr | float, group: Any, memo: dict[int, Any] | None = None
) -> tuple[Arr, Arr]:
    """Seconds one collective keeps each link of a GPU busy at its achievable bandwidth: ``(scale-up,
    NIC)``, bytes per GPU over link rate x efficiency (/ fabric contention).

    A ring over ``n`` ranks, ``a`` per scale-up domain, runs one channel per NIC (NCCL): when it
    leaves the domain, each GPU's NIC carries ``1/a`` of the bus bytes and its scale-up links the
    other ``(a-1)/a``; inside one domain everything stays on scale-up. An all-to-all sends
    ``(n-a)/n`` of its buffer over the NIC (x the node-deduplication share) and ``(a-1)/n`` over
    scale-up; a point-to-point send crosses the fabric whole when its peer is in another domain.
    """
    cal = ctx.cal
    got = None if memo is None else memo.get(id(group))
    if got is None:  # the group's own terms (``memo``: shared by the collectives of one group)
        n = np.asarray(group.size, dtype=float)
        a = np.minimum(np.asarray(group.per_domain, dtype=float), n)
        # the link efficiencies the collective model times the group with: a measured overlay or the
        # link technology's own (CommGroup.up_efficiency / out_efficiency), else the calibration's
        up_eff = cal.scale_up_efficiency if group.up_efficiency is None else group.up_efficiency
        out_eff = cal.scale_out_efficiency if group.out_efficiency is None else group.out_efficiency
        up_bw = np.asarray(group.scale_up_bw, dtype=float) * up_eff  # the fabric's share
        contention = np.maximum(1.0, np.asarray(group.scale_out_contention, dtype=float))
        got = (group, n, a, n > a, up_bw, contention, n <= 1, out_eff)
        if memo is not None:
            memo[id(group)] = got
    _, n, a, cross, up_bw, contention, single, out_eff = got
    s = np.asarray(nbytes, dtype=float)
    nic_bw = ctx.scale_out_bw * out_eff / contention
    if op == "all_to_all":
        dedup = np.asarray(group.remote_dedup, dtype=float)
        nic = (n - a) / n * s * dedup
        up = (a - 1.0) / n * s + np.where(dedup < 1.0, (n - a) / n * s, 0.0)
        # two domains: point to point; HybridEP's RDMA path at its own measured share
        nic_bw = nic_bw * all_to_all_nic_share(n, a, cal, np, group.hybridep, out_eff)
    elif op == "send_recv":
        nic = np.where(cross, s, 0.0)
        up = np.where(cross, 0.0, s)
    else:
        bus = np.asarray(bus_factor(op, np.maximum(n, 1.0)), dtype=float) * s
        nic = np.where(cross, bus / np.maximum(a, 1.0), 0.0)
        up = np.where(cross, bus * (a - 1.0) / np.maximum(a, 1.0), bus)
    return np.where(single, 0.0, up / up_bw), np.where(single, 0.0, nic / nic_bw)


# MLA up-projections: fine-grained ("selective") recompute re-runs them instead of storing q, k, v
_UP_PROJECTIONS = frozenset({"q_up", "kv_up"})


# the GEMMs of a layer's MLP block (dense or MoE); the others belong to its mixer (attention, SSM)
_MLP_GEMMS = frozenset({"fc1", "fc2", "router", "expert_fc1", "expert_fc2", "shared_fc1", "shared_fc2"})


def local_dims(g: Gemm, n: Arr, k: Arr, tp: Arr, etp: Arr) -> tuple[Arr, Arr]:
    """One rank's ``(n, k)`` of GEMM ``g``'s weight (``n`` and ``k`` its full dims): a column-parallel GEMM
    splits ``n`` tp ways, a row-parallel one ``k``; a routed expert's FC1 splits ``n`` and its FC2 ``k`` over
    the ``etp`` expert tensor-parallel ranks; a replicated GEMM (router) keeps both."""
    if g.expert:
        return (n / etp, k) if g.split == "n" or g.name == "expert_fc1" else (n, k / etp)
    if g.split == "n":
        return n / tp, k
    if g.split == "k":
        return n, k / tp
    return n, k


def _gemms_fwd_time(
    ctx: Context,
    gemms: tuple[Gemm, ...],
    tokens: Arr,
    tp: Arr,
    ep: Arr,
    etp: Arr,
    imbalance: Arr | float,
    windows: dict[str, Arr] | None = None,
    casts: dict[str, Arr] | None = None,
    sp_shard: Arr | float = 1.0,
    fused_mlp: Arr | bool = False,
) -> tuple[Arr, Arr, Arr, Arr]:
    """Forward time and FLOPs of a layer's weight GEMMs on one GPU for ``tokens`` tokens, and of
    those among them that fine-grained recompute runs again (MLA up-projections).

    Under FP8 the memory-bound operand quantization is kept apart in ``casts`` (when given):
    ``"fwd"`` quantizes each GEMM's input (m·k), ``"bwd"`` the gradient of its output (m·n); the
    GEMM times returned do not include them. With sequence parallelism (``sp_shard`` = tp) the
    operand that crosses a gather (a column-parallel GEMM's hidden-wide input, a row-parallel GEMM's
    hidden-wide output gradient) is quantized on this rank's 1/tp shard before the gather
    (:func:`gathered_cast_bytes`). Where ``fused_mlp`` (:func:`fused_grouped_mlp`) the routed experts' FC1
    epilogue writes FC2's quantized input and FC2's dgrad epilogue FC1's quantized output gradient, so
    those two casts are not charged.

    Routed experts are split ``etp`` ways (expert tensor parallelism): ``etp = tp`` shares the
    tensor-parallel group's tokens and splits each expert's matrices; ``etp = 1`` (Megatron-Core
    MoE parallel folding) keeps experts whole and each rank dispatches its own ``1/tp`` of the
    tokens, so a rank's expert GEMMs see ``tp/etp`` times fewer rows and ``tp/etp`` times wider
    matrices for the same FLOPs.
    """
    t_total = np.zeros_like(tokens)
    f_total = np.zeros_like(tokens)
    t_up = np.zeros_like(tokens)
    f_up = np.zeros_like(tokens)
    for g in gemms:
        n, k = local_dims(g, np.full_like(tokens, float(g.n)), np.full_like(tokens, float(g.k)), tp, etp)
        if g.expert:
            assert ctx.model.moe is not None
            e = float(ctx.model.moe.n_experts)
            local = e / ep  # experts per rank, each split etp ways
            m = tokens * g.tokens * ep / e * imbalance * etp / tp  # tokens per local expert
            flops = 2.0 * m * n * k * local
            # grouped GEMM: each expert's rows are padded to whole tiles (half a tile wasted on average)
            tile = ctx.cal.grouped_gemm_tile_rows
            eff = _gemm_eff(ctx, m, n, k, ctx.fp8) / ctx.cal.grouped_gemm_penalty * m / (m + 0.5 * tile)
        else:
            local = np.ones_like(tokens)
            m = tokens * g.tokens
            flops = 2.0 * m * n * k
            eff = _gemm_eff(ctx, m, n, k, ctx.fp8)
        t_g = flops / (ctx.gemm_peak * eff)
        if ctx.fp8 and casts is not None:
            # Transformer Engine quantizes each FP8 GEMM's operands, a memory-bound pass that FP8's
            # 2x peak does not speed up (Micikevicius et al. 2022, FP8 formats): the forward its
            # bf16 input (m·k), the backward the gradient of its output (m·n), once each; the
            # backward's dgrad and wgrad GEMMs reuse those copies (and the transposed ones written
            # beside them), so the backward is not charged the forward's casts again
            per = local * ctx.cal.fp8_cast_bytes_per_element
            hid = float(ctx.model.hidden)
            gathered_in = (not g.expert) and g.split == "n" and g.k == hid
            gathered_grad = (not g.expert) and g.split == "k" and g.n == hid
            f_bytes = gathered_cast_bytes(ctx, m * k, sp_shard) if gathered_in else m * k * per
            b_bytes = gathered_cast_bytes(ctx, m * n, sp_shard) if gathered_grad else m * n * per
            if g.name == "router":
                # the MoE gate stays in BF16/FP32 under FP8 training: Megatron-Core's is a plain matmul in the
                # input's dtype or fp32 (moe/router.py Router.gating -> router_gating_linear), outside Transformer
                # Engine; DeepSeek-V3 keeps its gating modules in original precision (report Sec. 3.3.1): no cast
                f_bytes, b_bytes = 0.0 * f_bytes, 0.0 * b_bytes
            elif g.name == "expert_fc2":  # its input comes quantized out of FC1's fused epilogue
                f_bytes = np.where(fused_mlp, 0.0, f_bytes)
                if ctx.dglu_dbias_factor != 1.0:
                    # FC2's dgrad runs in the fused dGLU kernel, which reduces FC1's bias gradient: a cuDNN
                    # frontend regression (catalog kernel_regressions) slows that kernel; charged to the backward
                    extra = (ctx.dglu_dbias_factor - 1.0) * t_g
                    casts["bwd"] = casts["bwd"] + np.where(fused_mlp, extra, 0.0)
            elif g.name == "expert_fc1":  # its output gradient comes quantized out of FC2's dgrad epilogue
                b_bytes = np.where(fused_mlp, 0.0, b_bytes)
            casts["fwd"] = casts["fwd"] + _hbm_time(ctx, f_bytes)
            casts["bwd"] = casts["bwd"] + _hbm_time(ctx, b_bytes)
        t_total = t_total + t_g
        f_total = f_total + flops
        if windows is not None and not g.expert and g.split is not None:
            # tensor-parallel GEMMs: a column-parallel one follows its block's all-gather, a
            # row-parallel one precedes its reduce-scatter (the windows TP-comm overlap hides them in)
            key = ("mlp_" if g.name in _MLP_GEMMS else "mix_") + ("col" if g.split == "n" else "row")
            windows[key] = windows[key] + t_g
        if g.name in _UP_PROJECTIONS:
            t_up = t_up + t_g
            f_up = f_up + flops
    return t_total, f_total, t_up, f_up


# Transformer Engine's fused grouped-MLP kernels (CuTe DSL, cuDNN frontend grouped_gemm_glu /
# grouped_gemm_dglu, SM100 family) take FC1 and FC2 dims that are multiples of 64 in every release that
# ships them (transformer_engine/pytorch/ops/_common.py validate_grouped_mlp_dims, v2.15+: PR 2856 relaxed
# the 256 of the first dev commit, PR 2769, ten days after it landed)
_FUSED_GROUPED_MLP_DIM_MULTIPLE = 64


def fused_grouped_mlp(ctx: Context, st: Strategies, etp: Arr) -> Arr:
    """Where an MoE layer's routed experts run Transformer Engine's fused grouped MLP: FC1 grouped GEMM +
    gated activation + MXFP8 quantization of FC2's input (row- and column-wise) in one kernel forward
    (``ForwardGroupedMLP_CuTeGEMMSwiGLU_MXFP8``, ops/fused/forward_grouped_mlp.py), and FC2's dgrad GEMM +
    activation backward + MXFP8 quantization of FC1's output gradient in one kernel backward
    (``BackwardGroupedMLP_CuTeGEMMDSwiGLU_MXFP8``, ops/fused/backward_grouped_mlp.py); later TE merges both
    into ops/fused/grouped_mlp.py with the same epilogues.

    The op fuser registers the fusion only under an MXFP8 recipe (``recipe.mxfp8()``; MXFP8 itself runs on
    the SM100 family, which the kernels need), for GroupedLinear + gated activation (SwiGLU or the clamped
    GeGLU) + GroupedLinear, biased or not, with FC1 and FC2 dims multiples of 64; Megatron-Core
    builds that op sequence for its grouped experts when ``use_transformer_engine_op_fuser`` is on
    (``mlp_op_fuser``). The kernels still quantize FC1's input and FC2's output gradient
    (``tex.split_quantize``): those casts stay, as do the shared experts' (a separate MLP)."""
    cfg = ctx.model.moe
    off = np.zeros_like(np.asarray(etp, dtype=float), dtype=bool)
    if cfg is None or not ctx.fp8 or ctx.training.precision_recipe != "mxfp8" or not ctx.act_routed_moe:
        return off
    q = float(_FUSED_GROUPED_MLP_DIM_MULTIPLE)
    ffn = float(cfg.expert_ffn_hidden) / np.asarray(etp, dtype=float)  # FC2's in, half FC1's out, per etp split
    dims_ok = (float(ctx.model.hidden) % q == 0.0) & (np.mod(ffn, q) == 0.0)
    return np.asarray(st.op_fuser & dims_ok)


def gathered_cast_bytes(ctx: Context, elems: Arr, sp_shard: Arr | float) -> Arr:
    """HBM bytes of quantizing an FP8 GEMM operand of ``elems`` elements that a sequence-parallel
    all-gather assembles from ``sp_shard`` shards (1: no gather, ``fp8_cast_bytes_per_element`` on the
    whole operand).

    Transformer Engine quantizes the local shard row-wise before it gathers ("we cannot directly
    all-gather the transposed FP8 tensor", ``_all_gather_fp8`` in pytorch/distributed.py): read
    bf16 + write fp8 on ``elems/sp_shard``; the column-wise (transposed) copy the weight-gradient
    GEMM reads is then made from the gathered tensor, read fp8 + write fp8 on all ``elems``
    (Hopper's FP8 tensor cores take TN layouts only). MXFP8 gathers its row- and column-wise
    copies (``_all_gather_mxfp8``): both are quantized on the shard.
    """
    per = ctx.cal.fp8_cast_bytes_per_element
    if ctx.training.precision_recipe == "mxfp8":
        sharded = elems * per / sp_shard
    else:
        sharded = elems * (per - 1.0) / sp_shard + 2.0 * elems  # the transposed write moves after the gather
    return np.asarray(np.where(np.asarray(sp_shard) > 1.0, sharded, elems * per))


def _distinct_domains(ctx: Context, n_dom: Arr) -> Arr:
    """Expected distinct scale-up domains a token's routed experts occupy when EP spans ``n_dom``
    domains (:func:`wanka.workload.expected_nodes_per_token`, node/group-limited routing honoured);
    a fractional or non-dividing span takes uniform draws with replacement, N(1-(1-1/N)^k)."""
    cfg = ctx.model.moe
    assert cfg is not None
    k = float(cfg.top_k)
    out = n_dom * (1.0 - (1.0 - 1.0 / n_dom) ** k)
    for d in np.unique(n_dom):
        if d > 1 and float(d).is_integer() and cfg.n_experts % int(d) == 0:
            out = np.where(n_dom == d, expected_nodes_per_token(ctx.model, int(d)), out)
    return np.asarray(out)


def routing_imbalance(ctx: Context, tokens: Arr, ep: Arr) -> Arr | float:
    """Load of the busiest expert rank over the mean, for ``tokens`` tokens per rank per micro-batch.

    Dropless routing that is not forced uniform: Poisson token counts plus the experts' load skew
    (``moe_expert_load_cv``) averaged over the ``E/ep`` experts a rank holds, at the expected
    maximum of ``ep`` ranks (``sqrt(2 ln ep)`` standard deviations). Token drop runs every expert at
    its static capacity; forced-balanced routing at the mean.
    """
    cfg = ctx.model.moe
    if cfg is None or cfg.balanced_routing:
        return 1.0
    if cfg.dispatch != "dropless":
        return cfg.capacity_factor or 1.0
    per_rank = tokens * float(cfg.top_k)  # mean routed tokens per rank per micro-batch
    cv = np.sqrt(1.0 / np.maximum(per_rank, 1.0) + ctx.cal.moe_expert_load_cv**2 * ep / float(cfg.n_experts))
    z = np.sqrt(2.0 * np.log(np.maximum(ep, 1.0)))
    return np.asarray(ctx.cal.moe_routing_imbalance * (1.0 + z * cv))


# fused causal attention per score element: matmul FLOPs at d_qk + d_v = 256, forward 2 x 256 and backward 2.5x
# that (it recomputes S and forms dP, dV, dQ, dK), and exponentials, one forward and one when the backward
# recomputes P (FlashAttention-2/3 algorithms; Dao 2023, Shah et al. 2024)
_ATTN_MATMUL_FLOPS_256 = 7.0 * 256.0
_ATTN_EXPS = 2.0


def softmax_ratio(ctx: Context) -> float:
    """Softmax work per attention-score element on this accelerator, relative to its matmul time at head dims
    128 + 128. ``attn_softmax_ratio`` is measured on a reference GPU whose tensor/exp and tensor/FP32 balances
    the calibration names; the exponentials (special-function units, MUFU.EX2) take 2 exps per 7 x 256 matmul
    FLOPs at the accelerator's own bf16-peak / exp-rate, the rest of the softmax runs on the FP32 pipe and scales
    with bf16 peak / fp32 peak. Blackwell doubled the tensor rate per SM-clock but not the exp units (r grows);
    Blackwell Ultra doubles the exp units (r falls back). Without a published exp rate r is the reference's."""
    cal, acc = ctx.cal, ctx.acc
    r_ref = cal.attn_softmax_ratio
    if acc.exp_rate is None:
        return r_ref
    exp_ref = _ATTN_EXPS * cal.attn_ref_flop_per_exp / _ATTN_MATMUL_FLOPS_256
    rest_ref = max(0.0, r_ref - exp_ref)
    peak = acc.peak("bf16")
    exp_part = _ATTN_EXPS * (peak / acc.exp_rate) / _ATTN_MATMUL_FLOPS_256
    fp32 = acc.peak_flops.get("fp32")
    rest = rest_ref if fp32 is None else rest_ref * (peak / fp32) / cal.attn_ref_flop_per_fp32
    return exp_part + rest


def head_dim_throughput(ctx: Context) -> float:
    """Fused-attention FLOP rate at the model's head dims relative to head dims 128 + 128, where the
    accelerators' attention fractions are quoted. Per score element the kernel does 2(d_qk + d_v)
    matmul FLOPs forward but a fixed amount of softmax work (exp, max, rescale) whatever the head
    dim, r (:func:`softmax_ratio`) times the matmul time at 256: with smaller heads that share
    grows and the FLOP rate falls, (D/256)(1 + r)/(D/256 + r) for D = d_qk + d_v (FlashAttention-3
    paper, Figs. 5-6: head dim 64 at ~0.79x the TFLOP/s of 128 on H100). Wider heads are not credited (1)."""
    dqk, dv = attention_head_dims(ctx.model)
    x = (dqk + dv) / 256.0
    r = softmax_ratio(ctx)
    return min(1.0, x * (1.0 + r) / (x + r))


def fp8_attention_scaling(ctx: Context) -> str | None:
    """The scaling of Transformer Engine's FP8 attention (``fp8_dot_product_attention``) under the run's recipe:
    "mxfp8" (block-scaled) under an MXFP8 recipe, "fp8" (per-tensor) under delayed or current scaling; None
    where no FP8 attention kernel runs: no FP8 precision, or a Float8BlockScaling / NVFP4 recipe, for which
    Transformer Engine turns its FP8 fused attention off (attention/dot_product_attention/utils.py,
    get_attention_backend; DotProductAttention keeps the autocast recipe unless NVTE_DPA_FP8_RECIPE says
    otherwise, which Megatron-Bridge's performance scripts do not set)."""
    recipe = ctx.training.precision_recipe
    if not ctx.fp8 or ctx.training.precision != "fp8" or recipe == "fp8_blockwise":
        return None
    return "mxfp8" if recipe == "mxfp8" else "fp8"


def fp8_attention_factors(ctx: Context) -> tuple[float, float]:
    """(forward, backward) time of the FP8 fused-attention kernel over the BF16 one at the model's head dims,
    for the scaling it runs (:func:`fp8_attention_scaling`). The accelerator's ``fp8_attention_time`` holds
    cuDNN's measured ratios (catalog; NVIDIA/cudnn-frontend attention benchmarks): halving the matmul part
    and keeping the softmax part (:func:`head_dim_throughput`) misses most of the backward's extra cost, so
    the measurement is used, linear in d_qk + d_v between its rows and the nearest row outside them.
    (1, 1) where no FP8 attention kernel runs or the accelerator has no measurement."""
    key = fp8_attention_scaling(ctx)
    rows = ctx.acc.fp8_attention_time.get(key) if key is not None else None
    if not rows:
        return 1.0, 1.0
    dqk, dv = attention_head_dims(ctx.model)
    dims = [r[0] for r in rows]
    fwd = float(np.interp(dqk + dv, dims, [r[1] for r in rows]))
    bwd = float(np.interp(dqk + dv, dims, [r[2] for r in rows]))
    return fwd, bwd


def _launch_time(ctx: Context, st: Strategies, moe: bool) -> Arr | float:
    """Host launch cost of one layer's forward kernels: ``layer_overhead_s``, and for an MoE layer
    ``moe_layer_overhead_s`` on top. CUDA graphs replay what they captured at
    ``cuda_graph_overhead_factor`` of it. A partial scope (``cuda_graphs_moe`` False: Megatron-Core
    ``cuda_graph_scope`` attn, moe_router, moe_preprocess with Transformer Engine per-layer graphs)
    leaves the MoE token dispatch, expert GEMMs and combine eager: the MoE layer's extra cost stays
    whole (its router top-k, captured, is not split from it)."""
    graphed = np.where(st.cuda_graphs, ctx.cal.cuda_graph_overhead_factor, 1.0)
    t = ctx.cal.layer_overhead_s * graphed
    if moe:
        t = t + ctx.cal.moe_layer_overhead_s * np.where(st.graphs_moe, graphed, 1.0)
    return t


def selective_is_core_attn(ctx: Context) -> bool:
    """Whether selective recompute of a dense layer is Megatron-Core's core-attention checkpoint, not
    the cheap modules. Megatron-Core's Transformer Engine layer spec fuses both norms of a dense layer
    without MLA into the linear after them (``TELayerNormColumnParallelLinear`` for linear_qkv and
    linear_fc1; input_layernorm and pre_mlp_layernorm stay ``IdentityOp``, models/gpt/gpt_layer_specs.py);
    ``recompute_modules`` "layernorm" acts only on a norm module of its own (transformer_layer.py: ``if
    not isinstance(self.input_layernorm, IdentityOp)``) and "moe_act" only on grouped-GEMM experts
    (moe/experts.py), so what ``recompute_granularity: selective`` recomputes there is its default
    module, "core_attn": attention.py ``_checkpointed_attention_forward`` re-runs the attention core in
    the backward and keeps only its inputs q, k, v (Megatron-Core 0.16). MLA layers keep a separate
    input norm and MoE layers a pre-MLP norm; frameworks without Megatron-Core recompute their own way."""
    a = ctx.model.attention
    return ctx.splits.megatron and (a is None or a.kind != "mla")


def _flash_time(
    ctx: Context, st: Strategies, tokens: Arr, tp: Arr, flops_per_token: float, spans: tuple[tuple[float, float], ...]
) -> Arr:
    """Fused attention core of one layer's forward on one GPU: its causal half of ``flops_per_token``
    (non-causal, per token) at the fused kernel's rate for the key ``spans`` it loops over."""
    full_flops = flops_per_token * tokens / tp
    attn_frac = np.where(st.fa2, ctx.acc.attention_fraction_fa2, ctx.acc.attention_fraction)
    # a query tile loops over the key span it attends to (s causal, the window of a sliding layer, the
    # chunk of a chunked one), at most s/cp per ring step of context parallelism; short key loops run
    # below the long-sequence ceiling (FlashAttention-3 sweep over sequence length), each layer kind's
    # share of the attention FLOPs at its own span's rate
    ring_len = float(ctx.seq_len) / st.cp.astype(float)
    slow = 0.0 * ring_len
    for share, span in spans:
        key_len = np.minimum(span, ring_len)
        slow = slow + share * (key_len + ctx.cal.attn_half_len_tokens) / key_len
    len_eff = 1.0 / np.where(slow > 0, slow, 1.0)
    hd = head_dim_throughput(ctx)  # small heads: the per-score softmax work weighs more
    return np.asarray(0.5 * full_flops / (ctx.bf16_peak * attn_frac * ctx.cal.attn_efficiency * len_eff * hd))


# bytes per element of GShard's [tokens, experts x capacity] masks per forward: the gate writes the fp32
# combine weights (4), casts them to the bool dispatch mask (read 4, write 1), and the two einsums cast the
# mask and the weights to the activation dtype (read 1, write 2; read 4, write 2): DeepSpeed-MoE
# sharded_moe.py top2gating / MOELayer.forward, MindSpeed mindspeed/moe/gate.py, moe_layer.py
_EINSUM_MASK_BYTES = 18.0


def einsum_dispatch_time(ctx: Context, s_rank: Arr, capacity: Arr | float) -> tuple[Arr, Arr]:
    """Forward (GEMM, memory-bound) time of GShard's einsum dispatch and combine of one MoE layer for the
    ``s_rank`` tokens that enter this rank's gate, each expert padded to ``capacity`` times its mean load.

    The gate writes one-hot masks over ``E·C = top_k·capacity·s_rank`` slots; "sec,sm->ecm" gathers the
    tokens into the experts' capacity buffers and "sec,ecm->sm" weights and sums their outputs back, each a
    dense GEMM of ``2·E·C·s_rank·h`` FLOPs in the activation dtype (outside Transformer Engine): quadratic in
    the tokens per rank, which is why later stacks index-select instead (DeepSpeed-MoE deepspeed/moe/
    sharded_moe.py; MindSpeed mindspeed/moe/moe_layer.py, whose --enable-token-rearrange-opt avoids it)."""
    cfg = ctx.model.moe
    assert cfg is not None
    hid = float(ctx.model.hidden)
    slots = float(cfg.top_k) * capacity * s_rank
    flops = 2.0 * 2.0 * slots * s_rank * hid
    t_gemm = flops / (ctx.bf16_peak * _gemm_eff(ctx, slots, hid + 0.0 * s_rank, s_rank))
    t_elem = _hbm_time(ctx, _EINSUM_MASK_BYTES * slots * s_rank)
    return np.asarray(t_gemm), np.asarray(t_elem)


def _layer_fwd(ctx: Context, kind: str, tokens: Arr, st: Strategies, tp: Arr, ep: Arr, etp: Arr) -> dict[str, Arr]:
    """Forward pieces of one layer per micro-batch on one GPU."""
    moe = kind == "moe"
    gemms = ctx.moe_gemms if moe else ctx.dense_gemms
    cfg = ctx.model.moe
    imb = routing_imbalance(ctx, tokens, ep) if moe else 1.0
    windows = {k: np.zeros_like(tokens) for k in ("mix_col", "mix_row", "mlp_col", "mlp_row")}
    casts = {k: np.zeros_like(tokens) for k in ("fwd", "bwd")}
    # an operand gathered in BF16 (no quantized gather) is quantized whole after the gather, as if unsharded
    sp_shard = np.where(st.sp & (tp > 1) & st.gather_fp8, tp, 1.0)
    fused = fused_grouped_mlp(ctx, st, etp) if moe else False
    t_gemm, f_gemm, t_up, f_up = _gemms_fwd_time(ctx, gemms, tokens, tp, ep, etp, imb, windows, casts, sp_shard, fused)
    # the shared experts' GEMMs alone (the window --moe-shared-expert-overlap hides the all-to-all in)
    shared = tuple(g for g in gemms if g.name.startswith("shared_")) if moe and np.any(st.shared_overlap) else ()
    t_shared = _gemms_fwd_time(ctx, shared, tokens, tp, ep, etp, imb)[0] if shared else 0.0 * tokens
    # attention core: queries of this rank (tokens, heads/tp) against the full causal context.
    # FlashAttention skips masked blocks (half the FLOPs, Dao 2023); the unfused path computes the
    # full s x s scores as batched GEMMs and makes ~6 passes over them in HBM (scores, scale-mask-
    # softmax read+write, dropout read+write+mask, read by the AV GEMM; Korthikanti et al. 2022).
    heads = float(ctx.model.n_heads) / tp
    full_flops = ctx.attn_flops_per_token * tokens / tp
    s = float(ctx.seq_len)
    t_flash = _flash_time(ctx, st, tokens, tp, ctx.attn_flops_per_token, ctx.attn_key_spans)
    d = float(ctx.model.kv_channels)
    t_unfused = full_flops / (ctx.bf16_peak * _gemm_eff(ctx, s + 0.0 * tokens, s + 0.0 * tokens, d + 0.0 * tokens))
    t_unfused = t_unfused + _hbm_time(ctx, 6.0 * heads * tokens * s * ctx.act_bytes)
    t_attn = np.where(st.flash, t_flash, t_unfused)
    attn_flops = np.where(st.flash, 0.5 * full_flops, full_flops)
    t_attn_b = t_attn
    if fp8_attention_scaling(ctx) is not None and np.any(st.fp8_attn):
        # FP8 attention (fused kernels only): cuDNN's FP8 kernels at their measured rate over the BF16 one,
        # forward and backward apart (fp8_attention_factors); the backward runs a sliding layer's whole
        # causal triangle (workload.shapes module docstring: the band is masked, not skipped)
        fp8_attn = st.flash & st.fp8_attn
        f_fwd, f_bwd = fp8_attention_factors(ctx)
        t_bwd = t_flash
        if ctx.attn_key_spans_unbanded != ctx.attn_key_spans:
            t_bwd = _flash_time(ctx, st, tokens, tp, ctx.attn_flops_per_token_unbanded, ctx.attn_key_spans_unbanded)
        t_attn_b = np.where(fp8_attn, f_bwd * t_bwd, t_attn)
        t_attn = np.where(fp8_attn, f_fwd * t_flash, t_attn)
    elems = ctx.elem_moe if moe else ctx.elem_dense
    # the fused grouped MLP runs the routed experts' activation (and its backward) in its GEMM epilogues
    elems = elems - np.where(fused, ctx.act_routed_moe, 0.0)
    shard = np.where(st.sp, tp, 1.0)
    t_elem = _hbm_time(ctx, elems * tokens / shard * ctx.act_bytes)
    t_elem = t_elem + _launch_time(ctx, st, moe)
    # Megatron-Core's all-to-all dispatcher permutes tokens by expert before the exchange and, with
    # more than one local expert, sorts the received chunks from (source rank, expert) to (expert,
    # source rank) order after it (sort_chunks_by_idxs), and back before the combine: one more read +
    # write of the k routed copies each way. DeepEP / HybridEP dispatch writes the received tokens in
    # the layout the grouped GEMM reads (the permutation runs inside the dispatch kernel).
    if moe and cfg is not None:
        local = float(cfg.n_experts) / ep
        sort = np.where(
            (ep > 1) & (local > 1) & ~st.deepep & ~st.einsum, 4.0 * float(cfg.top_k) * float(ctx.model.hidden), 0.0
        )
        t_elem = t_elem + _hbm_time(ctx, sort * tokens / shard * ctx.act_bytes)
    if moe and cfg is not None and np.any(st.einsum):
        t_ein_gemm, t_ein_elem = einsum_dispatch_time(ctx, tokens / shard, imb)
        t_gemm = t_gemm + np.where(st.einsum, t_ein_gemm, 0.0)
        t_elem = t_elem + np.where(st.einsum, t_ein_elem, 0.0)
    # a clamped gated activation and biased experts run as separate kernels in Megatron-Core's grouped
    # MLP unless Transformer Engine's op fuser fuses FC1, activation and FC2 (eager_mlp_elems_per_token)
    eager = (ctx.eager_mlp_moe if moe else ctx.eager_mlp_dense)[0]
    if eager:
        t_elem = t_elem + _hbm_time(ctx, np.where(st.op_fuser, 0.0, eager) * tokens / shard * ctx.act_bytes)
    # Megatron-Core's DeepEP / HybridEP dispatch casts the routing probabilities to fp32, which the eager
    # expert bias then runs in (expert_bias_fp32_probs_bytes_per_token)
    if moe and ctx.eager_bias_fp32_moe and ctx.splits.megatron:
        fp32 = np.where(st.deepep & ~st.op_fuser, ctx.eager_bias_fp32_moe, 0.0)
        t_elem = t_elem + _hbm_time(ctx, fp32 * tokens / shard)
    # a YaRN-scaled rotary embedding runs unfused in Megatron-Core (eager_rope_elems_per_token); the q and
    # k heads it rotates are split tp ways
    if ctx.eager_rope and ctx.splits.megatron:
        t_elem = t_elem + _hbm_time(ctx, ctx.eager_rope * tokens / tp * ctx.act_bytes)
    # dropless MoE syncs device to host once per layer pass; CUDA graphs cannot remove it
    if moe and cfg is not None and cfg.dispatch == "dropless":
        t_elem = t_elem + ctx.cal.moe_host_sync_s
    # selective recompute: with unfused attention the attention core (Korthikanti et al. 2022);
    # with a fused kernel the cheap modules instead (norms, activation, MLA up-projections)
    _, sel_traffic = ctx.sel_moe if moe else ctx.sel_dense
    # the recomputed activation (Megatron-Core recompute module moe_act / mlp) re-runs an eager clamp with it
    clamp = clamp_fwd_elems_per_token(ctx.model, "moe" if moe else "dense")
    if clamp:
        sel_traffic = sel_traffic + np.where(st.op_fuser, 0.0, clamp)
    t_sel_cheap = _hbm_time(ctx, sel_traffic * tokens / shard * ctx.act_bytes) + t_up
    if not moe and selective_is_core_attn(ctx):  # the attention core again, fused or not
        t_sel, f_sel = t_attn, attn_flops
    else:
        t_sel = np.where(st.flash, t_sel_cheap, t_attn)
        f_sel = np.where(st.flash, f_up, attn_flops)
    return {
        "gemm": t_gemm,
        "cast_f": casts["fwd"],
        "cast_b": casts["bwd"],
        "attn": t_attn,
        "attn_b": t_attn_b,
        "elem": t_elem,
        "flops": f_gemm + attn_flops,
        "sel": t_sel,
        "sel_flops": f_sel,
        "shared": t_shared,
        **windows,
    }


# ---------------------------------------------------------------- typed records, one per concern
@dataclass(frozen=True)
class Shape:
    """The strategy's shape and pipeline layout (per-strategy arrays)."""

    tp: Arr
    pp: Arr
    dp: Arr
    cp: Arr
    ep: Arr
    v: Arr
    tokens: Arr  # tokens of one micro-batch on one cp rank
    m_mb: Arr  # micro-batches per step
    etp: Arr  # expert tensor parallelism (tp, or 1 when EP folds over the tp ranks)
    folded: npt.NDArray[np.bool_]
    slots: Arr  # layer slots of a middle stage
    chunk_slots: Arr  # layer slots of the largest model chunk
    short: Arr  # layers the first and last stage give up to the embedding and the loss
    last_chunk: Arr  # layers of the last stage's final model chunk (beside the LM head)
    n_first: Arr
    n_last: Arr
    layers: dict[str, tuple[Arr, Arr]]  # "first" | "mid" | "last" -> (dense, MoE) layers
    has_moe: bool


@dataclass(frozen=True)
class Compute:
    """Per micro-batch compute of the busiest stage, and what the pipeline needs from the others."""

    dense: dict[str, Arr]  # one layer's forward pieces
    moe: dict[str, Arr]
    t_fwd: Arr
    t_bwd: Arr
    t_rec: Arr
    nd_s: Arr  # dense and MoE layers of the busiest stage
    nm_s: Arr
    use_last: npt.NDArray[np.bool_]  # the last stage (with the LM head) paces
    w_grad: Arr  # weight-gradient GEMMs of the busiest stage (DualPipe's W)
    chunk_max: Arr  # fwd + bwd + recompute of the slowest model chunk
    rd_s: Arr  # dense and MoE layers of the busiest stage that full recompute re-runs (block method: some)
    rm_s: Arr
    rc: dict[str, tuple[Arr, Arr]]  # per stage key ("first", "mid", "last"): full_recompute_layers

    @property
    def layers_s(self) -> Arr:
        return np.asarray(self.nd_s + self.nm_s)

    @property
    def rec_full(self) -> Arr:
        """Share of the busiest stage's layers whose forward full recompute runs again (0 without it)."""
        return np.asarray((self.rd_s + self.rm_s) / np.maximum(self.layers_s, 1.0))

    @property
    def rec_moe(self) -> Arr:
        """Share of the busiest stage's MoE layers whose forward full recompute runs again."""
        return np.asarray(self.rm_s / np.maximum(self.nm_s, 1.0))


@dataclass(frozen=True)
class Comm:
    """One communication concern: exposed time (per micro-batch or per step), bytes, link charges."""

    exposed: Arr
    nbytes: Arr
    charges: tuple[tuple[Arr | float, str, Arr | float, Any], ...] = ()  # (calls per step, op, bytes, group)


@dataclass(frozen=True)
class Params:
    """Parameters on one GPU of the busiest stage and the data-parallel groups that hold copies."""

    p_dense: Arr
    p_expert: Arr
    p_dense_layers: Arr  # p_dense without the embedding / output head: the layers' non-expert parameters
    layer_dense: float  # parameters of one dense layer (ZeRO-3 prefetch buffer)
    dpc: Arr
    edp: Arr
    hybrid: npt.NDArray[np.bool_]
    g: Arr  # ZeRO shard-group size (dense), hybrid or all dp·cp
    g_e: Arr
    rep: Arr  # replicas across shard groups
    rep_e: Arr
    groups: dict[str, Any]

    @property
    def p_local(self) -> Arr:
        return np.asarray(self.p_dense + self.p_expert)

    @property
    def p_shard(self) -> Arr:
        return np.asarray(self.p_dense / self.g + self.p_expert / self.g_e)


@dataclass(frozen=True)
class Links:
    """Per-link busy time by concern, exposed time per link and per concern after conservation."""

    busy: dict[str, dict[str, Arr]]
    exposed_link: dict[str, Arr]
    exposed: dict[str, Arr]  # per concern, per step
    window: Arr


@dataclass(frozen=True)
class Memory:
    """Bytes per GPU on the pipeline rank that holds the most (:func:`memory`), not necessarily the
    stage that paces the step."""

    weights: Arr
    gradients: Arr
    optimizer: Arr
    activations: Arr
    offloaded: Arr  # saved activations of one micro-batch held in host memory (activation offload)
    buffers: Arr

    @property
    def total(self) -> Arr:
        return np.asarray(self.weights + self.gradients + self.optimizer + self.activations + self.buffers)


# ---------------------------------------------------------------- shape and pipeline layout
def _divides(d: Arr, x: float) -> npt.NDArray[np.bool_]:
    """``np.mod(x, d) == 0`` for integer-valued ``d`` (and ``x``) below 2**53, in three cheap passes
    instead of numpy's float modulo (~50x an add): ``x / d`` is exact when ``d`` divides ``x``, and
    no other integer quotient times ``d`` rounds to ``x``; ``d = 0`` gives NaN, not equal, as the
    modulo does."""
    return np.asarray(np.floor(x / d) * d == x)


def shape(ctx: Context, st: Strategies) -> Shape:
    """Shape columns and the pipeline layout Megatron-Core builds.

    The layers split evenly over the pp·vpp virtual stages; else the embedding and the loss each take
    a layer's slot (--account-for-embedding/loss-in-pipeline-split: first and last stage one layer
    short); else an uneven split (--decoder-first/last-pipeline-num-layers, or an explicit
    --pipeline-model-parallel-layout with interleaving) whose busiest stage holds ceil(L/pp) layers
    and busiest chunk ceil(L/(pp·vpp)), every chunk full but the last, which holds the remainder
    beside the loss, or, with interleaving where no layer remains for it, holds the loss alone while the
    first chunk gives up the rest beside the embedding. Dense layers sit at the front (DeepSeek-V3
    style); multi-token-prediction layers count among L and their heads run on the last stage.
    """
    f = np.float64
    tp, pp, dp, cp, ep = (getattr(st, k).astype(f) for k in ("tp", "pp", "dp", "cp", "ep"))
    v = st.vpp.astype(f)
    mb = st.micro_batch.astype(f)
    L = float(ctx.model.n_layers + ctx.model.mtp_layers)
    vp = pp * v
    even = _divides(vp, L)
    accounted = ~even & _divides(vp, L + 2.0) & (pp > 1)
    slots = np.where(even, L / pp, np.where(accounted, (L + 2.0) / pp, np.ceil(L / pp)))
    chunk_slots = np.where(even, L / vp, np.where(accounted, (L + 2.0) / vp, np.ceil(L / vp)))
    short = np.where(accounted, 1.0, 0.0)
    n_first = np.where(pp > 1, slots - short, L)
    n_last = np.where(pp > 1, slots - short, L)
    last_chunk = chunk_slots - short
    # an uneven split fills every model chunk but the last and gives the last what remains, beside the
    # loss (Megatron-Bridge's DeepSeek-V3 pipeline layouts: 61 layers on 16 stages are E+4 | 4 x 14 |
    # 1+loss, on 4 x 4 virtual stages the same chunks; --decoder-last-pipeline-num-layers); where the
    # remainder would be empty, every stage stays full (the busiest-stage bound above)
    rem = L - (vp - 1.0) * chunk_slots
    uneven = ~even & ~accounted & (pp > 1) & (rem >= 1.0)
    slots = np.where(uneven, v * chunk_slots, slots)
    last_chunk = np.where(uneven, rem, last_chunk)
    n_first = np.where(uneven, slots, n_first)
    n_last = np.where(uneven, (v - 1.0) * chunk_slots + rem, n_last)
    # where the last chunk could hold no layer (chunks of ceil(L/(pp·vpp)) overshoot L by more than one),
    # the loss (and any MTP layer) takes the last chunk alone and the first chunk, beside the embedding,
    # holds what remains: Megatron-Bridge's layout for 32 virtual stages of DeepSeek-V3's 61 layers is
    # "Et|(tt|)*30mL" (scripts/performance/configs/deepseek/deepseek_llm_pretrain.py @v0.2.0, H100 PP 8 VP 4;
    # scripts/performance/run_script.py @v0.1.0rc3, GB200/B200 PP 4 VP 8), an embedding chunk of one layer,
    # 30 of two and a last chunk of MTP + loss only; without MTP the same with the MTP slot empty. Only
    # with interleaving (the last stage keeps its other chunks' layers) and where no stage then holds more
    # than ceil(L/pp) layers; else a layout of mixed chunks keeps that bound
    first_chunk = L - (vp - 2.0) * chunk_slots
    fits = (first_chunk >= 1.0) & (v * chunk_slots <= np.ceil(L / pp))
    spill = ~even & ~accounted & (pp > 1) & (v > 1) & (rem < 1.0) & fits
    slots = np.where(spill, v * chunk_slots, slots)
    short = np.where(spill, chunk_slots - first_chunk, short)
    last_chunk = np.where(spill, 0.0, last_chunk)
    n_first = np.where(spill, (v - 1.0) * chunk_slots + first_chunk, n_first)
    n_last = np.where(spill, (v - 1.0) * chunk_slots, n_last)
    n_dense = float(ctx.n_dense_layers)
    has_moe = ctx.n_moe_layers > 0
    dense_first = np.minimum(n_dense, n_first)
    dense_mid = np.clip(n_dense - n_first, 0.0, slots)
    moe_last = np.where(has_moe, np.minimum(n_last, float(ctx.n_moe_layers)), 0.0)
    # expert layout: EP inside dp·cp keeps experts tensor-parallel like the dense layers (ETP = TP,
    # Megatron's default); an EP that also spans the tp ranks is Megatron-Core MoE parallel folding
    # (ETP = 1, expert ranks consecutive in rank order)
    folded = (dp * cp) % ep != 0
    return Shape(
        tp=tp,
        pp=pp,
        dp=dp,
        cp=cp,
        ep=ep,
        v=v,
        tokens=mb * float(ctx.seq_len) / cp,
        m_mb=np.maximum(1.0, ctx.global_batch_seqs / (dp * mb)),
        etp=np.where(folded, 1.0, tp),
        folded=folded,
        slots=slots,
        chunk_slots=chunk_slots,
        short=short,
        last_chunk=last_chunk,
        n_first=n_first,
        n_last=n_last,
        layers={
            "first": (dense_first, n_first - dense_first),
            "mid": (dense_mid, slots - dense_mid),
            "last": (n_last - moe_last, moe_last),
        },
        has_moe=has_moe,
    )


# ---------------------------------------------------------------- compute
def heaviest_mid(ctx: Context, sh: Shape) -> tuple[Arr, Arr]:
    """(dense, MoE) layers of the middle stage with the most MoE layers: dense layers fill the stages from
    the front, so it is the first middle stage past them (or the last, where fewer MoE layers than a
    stage remain); ``sh.layers["mid"]`` is the first middle stage, which may still hold dense ones."""
    moe_mid = np.maximum(float(ctx.n_moe_layers) - sh.layers["first"][1] - sh.layers["last"][1], 0.0)
    mh = np.minimum(sh.slots, moe_mid)
    return np.asarray(sh.slots - mh), np.asarray(mh)


def full_recompute_layers(
    st: Strategies, sh: Shape, key: str, layers: tuple[Arr, Arr] | None = None
) -> tuple[Arr, Arr]:
    """(dense, MoE) layers of the ``key`` stage ("first", "mid", "last") that full recompute re-runs
    (of ``layers`` instead of ``sh.layers[key]`` where given: another stage of the same kind).

    Every layer, unless ``st.rc_layers`` >= 0: Megatron-Core's block method (``--recompute-method block
    --recompute-num-layers N``) checkpoints the first N layers of each model chunk, a TransformerBlock of
    ``num_layers_per_pipeline_rank = len(self.layers)`` layers (one per virtual stage with interleaving),
    and runs the rest as without recompute (megatron/core/transformer/transformer_block.py
    ``_checkpointed_forward``, core_v0.14.0; megatron/core/recompute.py, core_v0.19.0); a chunk of fewer
    than N layers recomputes them all. The stage's chunks: the first stage's first chunk gives a slot to
    the embedding, the last stage's final chunk holds ``sh.last_chunk`` layers, the others
    ``sh.chunk_slots``. Dense layers come first."""
    nd, nm = sh.layers[key] if layers is None else layers
    full = st.recompute == 2
    if not np.any(st.rc_layers >= 0):  # every layer wherever recompute is full
        return np.asarray(np.where(full, nd, 0.0)), np.asarray(np.where(full, nm, 0.0))
    # the stage's chunk that differs from its chunk_slots-layer others
    odd = {"first": sh.chunk_slots - sh.short, "mid": sh.chunk_slots, "last": sh.last_chunk}[key]
    n = st.rc_layers.astype(np.float64)
    block = (sh.v - 1.0) * np.minimum(n, sh.chunk_slots) + np.minimum(n, np.maximum(odd, 0.0))
    r = np.where(full, np.where(n < 0.0, nd + nm, np.minimum(block, nd + nm)), 0.0)
    rd = np.minimum(r, nd)
    return np.asarray(rd), np.asarray(r - rd)


_STAGE_KEYS = ("gemm", "attn", "attn_b", "elem", "flops", "sel", "sel_flops")
_FP8_STAGE_KEYS = (*_STAGE_KEYS, "cast_f", "cast_b")  # FP8 adds its operand casts


def compute(ctx: Context, st: Strategies, sh: Shape) -> Compute:
    """Forward, backward and recompute of the busiest pipeline stage per micro-batch, and its slowest chunk."""
    tp, pp, v, tokens = sh.tp, sh.pp, sh.v, sh.tokens
    dense = _layer_fwd(ctx, "dense", tokens, st, tp, sh.ep, sh.etp)
    # without MoE layers every MoE piece is the same zero array (one, not one per key; read only)
    moe = _layer_fwd(ctx, "moe", tokens, st, tp, sh.ep, sh.etp) if sh.has_moe else dict.fromkeys(dense, 0.0 * tokens)
    # logits + loss on the last stage
    lg = ctx.logits
    n_v = lg.n / tp
    logit_flops = 2.0 * tokens * n_v * lg.k
    k_v = np.full_like(tp, float(lg.k))
    t_logit = logit_flops / (ctx.bf16_peak * _gemm_eff(ctx, tokens, n_v, k_v))
    if ctx.fp8 and ctx.training.precision_recipe == "mxfp8" and np.any(st.fp8_head):
        # fp8_output_proj: Megatron-Core runs the LM head as a Transformer Engine linear inside the MXFP8
        # autocast (transformer/mxfp8_output_proj.py, TELinearCrossEntropyModule; only under the mxfp8 recipe):
        # forward, dgrad and wgrad GEMMs at the FP8 rate; its input (tokens x hidden) is quantized forward and
        # the logits' gradient (tokens x vocab/tp) backward, counted here forward-equivalent (/3: the
        # stage charges the backward twice the head's forward)
        t_fp8 = logit_flops / (ctx.gemm_peak * _gemm_eff(ctx, tokens, n_v, k_v, True))
        per = ctx.cal.fp8_cast_bytes_per_element
        t_fp8 = t_fp8 + _hbm_time(ctx, (tokens * k_v + tokens * n_v) * per) / 3.0
        t_logit = np.where(st.fp8_head, t_fp8, t_logit)
    t_head = t_logit + _hbm_time(ctx, 3.0 * tokens * n_v * 4.0)  # fp32 softmax + CE
    # each multi-token-prediction depth computes its own logits and loss with the shared output head
    # (DeepSeek-V3 report Sec. 2.2), on the last stage beside the main head
    t_head = t_head * (1.0 + float(ctx.model.mtp_layers))

    keys = _FP8_STAGE_KEYS if ctx.fp8 else _STAGE_KEYS

    def stage(nd: Arr, nm: Arr, head: Arr) -> dict[str, Arr]:
        if not sh.has_moe:  # the MoE terms are nm x (+0.0): adding them changes no bit
            out = {key: nd * dense[key] for key in keys}
        else:
            out = {key: nd * dense[key] + nm * moe[key] for key in keys}
        out["head"] = head
        return out

    first = stage(*sh.layers["first"], np.where(pp > 1, 0.0, t_head))
    mid = stage(*sh.layers["mid"], 0.0 * t_head)
    last = stage(*sh.layers["last"], t_head)
    rec = st.recompute
    # block method: the recompute re-runs the forward of only some layers (full_recompute_layers)
    partial = bool(np.any(st.rc_layers >= 0))
    rc = {k: full_recompute_layers(st, sh, k) for k in ("first", "mid", "last")}
    if partial:
        cast = ("cast_f",) if ctx.fp8 else ()
        rerun_d = sum((dense[k] for k in ("gemm", *cast, "attn", "elem")), 0.0 * tokens)
        rerun_m = sum((moe[k] for k in ("gemm", *cast, "attn", "elem")), 0.0 * tokens)

    def fwd_bwd(sg: dict[str, Arr], rc_stage: tuple[Arr, Arr]) -> tuple[Arr, Arr, Arr]:
        # FP8 casts: the forward quantizes GEMM inputs, the backward output gradients (once each)
        gemm_f, gemm_b = (
            (sg["gemm"] + sg["cast_f"], 2.0 * sg["gemm"] + sg["cast_b"]) if ctx.fp8 else (sg["gemm"], 2.0 * sg["gemm"])
        )
        fwd = gemm_f + sg["attn"] + sg["elem"] + sg["head"]
        bwd = gemm_b + 2.5 * sg["attn_b"] + 2.0 * sg["elem"] + 2.0 * sg["head"]
        full_rec = gemm_f + sg["attn"] + sg["elem"]
        if partial:
            full_rec = np.where(st.rc_layers >= 0, rc_stage[0] * rerun_d + rc_stage[1] * rerun_m, full_rec)
        recomp = np.where(rec == 2, full_rec, np.where(rec == 1, sg["sel"], 0.0))
        return fwd, bwd, recomp

    # the busiest stage sets the pace: first, a middle one (pp > 2) or the last with the LM head
    f1, b1, r1 = fwd_bwd(first, rc["first"])
    fm, bm, rm = fwd_bwd(mid, rc["mid"])
    f2, b2, r2 = fwd_bwd(last, rc["last"])
    (dm, mm) = sh.layers["mid"]
    if sh.has_moe and np.any(pp > 2):
        # the middle stages past the dense layers hold only MoE layers: where the first middle stage still
        # holds some dense ones (dense layers fill the stages from the front), the MoE-heaviest middle stage
        # (as memory() finds it) may be the slower one, and the slowest stage sets the pace
        dh, mh = heaviest_mid(ctx, sh)
        if np.any(mh > mm):
            heavy = stage(dh, mh, 0.0 * t_head)
            rc_h = full_recompute_layers(st, sh, "mid", (dh, mh))
            fh, bh, rh = fwd_bwd(heavy, rc_h)
            slower = (fh + bh + rh) > (fm + bm + rm)
            fm, bm, rm = np.where(slower, fh, fm), np.where(slower, bh, bm), np.where(slower, rh, rm)
            mid = {k: np.where(slower, heavy[k], mid[k]) for k in mid}
            dm, mm = np.where(slower, dh, dm), np.where(slower, mh, mm)
            rc["mid"] = (np.where(slower, rc_h[0], rc["mid"][0]), np.where(slower, rc_h[1], rc["mid"][1]))
    c1, cm, c2 = f1 + b1 + r1, np.where(pp > 2, fm + bm + rm, 0.0), f2 + b2 + r2
    use_last = (c2 >= c1) & (c2 >= cm)
    use_mid = ~use_last & (cm > c1)
    # DualPipe: rank r holds stage r of one direction and stage pp-1-r of the other and runs half the
    # micro-batches through each (DeepSeek-V3 Sec. 3.2.1, Fig. 5), so a rank's work per micro-batch is
    # the mean of its two stages: the first stage (embedding) pairs with the last (LM head), middle
    # stages with middle ones
    dual = st.dualpipe & (pp > 1)
    use_pair = dual & ((c1 + c2) >= 2.0 * cm)
    use_last = use_last & ~dual
    use_mid = np.where(dual, ~use_pair, use_mid)

    def pick(a_last: Arr, a_mid: Arr, a_first: Arr) -> Arr:
        one = np.where(use_last, a_last, np.where(use_mid, a_mid, a_first))
        return np.asarray(np.where(use_pair, 0.5 * (a_first + a_last), one))

    (dl, ml), (d1, m1) = sh.layers["last"], sh.layers["first"]
    # the slowest model chunk paces the pipeline's warm-up and cool-down: a middle chunk of
    # slots/v layers, or the last stage's final chunk, which holds the LM head beside its layers
    per_layer_last = np.where(sh.n_last > 0, (c2 - 3.0 * t_head) / np.maximum(sh.n_last, 1.0), 0.0)
    chunk_last = per_layer_last * np.maximum(sh.last_chunk, 0.0) + 3.0 * t_head
    per_layer_busy = np.maximum(c1 / np.maximum(sh.n_first, 1.0), cm / np.maximum(sh.slots, 1.0))
    chunk_max = np.maximum(np.maximum(np.maximum(c1, cm) / v, per_layer_busy * sh.chunk_slots), chunk_last)
    nd_s, nm_s = pick(dl, dm, d1), pick(ml, mm, m1)
    rd_s = pick(rc["last"][0], rc["mid"][0], rc["first"][0])
    rm_s = pick(rc["last"][1], rc["mid"][1], rc["first"][1])
    return Compute(
        dense=dense,
        moe=moe,
        t_fwd=pick(f2, fm, f1),
        t_bwd=pick(b2, bm, b1),
        t_rec=pick(r2, rm, r1),
        nd_s=nd_s,
        nm_s=nm_s,
        use_last=use_last,
        w_grad=pick(last["gemm"] + last["head"], mid["gemm"], first["gemm"]),
        chunk_max=chunk_max,
        rd_s=rd_s,
        rm_s=rm_s,
        rc=rc,
    )


# ---------------------------------------------------------------- tensor, context, expert parallelism
# Scale bytes per element that travel with quantized data: MXFP8 one E8M0 scale per 32 elements
# (OCP Microscaling Formats spec v1.0); DeepSeek-V3-style blockwise FP8 one fp32 scale per 1x128 tile
# (DeepSeek-V3 report Sec. 3.3.2); per-tensor scaling (current / delayed) one scalar per tensor.
_FP8_SCALE_BYTES = {"mxfp8": 1.0 / 32.0, "fp8_blockwise": 4.0 / 128.0}
# NVFP4: 4-bit elements with one E4M3 scale per 16 (NVIDIA, "Pretraining LLMs with NVFP4", 2025)
_FP4_BYTES = 0.5 + 1.0 / 16.0


def tp_gather_bytes_per_element(ctx: Context) -> float:
    """Bytes per element of the sequence-parallel all-gathers (the column-parallel GEMM inputs forward,
    the row-parallel output gradients backward).

    Under an FP8 recipe Transformer Engine quantizes before it gathers: the norm writes its output in
    FP8 (``with_quantized_norm``) and ``gather_along_first_dim(..., quantizer=input_quantizer)``
    moves FP8 data (``_all_gather_fp8`` / ``_all_gather_mxfp8`` / blockwise); the backward gathers
    the quantized output gradient (``grad_output_preprocess``); every userbuffers all-gather buffer
    is FP8 (``initialize_ub``: ``fp8_buf = name in layers_all_gather_overlap`` = qkv/fc1 fprop,
    proj/fc2 dgrad). Reduce-scatters carry GEMM outputs and stay at ``act_bytes`` (TE
    module/layernorm_linear.py, linear.py, base.py, distributed.py, v1.8 to v2.x)."""
    if not ctx.fp8:
        return ctx.act_bytes
    if ctx.precision == "fp4":
        return _FP4_BYTES
    return 1.0 + _FP8_SCALE_BYTES.get(ctx.training.precision_recipe or "", 0.0)


def _gather_bytes(ctx: Context, st: Strategies) -> Arr:
    """Bytes per element of a sequence-parallel all-gather's operand: FP8 (with its scales) where the
    stack quantizes before it gathers (``sp_gather_fp8``), else the activation dtype."""
    return np.asarray(np.where(st.gather_fp8, tp_gather_bytes_per_element(ctx), ctx.act_bytes))


def einsum_tp_multiplier(ctx: Context, st: Strategies, sh: Shape) -> Arr:
    """TP traffic of an MoE layer's expert block over a dense MLP's: ``top_k · capacity`` where GShard's einsum
    dispatch hands tp-split experts their capacity-padded buffers (:func:`einsum_dispatch_time`), else 1."""
    cfg = ctx.model.moe
    one = np.ones_like(sh.tp, dtype=float)
    if not sh.has_moe or cfg is None or not np.any(st.einsum):
        return one
    cap = routing_imbalance(ctx, sh.tokens, sh.ep)
    return np.asarray(np.where(st.einsum & (sh.etp > 1), float(cfg.top_k) * cap, one))


def tensor_parallel(ctx: Context, st: Strategies, sh: Shape, cm: Compute) -> Comm:
    """Sequence parallel: 2 all-gathers + 2 reduce-scatters of s·b·h per layer forward and again
    backward (and recompute); without it 2 all-reduces each way (Korthikanti et al. 2022, Sec. 4.2.2).
    The all-gathers move ``tp_gather_bytes_per_element`` (1 under FP8), the rest ``act_bytes``.
    Exposed per micro-batch."""
    tp = sh.tp
    if not np.any(tp > 1):
        return Comm(exposed=np.zeros_like(tp), nbytes=np.zeros_like(tp))
    group = _group(ctx, tp, 1.0, ctx.ring_contention)
    act = sh.tokens * float(ctx.model.hidden) * ctx.act_bytes  # s·b·h activation of one micro-batch
    gather_b = _gather_bytes(ctx, st)
    act_ag = sh.tokens * float(ctx.model.hidden) * gather_b
    zero_t = np.zeros_like(tp)
    any_sp, all_sp = bool(np.any(st.sp)), bool(np.all(st.sp))
    ag = collective_time("all_gather", act_ag, group).time_s if any_sp else zero_t
    # NCCL runs a reduce-scatter as the mirror of the all-gather of the same buffer (the same ring and
    # PAT steps, the same candidates): an all-gather of the same bytes times it
    # (tests/network: test_reduce_scatter_mirrors)
    same = bool(np.all(gather_b == ctx.act_bytes))
    rs = ag if same or not any_sp else collective_time("all_gather", act, group).time_s
    ar = zero_t if all_sp else collective_time("all_reduce", act, group).time_s
    per_layer = np.where(st.sp, 2.0 * (np.asarray(ag) + np.asarray(rs)), 2.0 * np.asarray(ar))
    passes = 2.0 + cm.rec_full  # forward, backward, recompute (of the layers full recompute re-runs)
    # GShard's einsum dispatch with experts split tp ways (DeepSpeed-MoE / MindSpeed: each expert a column-
    # then row-parallel MLP over its capacity buffer): the MoE block's gather and scatter carry the
    # capacity-padded slots, top_k x capacity times the tokens, the attention block's the tokens
    moe_mult = einsum_tp_multiplier(ctx, st, sh)
    layers_tp = cm.nd_s + cm.nm_s * (1.0 + moe_mult) / 2.0  # the stage's layers in dense-layer TP traffic
    # Megatron keeps only the local shard of a column-parallel GEMM's sequence-parallel input, so its
    # backward all-gathers the input again for the weight gradient, beside the data-gradient GEMM
    # (Korthikanti et al. 2022 Sec. 4.2.2; Megatron-Core LinearWithGradAccumulationAndAsyncCommunication,
    # Transformer Engine ln_out_needs_gather with the bulk dgrad overlap): two more gathers per layer
    regather = st.sp & st.regather & (tp > 1)
    re_ag = np.where(regather, 2.0 * np.asarray(ag), 0.0)
    total = np.where(tp > 1, (per_layer * passes + re_ag) * layers_tp, 0.0)
    # TP-comm overlap (Transformer Engine userbuffers, sequence parallel only; Wang et al. 2023,
    # "Overlap communication with dependent computation via decomposition"): each all-gather is split
    # into tp chunks that stream into the column-parallel GEMM after it, each reduce-scatter out of
    # the row-parallel GEMM before it. One chunk (1/tp of the collective) cannot overlap, a
    # collective longer than its GEMM shows the excess, and of the rest a share eta hides (the
    # chunked GEMMs and the copies contend for SMs and HBM); the backward pairs each with twice the
    # GEMM work (data and weight gradients)
    ag_t, rs_t = np.asarray(ag), np.asarray(rs)

    eta = ctx.cal.tp_overlap_efficiency

    def _exposed(w: dict[str, Arr], g_mult: float, mlp_mult: Arr | float) -> Arr:
        # per collective c beside GEMM time g: c - eta * min(c (1 - 1/tp), g)
        out = np.zeros_like(tp)
        for blk, mult in (("mix", 1.0), ("mlp", mlp_mult)):
            for c, g in ((ag_t * mult, w[f"{blk}_col"]), (rs_t * mult, w[f"{blk}_row"])):
                out = out + c - eta * np.minimum(c * (1.0 - 1.0 / tp), g_mult * g)
        return out

    def _overlapped(w: dict[str, Arr], mlp_mult: Arr | float = 1.0) -> Arr:
        fwd = _exposed(w, 1.0, mlp_mult)  # the forward, and again the recompute pass of full recompute
        # the re-gather runs whole beside the data-gradient GEMM of its column-parallel linear (a bulk
        # overlap: no chunk of it waits for a GEMM to start)
        re = sum(
            (ag_t * m - eta * np.minimum(ag_t * m, w[f"{blk}_col"]) for blk, m in (("mix", 1.0), ("mlp", mlp_mult))),
            0.0 * tp,
        )
        bwd = _exposed(w, 2.0, mlp_mult) + np.where(regather, re, 0.0)
        return fwd + bwd + np.where(st.recompute == 2, cm.rec_full * fwd, 0.0)

    over = cm.nd_s * _overlapped(cm.dense) + cm.nm_s * (_overlapped(cm.moe, moe_mult) if sh.has_moe else 0.0)
    exposed = np.where(st.tp_overlap & st.sp & (tp > 1), np.minimum(over, total), total)
    per_pass = np.where(st.sp, 2.0 * (act_ag + act), 4.0 * act)  # SP: 2 gathers + 2 scatters; else 2 all-reduces
    re_bytes = np.where(regather, 2.0 * act_ag, 0.0)
    nbytes = np.where(tp > 1, (per_pass * passes + re_bytes) * (tp - 1) / tp * layers_tp, 0.0)
    calls = np.where(tp > 1, sh.m_mb * layers_tp * passes, 0.0)
    sp2 = calls * np.where(st.sp, 2.0, 0.0)
    re_calls = np.where(regather, 2.0 * sh.m_mb * cm.layers_s, 0.0)
    return Comm(
        exposed=exposed,
        nbytes=nbytes,
        charges=(
            (sp2 + re_calls, "all_gather", act_ag, group),
            (sp2, "reduce_scatter", act, group),
            (calls * np.where(st.sp, 0.0, 2.0), "all_reduce", act, group),
        ),
    )


def _cp_blocks(ctx: Context, sh: Shape) -> tuple[Arr, Arr]:
    """Bytes of this rank's K and V (``kv_block``) and of its Q (= its attention output O) for one
    micro-batch and one layer: ``tokens`` local tokens x heads per tp rank x head dims."""
    model, tp = ctx.model, sh.tp
    dqk_dv = ctx.kv_width  # workload.kv_width_per_layer
    kv_heads = float(model.n_heads if model.attention is not None else model.n_kv_heads)
    kv_block = sh.tokens * np.maximum(kv_heads / tp, 1.0) * dqk_dv * ctx.act_bytes
    q_block = sh.tokens * float(model.n_heads) / tp * (dqk_dv / 2.0) * ctx.act_bytes
    return np.asarray(kv_block), np.asarray(q_block)


def cp_buffer_bytes(ctx: Context, st: Strategies, sh: Shape) -> Arr:
    """Transient bytes one layer's context-parallel attention holds beyond the saved activations.

    all_gather: the gathered full-sequence K/V (``cp·kv_block``), its chunk-reordered copy, and in
    the backward the full-length dK/dV before their reduce-scatter: 3 x the layer's full-sequence K/V
    (Transformer Engine ``AttnFuncWithCPAndKVAllGather``). a2a / a2a+p2p: the permuted input and the
    output buffer of each all-to-all, at most O and dO (or Q, K, V) at once: ``2·(2·q + kv)``
    (``flash_attn_a2a_communicate``); the saved Q/K/V/O are the same bytes in head-sharded layout
    (full sequence, heads/cp). p2p: the ring's in-flight K/V blocks are left out (a few blocks, as
    before this model had variants).
    """
    kv_block, q_block = _cp_blocks(ctx, sh)
    a = cp_a2a_size(ctx, st).astype(float)
    ag = np.where(st.cp_comm == 1, 3.0 * sh.cp * kv_block, 0.0)
    a2a = np.where(a > 1, 2.0 * (2.0 * q_block + kv_block), 0.0)
    return np.asarray(np.where(sh.cp > 1, ag + a2a, 0.0))


def _rows_time(
    ctx: Context, op: str, nbytes: Arr, size: Arr, stride: Arr, contention: float, rows: npt.NDArray[np.bool_]
) -> Arr:
    """Time of one ``op`` per strategy, computed only for ``rows`` (0 elsewhere): a variant a few
    strategies of a large batch use does not time its collectives for all of them."""
    if not isinstance(size, np.ndarray):  # one strategy (numpy scalars)
        return collective_time(op, nbytes, _group(ctx, size, stride, contention)).time_s if rows else 0.0
    out = np.zeros_like(size, dtype=float)
    idx = np.flatnonzero(rows)
    if idx.size:
        # a search batch repeats few (bytes, ranks, stride) triples: time each distinct one once
        nb = np.broadcast_to(np.asarray(nbytes, dtype=float), size.shape)[idx]
        keys, inverse = np.unique(np.stack([nb, size[idx], stride[idx]]), axis=1, return_inverse=True)
        group = _group(ctx, keys[1], keys[2], contention)
        out[idx] = np.asarray(collective_time(op, keys[0], group).time_s, dtype=float)[np.ravel(inverse)]
    return out


def context_parallel(ctx: Context, st: Strategies, sh: Shape, cm: Compute) -> Comm:
    """Context-parallel attention per ``cp_comm_type``, exposed per micro-batch (forward + backward).

    With ``T`` local tokens, ``kv`` = this rank's K+V bytes and ``q`` its Q (= O) bytes per layer:

    p2p (ring; Liu et al. 2023 Ring Attention, Megatron-Core CP): ``cp-1`` K/V block exchanges forward
      and ``2(cp-1)`` backward (K/V and dK/dV), each hidden behind one of the ring's ``cp`` equal
      attention steps (a hop longer than its step shows the excess); each
      hop also merges its partial output into the running one (online-softmax rescale of the fp32
      output and statistics, memory-bound, never hidden): ``3(cp-1)`` merges. Traffic ``3(cp-1)·kv``.
    all_gather (Llama 3 paper Sec. 3.3.2; TE ``AttnFuncWithCPAndKVAllGather``): all-gather K and V
      before attention (forward), again in the backward, then reduce-scatter dK and dV; on the critical
      path ("the all-gather communication latency is exposed"), plus the memory-bound reorder / slice
      copies of the gathered K/V (4 passes forward, 7 backward with the full-length dK/dV). The two
      load-balanced query chunks each attend to their whole causal prefix: no merges. Traffic
      ``3(cp-1)·kv`` over NCCL's all-gather / reduce-scatter.
    a2a (DeepSpeed-Ulysses, Jacobs et al. 2023; TE ``AttnFuncWithCPAndQKVOA2A``): all-to-all of Q, K, V
      (sequence-sharded to head-sharded) and of O back; backward O, dO, then dQ, dK, dV. Exposed; each
      all-to-all'd tensor is permuted before and reordered after (2 read+write passes). Traffic
      ``(cp-1)/cp·(5q + 2kv)``; the attention runs once over the whole sequence on heads/cp.
    a2a+p2p (hierarchical CP, TE >= 1.12; USP, Fang & Zhao 2024): the a2a above inside groups of
      ``a`` ranks (``cp_a2a_size``, default the cp ranks of one scale-up domain), a ring of ``cp/a``
      ranks across them on heads/a: ``(a-1)/a·(5q + 2kv) + 3(cp/a-1)·kv``.

    Full recompute's second forward is not counted for any variant (as the ring always was).
    """
    model, tp, cp = ctx.model, sh.tp, sh.cp
    if not np.any(cp > 1):
        return Comm(exposed=np.zeros_like(tp), nbytes=np.zeros_like(tp))
    code = st.cp_comm
    a = cp_a2a_size(ctx, st).astype(float)
    ring = (code == 0) | (code == 3)
    r = cp / a  # ring ranks (cp for p2p)
    group = _group(ctx, r, tp * a, ctx.ring_contention)
    dqk_dv = ctx.kv_width  # workload.kv_width_per_layer
    kv_block, q_block = _cp_blocks(ctx, sh)
    t_hop = np.asarray(collective_time("send_recv", kv_block, group).time_s)  # one K/V block, one hop
    layers_s = cm.layers_s
    attn_f = cm.nd_s * cm.dense["attn"] + cm.nm_s * cm.moe["attn"]
    per_layer_attn = np.where(layers_s > 0, attn_f / np.maximum(layers_s, 1.0), 0.0)
    # the ring runs r attention steps of equal work (with load-balanced causal chunks every step is
    # two of the 2r chunk-by-chunk blocks; TE AttnFuncWithCPAndKVP2P), and each of the first r - 1
    # overlaps only the hop that fetches the next block: a hop longer than its step shows the excess
    # on every step, however short the other steps would have been (no slack carries over a wait).
    # Backward: K/V and dK/dV hops beside 2.5x the forward's attention per step
    step_attn = per_layer_attn / np.maximum(r, 1.0)
    cp_fwd = (r - 1.0) * np.maximum(0.0, t_hop - step_attn)
    cp_bwd = (r - 1.0) * np.maximum(0.0, 2.0 * t_hop - 2.5 * step_attn)
    # each ring step also merges its partial attention output into the running one (online-softmax
    # rescale: read and write the fp32 output and statistics of this rank's queries), a memory-bound
    # pass that no overlap hides: (cp - 1) forward, 2 (cp - 1) backward
    q_heads = float(model.n_heads) / tp
    merge = _hbm_time(ctx, 2.0 * sh.tokens * q_heads * (dqk_dv / 2.0 + 1.0) * 4.0)
    ring_exp = np.where(ring & (r > 1), cp_fwd + cp_bwd + 3.0 * (r - 1.0) * merge, 0.0)
    ring_calls = np.where(ring & (r > 1), sh.m_mb * 3.0 * (r - 1.0) * layers_s, 0.0)
    exposed = ring_exp
    nbytes = np.where(ring, 3.0 * kv_block * (r - 1.0), 0.0)
    charges: list[tuple[Arr | float, str, Arr | float, Any]] = [(ring_calls, "send_recv", kv_block, group)]
    if np.any((code == 1) & (cp > 1)):
        # all-gather K and V (each cp·kv/2 gathered), forward and again backward; reduce-scatter dK, dV
        g_cp = _group(ctx, cp, tp, ctx.ring_contention)
        full = cp * kv_block / 2.0  # one gathered K (or V) buffer
        on = (code == 1) & (cp > 1)
        t_ag = _rows_time(ctx, "all_gather", full, cp, tp, ctx.ring_contention, on)
        t_rs = _rows_time(ctx, "reduce_scatter", full, cp, tp, ctx.ring_contention, on)
        copies = _hbm_time(ctx, 11.0 * cp * kv_block)
        exposed = exposed + np.where(on, 4.0 * t_ag + 2.0 * t_rs + copies, 0.0)
        nbytes = nbytes + np.where(on, 3.0 * (cp - 1.0) * kv_block, 0.0)
        calls = np.where(on, sh.m_mb * layers_s, 0.0)
        charges += [(4.0 * calls, "all_gather", full, g_cp), (2.0 * calls, "reduce_scatter", full, g_cp)]
    if np.any(a > 1):
        # Ulysses all-to-all inside groups of a ranks (stride tp): Q, K, V, O forward (2 q-sized and 2
        # kv/2-sized calls), O, dO, dQ, dK, dV backward (3 and 2); dense jobs have no simulated
        # all-to-all contention, so the fabric's ring slowdown stands in
        contention = max(ctx.a2a_contention, ctx.ring_contention)
        g_a = _group(ctx, a, tp, contention)
        on = a > 1
        t_q = _rows_time(ctx, "all_to_all", q_block, a, tp, contention, on)
        t_k = _rows_time(ctx, "all_to_all", kv_block / 2.0, a, tp, contention, on)
        copies = _hbm_time(ctx, 4.0 * (5.0 * q_block + 2.0 * kv_block))
        exposed = exposed + np.where(on, 5.0 * t_q + 4.0 * t_k + copies, 0.0)
        nbytes = nbytes + np.where(on, (a - 1.0) / a * (5.0 * q_block + 2.0 * kv_block), 0.0)
        calls = np.where(on, sh.m_mb * layers_s, 0.0)
        charges += [(5.0 * calls, "all_to_all", q_block, g_a), (4.0 * calls, "all_to_all", kv_block / 2.0, g_a)]
    return Comm(
        exposed=np.where(cp > 1, exposed * layers_s, 0.0),
        nbytes=np.where(cp > 1, nbytes * layers_s, 0.0),
        charges=tuple(charges),
    )


def expert_parallel(ctx: Context, st: Strategies, sh: Shape, cm: Compute) -> Comm:
    """MoE dispatch + combine all-to-all forward and backward, tokens·top_k·h bytes each; EP beyond
    dp·cp folds over the tp ranks with whole experts. Exposed per micro-batch."""
    model, tp, cp, ep = ctx.model, sh.tp, sh.cp, sh.ep
    B = ctx.act_bytes
    charges: tuple[tuple[Arr | float, str, Arr | float, Any], ...] = ()
    if sh.has_moe and model.moe is not None:
        k_top = float(model.moe.top_k)
        group = _group(ctx, ep, np.where(sh.folded, 1.0, tp * cp), ctx.a2a_contention)
        # node-deduplicated dispatch (DeepEP normal mode; DeepSeek-V3 Sec. 3.2.2): a token crosses the
        # fabric once per remote domain that holds one of its top-k experts, then NVLink forwards it to
        # the expert ranks there; a plain all-to-all sends k(N-1)/N copies. The distinct domains per
        # token come from the model's routing (node-limited routing caps them at M; _distinct_domains),
        # the same share (N-1)/N of them remote as of the plain copies
        n_dom = np.maximum(1.0, ep / np.asarray(group.per_domain, dtype=float))
        dedup = np.where(st.deepep & (n_dom > 1), _distinct_domains(ctx, n_dom) / k_top, 1.0)
        # HybridEP's RDMA path between domains has its own measured rate (calibration hybridep_rdma_share*)
        group = replace(group, remote_dedup=dedup, hybridep=np.where(st.hybridep & (n_dom > 1), 1.0, 0.0))
        # FP8 dispatch (DeepSeek-V3 Sec. 3.3; switch ep_dispatch_fp8): the forward dispatch moves
        # 1-byte activations, the combine and both backward passes 2-byte ones. Megatron-Core hands
        # DeepEP / HybridEP its BF16 hidden states, so its dispatch stays at act_bytes
        bytes_scale = np.where(st.deepep & st.dispatch_fp8 & ctx.fp8, (1.0 + 3.0 * B) / (4.0 * B), 1.0)
        a2a_bytes = sh.tokens / np.where(st.sp, tp, 1.0) * k_top * float(model.hidden) * B * bytes_scale
        # GShard's einsum dispatch exchanges the experts' capacity buffers, padding included (einsum_dispatch_time)
        if np.any(st.einsum):
            a2a_bytes = a2a_bytes * np.where(st.einsum, routing_imbalance(ctx, sh.tokens, ep), 1.0)
        t_a2a = np.asarray(collective_time("all_to_all", a2a_bytes, group).time_s)
        passes = 4.0 + 2.0 * cm.rec_moe
        total = np.where(ep > 1, t_a2a * passes * cm.nm_s, 0.0)
        nbytes = np.where(ep > 1, a2a_bytes * (ep - 1) / ep * passes * cm.nm_s, 0.0)
        charges = ((np.where(ep > 1, sh.m_mb * passes * cm.nm_s, 0.0), "all_to_all", a2a_bytes, group),)
    else:
        total = np.zeros_like(tp)
        nbytes = np.zeros_like(tp)
    # with batch-level overlap (DualPipe; MCore --overlap-moe-expert-parallel-comm) the all-to-all
    # of one micro-batch hides behind the other's compute, down to a floor share. Only paired
    # micro-batches overlap: the forward of one runs beside the backward of another, so the pipeline's
    # warm-up forwards and cool-down backwards (pp - 1 micro-batches' worth; without a pipeline the
    # first forward and the last backward, one) run alone (DeepSeek-V3 Sec. 3.2.1 and Fig. 5: the
    # overlapped chunk pairs sit between DualPipe's warm-up and cool-down; Megatron-Core's combined
    # 1F1B schedule pairs the steady-state forward and backward only). The window is the paired
    # micro-batch's whole MoE-layer time on the compute stream: GEMMs, casts, attention and the
    # memory-bound kernels (norms, permutation, activation) and their launch gaps, all of which the
    # all-to-all on its own stream runs beside (Megatron-Core's combined schedule splits each layer
    # into attention / dispatch / MLP / combine and overlaps one's communication with another's compute)
    moe_compute = cm.nm_s * (
        3.0 * cm.moe["gemm"]
        + cm.moe["cast_f"]
        + cm.moe["cast_b"]
        + cm.moe["attn"]
        + 2.5 * cm.moe["attn_b"]
        + 3.0 * cm.moe["elem"]
    )
    plain_exp = total * (1.0 - ctx.cal.ep_overlap_hidden)
    # shared-expert overlap (Megatron-Core --moe-shared-expert-overlap; DeepSeek-V2 Sec. 3.1.3): the shared
    # experts run on a side stream, FC1 and the activation beside the dispatch and FC2 beside the combine,
    # forward and backward (megatron/core/transformer/moe/shared_experts.py), so the all-to-all shows only
    # where it outlasts their compute (forward + backward, 3x the forward GEMMs)
    if sh.has_moe and np.any(st.shared_overlap):
        shared_compute = cm.nm_s * 3.0 * cm.moe["shared"]
        plain_exp = np.where(st.shared_overlap, np.maximum(plain_exp - shared_compute, 0.0), plain_exp)
    alone = np.minimum(1.0, np.maximum(sh.pp - 1.0, 1.0) / sh.m_mb)
    overlapped = np.maximum(ctx.cal.ep_overlap_floor * total, total - moe_compute)
    overlapped = alone * plain_exp + (1.0 - alone) * overlapped
    return Comm(
        exposed=np.where(st.ep_overlap, np.minimum(plain_exp, overlapped), plain_exp), nbytes=nbytes, charges=charges
    )


# ---------------------------------------------------------------- pipeline
def pipeline(ctx: Context, st: Strategies, sh: Shape, cm: Compute, comm_mb: Arr) -> tuple[Arr, Comm]:
    """The bubble and the p2p transfers of the pipeline schedule. Returns (bubble, p2p per step).

    1F1B idles (pp - 1) slowest-chunk times in warm-up and cool-down (Narayanan et al. 2021), each with
    its share of the micro-batch's exposed TP/CP/EP communication. DualPipe (DeepSeek-V3 Table 2):
    (PP/2 - 1)(F&B + B - 3W) with F&B the overlapped forward+backward pair, B the full backward, W its
    weight-gradient half. ZB-H1 (Qi et al. 2023, Table: 1F1B (p - 1)(F + B + W), ZB-H1 (p - 1)(F + B - W)
    with B the input-gradient half of the backward): the deferred weight gradients fill the cool-down,
    which takes 2W off each of the p - 1 idle chunk times.
    """
    tp, pp, v, m_mb = sh.tp, sh.pp, sh.v, sh.m_mb
    one_f1b = (pp - 1.0) * (cm.chunk_max + comm_mb / v)
    fb = np.maximum(cm.t_fwd + 2.0 * cm.t_bwd + cm.t_rec - 3.0 * cm.w_grad, 0.0)
    dual = np.maximum(pp / 2.0 - 1.0, 0.0) * (fb + comm_mb)
    zb = one_f1b - (pp - 1.0) * np.minimum(2.0 * cm.w_grad, cm.chunk_max)  # 2W off each idle chunk time
    bubble = np.where(pp > 1, np.where(st.dualpipe, dual, np.where(st.zero_bubble, zb, one_f1b)), 0.0)
    group = _group(ctx, np.full_like(tp, 2.0), tp * sh.cp * sh.dp, ctx.ring_contention)
    # a pipeline boundary carries one micro-batch's s·b·h activation; with sequence parallelism it is
    # already split over tp, and Megatron's scatter/gather splits it otherwise; DeepSpeed's
    # PipelineEngine sends it whole from every tensor-parallel rank
    p2p_bytes = sh.tokens * float(ctx.model.hidden) * ctx.act_bytes / np.where(st.sp | st.pp_scatter, tp, 1.0)
    t_p2p = np.asarray(collective_time("send_recv", p2p_bytes, group).time_s)
    # blocking p2p (Megatron-LM 2021, DeepSpeed's PipelineEngine): every send/recv of the schedule
    # sits on the critical path. Asynchronous p2p (Megatron-Core overlap_p2p_comm) runs beside the
    # next chunk's compute: only the pipeline fill and drain hops show, plus any transfer longer
    # than the chunk it hides behind.
    blocking = ctx.cal.pp_p2p_exposed * 2.0 * v * (m_mb + pp - 1.0) * t_p2p
    async_ = 2.0 * (pp - 1.0) * t_p2p + 2.0 * v * m_mb * np.maximum(0.0, t_p2p - cm.t_fwd / v)
    # Megatron-Core overlaps p2p only in the interleaved schedule: its non-interleaved 1F1B raises
    # "Non-interleaved pipeline parallelism does not support overlapping p2p communication" and waits
    # on every send/recv (schedules.py forward_backward_pipelining_without_interleaving,
    # p2p_communication.py _communicate(wait_on_reqs=True); Megatron-Core 0.16), so at vpp 1 its p2p
    # blocks whatever pp_comm_overlap says; a framework with its own pipeline code keeps the switch
    overlap = st.pp_overlap & ((v > 1) | (not ctx.splits.megatron))
    p2p = Comm(
        exposed=np.where(pp > 1, np.where(overlap, async_, blocking), 0.0),
        nbytes=np.where(pp > 1, 2.0 * v * m_mb * p2p_bytes, 0.0),
        charges=((np.where(pp > 1, 2.0 * v * m_mb, 0.0), "send_recv", p2p_bytes, group),),
    )
    return bubble, p2p


# ---------------------------------------------------------------- parameters, data parallelism, optimizer
def _layer_mixer_params(ctx: Context) -> float:
    """Parameters every layer has: attention and its two norms."""
    return float(ctx.params.attention_per_layer + 2 * ctx.model.hidden)


def _layer_dense_params(ctx: Context) -> float:
    """Parameters of one dense layer: attention, its two norms and the MLP."""
    return _layer_mixer_params(ctx) + float(ctx.params.dense_ffn_per_layer)


def stage_params(ctx: Context, sh: Shape, nd: Arr, nm: Arr, emb: Arr | float) -> tuple[Arr, Arr]:
    """(non-expert, expert) parameters on one GPU of a pipeline stage of ``nd`` dense and ``nm`` MoE
    layers that also holds ``emb`` embedding / output-head parameters (split over tp; experts over
    ep·etp)."""
    P = ctx.params
    layer_dense = _layer_dense_params(ctx)
    layer_moe_nonexpert = _layer_mixer_params(ctx) + float(P.shared_experts_per_layer + P.router_per_layer)
    nonexpert = nd * layer_dense + nm * layer_moe_nonexpert
    nonexpert = nonexpert + emb
    expert = nm * float(P.expert * P.experts_per_layer) / (sh.ep * sh.etp)
    return np.asarray(nonexpert / sh.tp), np.asarray(expert)


def params(ctx: Context, st: Strategies, sh: Shape, cm: Compute) -> Params:
    """Parameters of the busiest stage on one GPU, and the data-parallel groups over which ZeRO shards
    them: all dp·cp ranks, or groups of ``zero_shard_group`` (hybrid sharding: FSDP HYBRID_SHARD,
    MiCS, Megatron-Core partial distributed optimizer), replicated across groups."""
    P = ctx.params
    tp, pp, ep, etp = sh.tp, sh.pp, sh.ep, sh.etp
    emb = float(max(P.embedding, P.output))
    p_dense, p_expert = stage_params(ctx, sh, cm.nd_s, cm.nm_s, np.where(pp > 1, emb, float(P.embedding + P.output)))
    p_dense_layers = stage_params(ctx, sh, cm.nd_s, cm.nm_s, 0.0)[0]
    dpc = sh.dp * sh.cp
    edp = np.maximum(1.0, tp * dpc / (ep * etp))  # expert-data-parallel replicas of each expert shard
    e_stride = etp * ep * np.where(sh.folded, 1.0, sh.cp)
    hybrid = (st.shard > 0) & (st.zero >= 1)
    g = np.where(hybrid, np.minimum(st.shard, dpc), dpc)
    g_e = np.where(hybrid, np.minimum(st.shard, edp), edp)
    rep, rep_e = dpc / g, edp / g_e
    rc = ctx.ring_contention
    dp_group = _group(ctx, dpc, tp, rc)
    edp_group = _group(ctx, edp, e_stride, rc) if sh.has_moe else dp_group  # experts only
    if np.any(hybrid):
        shard_groups = {
            "shard": _group(ctx, g, tp, rc),
            "eshard": _group(ctx, g_e, e_stride, rc),
            "rep": _group(ctx, rep, tp * g, rc),
            "erep": _group(ctx, rep_e, e_stride * g_e, rc),
        }
    else:  # no hybrid sharding in the batch: the shard groups are the data-parallel groups
        single = _group(ctx, np.ones_like(dpc), tp, rc)
        shard_groups = {"shard": dp_group, "eshard": edp_group, "rep": single, "erep": single}
    return Params(
        p_dense=p_dense,
        p_expert=p_expert,
        p_dense_layers=p_dense_layers,
        layer_dense=_layer_dense_params(ctx),
        dpc=dpc,
        edp=edp,
        hybrid=hybrid,
        g=g,
        g_e=g_e,
        rep=rep,
        rep_e=rep_e,
        groups={"dp": dp_group, "edp": edp_group, **shard_groups},
    )


GRAD_BYTES = 4.0  # fp32 main-grad reduction (Megatron --accumulate-allreduce-grads-in-fp32)
PARAM_BYTES = 2.0
# Scale bytes per element of an FP8 weight copy: MXFP8 one E8M0 scale per 32 elements along the copy's
# contraction axis (OCP Microscaling Formats spec v1.0); blockwise FP8 one fp32 scale per 128x128 weight block
# (DeepSeek-V3 report Sec. 3.3.1; Transformer Engine Float8BlockScaling quantizes weights in 2-D blocks);
# per-tensor scaling one scalar per tensor (nothing per element)
_FP8_WEIGHT_SCALE_BYTES = {"mxfp8": 1.0 / 32.0, "fp8_blockwise": 4.0 / (128.0 * 128.0)}


def fp8_gemm_weights(ctx: Context) -> bool:
    """Whether the layers' GEMM weights are quantized to FP8: an FP8 precision the GPU runs natively (an
    FP4 run's weights are NVFP4, which neither FP8 parameters nor FP8 weight caches describe)."""
    return bool(ctx.fp8 and ctx.training.precision == "fp8")


def fp8_weight_bytes(ctx: Context) -> float:
    """Bytes per element of a GEMM weight held in FP8 for the forward and the backward GEMMs: the row-wise
    copy the forward reads and the column-wise copy the data-gradient GEMM reads.

    Transformer Engine keeps both usages of a weight quantized for training (module/linear.py: the weight
    quantizer's ``set_usage(rowwise=True, columnwise=...)`` whenever the input needs a gradient). Under
    per-tensor scaling (delayed or current) the column-wise usage is a transposed copy where FP8 GEMMs
    need TN layouts (Hopper) and the row-wise data itself where they take any layout (catalog
    ``fp8_gemm_any_layout``; Float8TensorStorage.update_usage drops the transpose when
    is_non_tn_fp8_gemm_supported). MXFP8 and blockwise FP8 always keep two copies, each quantized along
    its own axis with its own scales (MXFP8Tensor / Float8BlockwiseQTensor row-wise and column-wise data)."""
    recipe = ctx.training.precision_recipe or ""
    if recipe in _FP8_WEIGHT_SCALE_BYTES:
        return 2.0 * (1.0 + _FP8_WEIGHT_SCALE_BYTES[recipe])
    return 1.0 if ctx.acc.fp8_gemm_any_layout else 2.0


def param_gather_bytes(ctx: Context, st: Strategies, pr: Params) -> tuple[Arr, Arr]:
    """Bytes per parameter of the data-parallel parameter all-gather, (non-expert, routed-expert).

    BF16 weights gather in BF16. With FP8 parameters (``fp8_param_gather``) Megatron-Core keeps each FP8
    weight's data in a uint8 parameter buffer and gathers it there, 1 byte per FP8 weight
    (distributed/param_and_grad_buffer.py: ``param_dtype = torch.uint8`` for an FP8 parameter; the
    per-tensor scales follow from an amax all-reduce, a few bytes per tensor, not charged); the embedding
    and output head stay BF16 parameters, gathered in BF16. Under MXFP8 the FP8 storage cannot be mapped
    into the parameter buffer: the distributed optimizer copies its fp32 shard into a BF16 view of the
    gradient buffer, which is gathered and then quantized into each MXFP8 weight
    (``reuse_grad_buf_for_mxfp8_param_ag``, which Megatron-Bridge's MXFP8 presets set with
    fp8_param_gather; optimizer/distrib_optimizer.py _copy_main_params_to_param_buffer, Megatron-Core
    0.13+), so that all-gather stays 2 bytes per parameter."""
    on = st.fp8_params & fp8_gemm_weights(ctx) & (ctx.training.precision_recipe != "mxfp8")
    fp8_b = 1.0
    share = pr.p_dense_layers / np.maximum(pr.p_dense, 1.0)
    dense = np.where(on, PARAM_BYTES - (PARAM_BYTES - fp8_b) * share, PARAM_BYTES)
    expert = np.where(on, fp8_b, PARAM_BYTES)
    return np.asarray(dense), np.asarray(expert)


def data_parallel(ctx: Context, st: Strategies, sh: Shape, cm: Compute, pr: Params) -> Comm:
    """Gradient reduction and parameter gathering per ZeRO stage, exposed per step.

    ZeRO-0 all-reduces once per step; ZeRO-1 (Megatron distributed optimizer) reduce-scatters and
    all-gathers once per step; ZeRO-2 keeps only its gradient shard, so with gradient accumulation
    every micro-batch's gradients are reduce-scattered into it (DeepSpeed stage 2); ZeRO-3 / FSDP
    gathers the parameters before every micro-batch's forward and backward (and the recompute) and
    reduce-scatters its gradients (Rajbhandari et al. 2020). Hybrid sharding adds one all-reduce of
    the gradient shard across the shard groups per step.
    """
    v, pp, m_mb = sh.v, sh.pp, sh.m_mb
    z, c = st.zero, ctx.cal
    zero_t = np.zeros_like(sh.tp)
    gr = pr.groups
    # gradients reduced in fp32 (grad_reduce_in_fp32) or in the parameters' bf16
    grad_b = np.where(st.grad_fp32, GRAD_BYTES, PARAM_BYTES)
    bucket = np.where(
        z == 3, c.zero3_bucket_params, np.maximum(c.dp_bucket_params, c.dp_bucket_params_per_rank * pr.dpc)
    )
    nb_dense = np.maximum(1.0, np.ceil(pr.p_dense / bucket))

    def dp_op(op: str, p: Arr, nbytes_per_param: Arr | float, group: Any, n: Arr) -> Arr:
        # the collective runs once per bucket; latency terms add up over buckets
        nb = np.maximum(1.0, np.ceil(p / bucket))
        t = np.asarray(collective_time(op, p / nb * nbytes_per_param, group).time_s) * nb
        return np.asarray(np.where((n > 1) & (p > 0), t, 0.0))

    def dp_both(
        op: str,
        nbytes_per_param: Arr | float | tuple[Arr, Arr],
        needed: bool,
        kind: str,
        scale: Arr | float = 1.0,
    ) -> Arr:
        # dense parameters over their group, routed experts over the expert-data-parallel one (bytes per
        # parameter one for both, or a (dense, expert) pair); skipped (zero) when no strategy in the batch
        # needs this collective
        if not needed:
            return zero_t
        table: dict[str, tuple[Any, Any, Arr, Arr, Arr | float]] = {
            "full": (gr["dp"], gr["edp"], pr.dpc, pr.edp, 1.0),
            "shard": (gr["shard"], gr["eshard"], pr.g, pr.g_e, 1.0),
            "rep": (gr["rep"], gr["erep"], pr.rep, pr.rep_e, 1.0 / pr.g_e),
        }
        dense_g, exp_g, n, n_e, s_e = table[kind]
        b_d, b_e = nbytes_per_param if isinstance(nbytes_per_param, tuple) else (nbytes_per_param,) * 2
        t = dp_op(op, pr.p_dense * scale, b_d, dense_g, n)
        return t + dp_op(op, pr.p_expert * s_e, b_e, exp_g, n_e) if sh.has_moe else t

    # the overlap windows. ZeRO-0/1 reduce once per step: a bucket's gradients are final after the
    # last micro-batch's backward, so the reduction hides behind that backward; with v model chunks
    # per stage a chunk's reduction also hides behind the later chunks' backward of the cooldown
    # (Megatron-Core overlap_grad_reduce per chunk), at most the whole step's backward. Likewise the
    # parameter all-gather of the next step hides behind the first micro-batches' forward.
    spread = np.minimum(1.0 + (v - 1.0) * np.minimum(m_mb, pp), m_mb * v)
    bwd_mb = cm.t_bwd + cm.t_rec  # one micro-batch's backward (and its recompute) on this stage
    win_b = bwd_mb / v * spread
    win_f = cm.t_fwd / v * spread

    # Megatron-Core never splits a parameter between buckets: it walks the parameters in backward order and
    # closes a bucket once it holds bucket_size elements (distributed/param_and_grad_buffer.py), so the
    # word embedding, the first parameter of the first stage's forward and its last gradient, sits whole
    # in that stage's last gradient bucket and in its first gathered one. Its reduce-scatter can start only
    # when that backward ends, and the forward cannot start before its gather: both show in full.
    emb_local = np.asarray(float(ctx.params.embedding) / sh.tp)

    def last_bucket(op: str, nbytes_per_param: float | Arr, kind: str) -> Arr:
        group, n = (gr["dp"], pr.dpc) if kind == "full" else (gr["shard"], pr.g)
        return dp_op(op, np.maximum(emb_local, 1.0), nbytes_per_param, group, n)

    def exposed(t: Arr, window: Arr, floor: float = c.dp_exposed_floor, last: Arr | float = 0.0) -> Arr:
        # overlapped buckets hide behind the window; the last bucket (at least the embedding's) and a
        # floor share for stream contention always show
        tail = np.maximum(t / nb_dense, np.minimum(last, t))
        return np.asarray(np.where(st.dp_overlap, np.maximum(np.maximum(floor * t, tail), t - window), t))

    if ctx.training.optimizer == "muon":
        return _layer_wise_dp(st, sh, pr, dp_both, exposed, win_b, grad_b)
    t_ar = dp_both("all_reduce", grad_b, bool(np.any(z == 0)), "full")
    t_rs = dp_both("reduce_scatter", grad_b, bool(np.any(z >= 1)), "shard")
    # parameters gathered in BF16, or FP8 parameters in FP8 (fp8_param_gather)
    ag_d, ag_e = param_gather_bytes(ctx, st, pr)
    t_ag = dp_both("all_gather", (ag_d, ag_e), bool(np.any(z >= 1)), "shard")
    t_rep = dp_both("all_reduce", grad_b, bool(np.any(pr.hybrid)), "rep", 1.0 / pr.g)
    dp_z0 = exposed(t_ar, win_b, last=last_bucket("all_reduce", grad_b, "full") if np.any(z == 0) else 0.0)
    emb_rs = last_bucket("reduce_scatter", grad_b, "shard") if np.any(z >= 1) else 0.0
    emb_ag = last_bucket("all_gather", PARAM_BYTES, "shard") if np.any(z >= 1) else 0.0
    # Megatron-Core aligns the distributed optimizer's parameter all-gather across pipeline stages only
    # with interleaving (align_param_gather: Megatron-LM turns it off without interleaving, arguments.py;
    # Megatron-Bridge sets it for pp > 1 with vpp > 1, comm_overlap.py): then the schedule dispatches
    # every stage's gathers when the step starts, beside the warm-up. Without it a stage dispatches its
    # first bucket in the forward pre-hook of its first micro-batch (param_and_grad_buffer.py
    # finish_param_sync: "first AG bucket in first model chunk if ddp_config.align_param_gather is
    # False"; distributed_data_parallel.py _make_forward_pre_hook), which it reaches only after the stages
    # before it have run that micro-batch, so each stage's exposed gather sits on the warm-up's critical
    # path: pp of them in a row. (Without overlap the gather runs in the optimizer step, all at once.)
    unaligned = (pp > 1) & (v <= 1) & st.dp_overlap & ctx.splits.megatron
    dp_z1 = exposed(t_rs, win_b, last=emb_rs) + exposed(t_ag, win_f, last=emb_ag) * np.where(unaligned, pp, 1.0)
    # ZeRO-2: a micro-batch's reduce-scatter runs on the communication stream while the next
    # micro-batch computes (DeepSpeed overlap_comm; FSDP's reduce-scatter stream), so it hides
    # behind one micro-batch's forward and backward
    dp_z2 = dp_z1 + (m_mb - 1.0) * exposed(t_rs, cm.t_fwd + bwd_mb, 0.0)
    # ZeRO-3: each collective hides at most behind its own micro-batch's forward or backward;
    # prefetching hides every bucket but the first
    n_ag_bwd = 1.0 + cm.rec_full
    dp_z3 = m_mb * (exposed(t_ag, cm.t_fwd, 0.0) + exposed(n_ag_bwd * t_ag + t_rs, bwd_mb, 0.0))
    dp_exposed = np.where(z == 0, dp_z0, np.where(z == 3, dp_z3, np.where(z == 2, dp_z2, dp_z1)))
    dp_exposed = dp_exposed + np.where(pr.hybrid, exposed(t_rep, win_b), 0.0)
    # collectives per step
    n_rs = np.where(z == 0, 0.0, np.where(z >= 2, m_mb, 1.0))
    n_ag = np.where(z == 0, 0.0, np.where(z == 3, m_mb * (1.0 + n_ag_bwd), 1.0))
    n_ar = np.where(z == 0, 1.0, 0.0)
    dpc, g, p_local = pr.dpc, pr.g, pr.p_local
    ag_bytes = pr.p_dense * ag_d + pr.p_expert * ag_e
    nbytes = (
        n_ar * 2.0 * p_local * grad_b * np.where(dpc > 1, (dpc - 1) / dpc, 0.0)
        + (n_rs * p_local * grad_b + n_ag * ag_bytes) * np.where(g > 1, (g - 1) / g, 0.0)
        + np.where(pr.hybrid, 2.0 * pr.p_shard * grad_b * (pr.rep - 1.0) / pr.rep, 0.0)
    )
    charges: list[tuple[Arr | float, str, Arr | float, Any]] = []
    for count, op, per_d, per_e, dense_g, exp_g in (
        (n_ar, "all_reduce", grad_b, grad_b, gr["dp"], gr["edp"]),
        (n_rs, "reduce_scatter", grad_b, grad_b, gr["shard"], gr["eshard"]),
        (n_ag, "all_gather", ag_d, ag_e, gr["shard"], gr["eshard"]),
    ):
        charges.append((count, op, pr.p_dense * per_d, dense_g))
        if sh.has_moe:
            charges.append((count, op, pr.p_expert * per_e, exp_g))
    once = np.where(pr.hybrid, 1.0, 0.0)
    charges.append((once, "all_reduce", pr.p_dense / pr.g * grad_b, gr["rep"]))
    if sh.has_moe:
        charges.append((once, "all_reduce", pr.p_expert / pr.g_e * grad_b, gr["erep"]))
    return Comm(exposed=dp_exposed, nbytes=nbytes, charges=tuple(charges))


def _layer_wise_dp(
    st: Strategies, sh: Shape, pr: Params, dp_both: Any, exposed: Any, win_b: Arr, grad_b: Arr | float
) -> Comm:
    """Data-parallel traffic of Muon as Megatron-Core runs it (training.optimizer muon).

    Gradients are all-reduced once per step over the dp·cp ranks (routed experts over their
    expert-data-parallel ranks), overlapped with the backward as ZeRO-0's are: Megatron-Bridge v0.5.0
    recipes/kimi/kimi_k2.py sets use_distributed_optimizer False for Muon ("Muon needs this to be
    False") with overlap_grad_reduce True, and LayerWiseDistributedOptimizer leaves the all-reduce to
    Megatron DDP (NVIDIA/Megatron-LM megatron/core/optimizer/layer_wise_optimizer.py, class docstring
    steps 2-6). With zero 1 (the layer-wise distributed optimizer) each rank then steps only the whole
    parameters it owns and all-gathers the updated ones in the parameters' BF16 after the step
    (``allgather_params``); the preset sets overlap_param_gather False ("Muon needs this to be False"),
    so that all-gather is exposed whole. It is timed as a ring all-gather of equal shares, a lower
    bound for the uneven per-rank sizes PyTorch's NCCL backend sends as grouped send/recv. With zero 0
    every rank steps everything: no all-gather.
    """
    lw = st.zero >= 1
    t_ar = dp_both("all_reduce", grad_b, True, "full")
    t_ag = dp_both("all_gather", PARAM_BYTES, bool(np.any(lw)), "full")
    dp_exposed = exposed(t_ar, win_b) + np.where(lw, t_ag, 0.0)
    n_ar = np.ones_like(sh.tp)
    n_ag = np.where(lw, 1.0, 0.0)
    gr = pr.groups
    frac_d = np.where(pr.dpc > 1, (pr.dpc - 1.0) / pr.dpc, 0.0)
    frac_e = np.where(pr.edp > 1, (pr.edp - 1.0) / pr.edp, 0.0)
    per = 2.0 * grad_b * n_ar + PARAM_BYTES * n_ag
    nbytes = pr.p_dense * per * frac_d + (pr.p_expert * per * frac_e if sh.has_moe else 0.0)
    charges: list[tuple[Arr | float, str, Arr | float, Any]] = []
    for count, op, per_param in ((n_ar, "all_reduce", grad_b), (n_ag, "all_gather", PARAM_BYTES)):
        charges.append((count, op, pr.p_dense * per_param, gr["dp"]))
        if sh.has_moe:
            charges.append((count, op, pr.p_expert * per_param, gr["edp"]))
    return Comm(exposed=np.asarray(dp_exposed), nbytes=np.asarray(nbytes), charges=tuple(charges))


def optimizer_shard(st: Strategies, pr: Params) -> Arr:
    """Parameters whose optimizer state this rank holds (ZeRO >= 1 shards it over the shard group)."""
    return np.asarray(
        pr.p_dense / np.where(st.zero >= 1, pr.g, 1.0) + pr.p_expert / np.where(st.zero >= 1, pr.g_e, 1.0)
    )


def optimizer(ctx: Context, st: Strategies, pr: Params) -> Arr:
    """Adam update over the local shard, bound by HBM bandwidth."""
    return _hbm_time(ctx, optimizer_shard(st, pr) * ctx.cal.optimizer_bytes_per_param)


MUON_NS_STEPS = 5  # Megatron-Bridge v0.5.0 distributed_muon_with_cosine_annealing muon_num_ns_steps=5


def _ns_time(ctx: Context, rows: Arr, cols: Arr) -> Arr:
    """Newton-Schulz orthogonalization of one ``rows`` x ``cols`` matrix on one GPU.

    Each of the quintic iterations (NVIDIA-NeMo/Emerging-Optimizers orthogonalized_optimizers/
    muon_utils.py ``newton_schulz_step``, on the matrix transposed so that m <= n) computes A = X Xᵀ
    (2·m²·n FLOPs), B = b·A + c·A·A (2·m³) and X = a·X + B·X (2·m²·n): 4·m²·n + 2·m³ per iteration
    (Jordan et al. 2024, "Muon"; Liu et al. 2025, "Muon is Scalable for LLM Training", arXiv
    2502.16982). Megatron-Bridge sets muon_fp32_matmul_prec "medium", under which ``newton_schulz``
    casts X to BF16 and runs the iterations with BF16 GEMMs, so each GEMM runs at the BF16 rate and
    its shape's efficiency.
    """
    m, n = np.minimum(rows, cols), np.maximum(rows, cols)
    peak = ctx.bf16_peak
    gram = 2.0 * m * m * n / (peak * _gemm_eff(ctx, m, m, n))
    poly = 2.0 * m * m * m / (peak * _gemm_eff(ctx, m, m, m))
    apply = 2.0 * m * m * n / (peak * _gemm_eff(ctx, m, n, m))
    return np.asarray(MUON_NS_STEPS * (gram + poly + apply))


def _muon_local(ctx: Context, sh: Shape, g: Gemm) -> tuple[Arr, Arr]:
    """This rank's block of a Muon matrix: Megatron-Core's muon_tp_mode "blockwise" (the
    OptimizerConfig default, set by Megatron-Bridge) orthogonalizes each tensor-parallel shard on its
    own, without gathering (emerging_optimizers.py TensorParallelMuon.orthogonalize: partition_dim
    None); routed experts split over the expert tensor-parallel ranks as their GEMMs are."""
    return local_dims(g, float(g.n) + 0.0 * sh.tp, float(g.k) + 0.0 * sh.tp, sh.tp, sh.etp)


def newton_schulz(ctx: Context, st: Strategies, sh: Shape, cm: Compute, pr: Params) -> Arr:
    """Muon's Newton-Schulz time per step on the busiest rank (training.optimizer muon).

    The matrices are those of the timing's busiest stage (:func:`muon_matrices`). With zero 1 the
    layer-wise distributed optimizer gives each data-parallel rank whole parameters, dense ones over
    the dp·cp ranks and routed experts over their expert-data-parallel ranks (an expert not replicated
    across ranks is orthogonalized by its owner), balanced by size (Megatron-Core
    layer_wise_optimizer.py ``_shard_params_ping_pong``), so a rank does 1/group of the work and at
    least the largest matrix. With zero 0 every rank orthogonalizes all its matrices.
    """
    model = ctx.model
    zero = 0.0 * sh.tp

    def kind_time(kind: LayerKind) -> tuple[Arr, Arr, Arr, Arr]:
        """(non-expert total, its largest matrix, routed-expert total per layer, its largest)."""
        t_d, max_d, t_e, max_e = zero, zero, zero, zero
        for g in muon_matrices(model, kind):
            t = _ns_time(ctx, *_muon_local(ctx, sh, g))
            if g.expert:
                assert model.moe is not None
                t_e = t_e + t * float(model.moe.n_experts) / sh.ep
                max_e = np.maximum(max_e, t)
            else:
                t_d = t_d + g.share * t
                max_d = np.maximum(max_d, t)
        return t_d, max_d, t_e, max_e

    dd, dd_max, _, _ = kind_time("dense")
    nd, nm = cm.nd_s, cm.nm_s
    t_dense, t_exp = nd * dd, zero
    big_d, big_e = np.where(nd > 0, dd_max, 0.0), zero
    if model.moe is not None:
        md, md_max, me, me_max = kind_time("moe")
        t_dense = t_dense + nm * md
        t_exp = nm * me
        big_d = np.maximum(big_d, np.where(nm > 0, md_max, 0.0))
        big_e = np.where(nm > 0, me_max, 0.0)
    lw = st.zero >= 1
    share_d = np.where(lw, np.maximum(t_dense / pr.dpc, big_d), t_dense)
    share_e = np.where(lw, np.maximum(t_exp / pr.edp, big_e), t_exp)
    return np.asarray(share_d + share_e)


def muon_params_per_gpu(ctx: Context, sh: Shape, nd: Arr, nm: Arr) -> Arr:
    """Non-expert parameters on one GPU of a stage of ``nd`` dense and ``nm`` MoE layers that Muon
    steps (the rest of :func:`stage_params`' non-expert count, embeddings, LM head and norms, stays with
    AdamW; every routed-expert parameter is a Muon matrix)."""
    model = ctx.model
    total = nd * muon_param_elems(model, "dense") + (
        nm * muon_param_elems(model, "moe") if model.moe is not None else 0.0
    )
    return np.asarray(total / sh.tp)


# ---------------------------------------------------------------- links and conservation
def links(ctx: Context, sh: Shape, cm: Compute, comms: dict[str, Comm], exposed: dict[str, Arr]) -> Links:
    """Busy time of each GPU link per concern, and the exposed communication after conservation.

    On every link the exposed communication is at least the link's busy time less the compute that
    can overlap it. Each concern's exposed time is split over the links in proportion to its busy
    time there; a link's shortfall is charged to the concerns that use it, in proportion to their
    share of it (concurrent collectives share the link). SMs are shared too: a collective hidden
    behind compute takes ``comm_sm_share`` of the SMs, so the compute beside it runs longer.
    """
    zero_t = np.zeros_like(sh.tp)
    busy: dict[str, dict[str, Arr]] = {k: {c: zero_t for c in COMM_KEYS} for k in LINKS}
    memo: dict[int, Any] = {}  # per group (the groups live while this runs)
    for cat, comm in comms.items():
        for count, op, nbytes, group in comm.charges:
            if not np.any(count):
                continue  # no strategy in the batch runs this collective
            up, nic = _link_time(ctx, op, nbytes, group, memo)
            busy["scale_up"][cat] = busy["scale_up"][cat] + count * up
            busy["nic"][cat] = busy["nic"][cat] + count * nic
    window = sh.m_mb * (cm.t_fwd + cm.t_bwd + cm.t_rec)
    out = dict(exposed)
    # a concern no strategy charges to any link (its busy time the zero array itself) has share 0 on
    # every link: multiplying by 0.0 gives the same bits as the shares' where() would
    idle = {q for q in COMM_KEYS if all(busy[k][q] is zero_t for k in LINKS)}

    def positive(whole: Arr) -> tuple[Any, Arr]:
        pos = whole > 0
        return pos, np.where(pos, whole, 1.0)

    def share(q: str, part: Arr, whole: tuple[Any, Arr] | None) -> Arr | float:
        return 0.0 if q in idle or whole is None else np.where(whole[0], part / whole[1], 0.0)

    both = {q: positive(busy["scale_up"][q] + busy["nic"][q]) for q in COMM_KEYS if q not in idle}
    on_link = {k: {q: out[q] * share(q, busy[k][q], both.get(q)) for q in COMM_KEYS} for k in LINKS}
    link_exposed: dict[str, Arr] = {}
    for k in LINKS:
        total_busy = sum(busy[k].values(), zero_t)
        shortfall = np.maximum(0.0, total_busy - window - sum(on_link[k].values(), zero_t))
        total = positive(total_busy)
        for q in COMM_KEYS:
            extra = shortfall * share(q, busy[k][q], total)
            on_link[k][q] = on_link[k][q] + extra
            out[q] = out[q] + extra
        link_exposed[k] = sum(on_link[k].values(), zero_t)
    for q in COMM_KEYS:
        hidden = sum((np.maximum(busy[k][q] - on_link[k][q], 0.0) for k in LINKS), zero_t)
        out[q] = out[q] + ctx.cal.comm_sm_share * hidden
    return Links(busy=busy, exposed_link=link_exposed, exposed=out, window=window)


def stragglers(ctx: Context, sh: Shape, cm: Compute) -> Arr:
    """Every step synchronises all ranks (data-parallel collectives, pipeline hand-offs), so it waits
    for the slowest; with per-rank compute jitter of coefficient of variation sigma, the expected
    maximum of N ranks is sigma·sqrt(2 ln N) above the mean (Gaussian extreme value)."""
    n_sync = float(ctx.gpus)
    lag = ctx.cal.rank_jitter_cv * np.sqrt(2.0 * np.log(n_sync)) if n_sync > 1 else 0.0
    return np.asarray(lag * sh.m_mb * (cm.t_fwd + cm.t_bwd + cm.t_rec))


# ---------------------------------------------------------------- memory
def offloaded_bytes(ctx: Context, st: Strategies, nd: Arr, nm: Arr, act_dense: Arr, act_moe: Arr) -> Arr:
    """Saved activations one micro-batch offloads to host memory: those of the first ``st.offload``
    layers of the stage (Transformer Engine offloads the first ``num_layers`` layer groups; dense layers
    come first)."""
    if not np.any(st.offload > 0):  # nothing offloaded in the batch (every use is under off > 0)
        return np.asarray(np.zeros_like(nd))
    n = np.minimum(st.offload.astype(float), nd + nm)
    off_d = np.minimum(n, nd)
    return np.asarray(off_d * act_dense + (n - off_d) * act_moe)


def offload_time(ctx: Context, st: Strategies, cm: Compute, off: Arr, nic_busy_mb: Arr | float = 0.0) -> Arr:
    """Exposed time per micro-batch of activation offloading: the forward's device-to-host copies run
    beside the whole forward and the reloads beside the backward (Transformer Engine spreads the
    offloaded layers' copies over the stage, ``layer_window_map``), each exposed only where it outlasts
    that compute on the host link (``acc.host_link_bandwidth``); the copies read and then write the
    offloaded bytes in HBM, bandwidth the kernels lose (TE CPU offloading guide).

    The NICs' GPUDirect RDMA traffic crosses the same host link (a GPU has one PCIe link; a GB200's NIC
    sits behind Grace, across NVLink-C2C): ``nic_busy_mb`` seconds per micro-batch at the NIC's
    achievable rate, spread over the micro-batch's compute, leave the copies ``acc.host_link_capacity``
    less that rate (never more than their own bandwidth). A PCIe host whose 400 Gb/s NIC is busy half
    the step keeps ~half of its 51 GB/s for the copies; a Grace superchip's 450 GB/s link keeps its
    197 GB/s memory-bound copies."""
    window = np.maximum(cm.t_fwd + cm.t_bwd + cm.t_rec, 1e-12)
    nic_bytes = np.maximum(np.asarray(nic_busy_mb, dtype=float), 0.0) * ctx.scale_out_bw * ctx.cal.scale_out_efficiency
    nic_rate = np.minimum(nic_bytes / window, ctx.scale_out_bw)
    acc = ctx.acc
    left = np.maximum(acc.host_link_capacity - nic_rate, 1e-3 * acc.host_link_bandwidth)
    rate = np.minimum(acc.host_link_bandwidth, left)
    t_copy = off / rate
    exposed = np.maximum(0.0, t_copy - cm.t_fwd) + np.maximum(0.0, t_copy - cm.t_bwd)
    return np.asarray(np.where(off > 0, exposed + _hbm_time(ctx, 2.0 * off), 0.0))


def interleaved_inflight_layers(p: Arr, v: Arr, m: Arr, first_stage: bool, edge: Arr, lam: Arr) -> Arr:
    """Most layers' activations the first (``first_stage``) or the last pipeline rank holds at once
    under Megatron-Core's interleaved 1F1B, where its ``v`` model chunks hold ``lam`` layers each but
    one, the first stage's first chunk or the last stage's final chunk, which holds ``edge``.

    Megatron-Core (pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving) runs
    (p - r - 1)·2 + (v - 1)·p warm-up forwards on rank r (microbatch_group_size_per_vp_stage = p),
    then one forward and one backward at a time; forwards take the chunks in order, each for a group
    of p micro-batches, backwards in reverse chunk order (get_model_chunk_id). In flight after a
    steady-state forward is every forward so far less every backward. On the first stage the p - 1
    warm-up forwards past one round are first-chunk ones: where that chunk holds the embedding alone
    (Llama 3's 126 layers over 16 x 8 slots; --account-for-embedding-in-pipeline-split) they add no
    layer, and the equal-chunk count (p·v + p - 1 chunks' worth) overstates it. On the last stage the
    warm-up stops one chunk short of a round, and once the steady state runs the next round's first
    chunk while the backwards free the (lighter) loss chunk, the count rises by lam - edge. With m a
    multiple of p the count is piecewise linear in the steady-state step and takes these values
    (tests/engine/test_interleaved_inflight.py replays the schedule)."""
    stage = (v - 1.0) * lam + edge
    if first_stage:
        steady = m * v - (p * v + p - 1.0)  # steady-state steps after the warm-up's last forward
        peak = p * stage + (p - 1.0) * edge + np.where(steady >= 1.0, np.maximum(0.0, edge - lam), 0.0)
    else:
        steady = m * v - (p * v - p + 1.0)
        peak = p * stage - (p - 1.0) * edge + np.where(steady >= p, np.maximum(0.0, lam - edge), 0.0)
    return np.asarray(np.where(steady < 0.0, m * stage, np.minimum(m * stage, peak)))


def memory(ctx: Context, st: Strategies, sh: Shape, cm: Compute, pr: Params) -> Memory:
    """Bytes per GPU on the pipeline rank that holds the most: bf16 weights, fp32 main grads, fp32
    master + Adam (sharded by ZeRO stage and shard group) of the stages the rank holds, their
    activations x micro-batches in flight, and the margins real runs have (framework, allocator
    fragmentation, NCCL buffers).

    The ranks compared (each total, the largest kept; the timing's busiest stage plays no part): with
    1F1B or interleaving the first stage (most micro-batches in flight), the first middle stage, the
    middle stage with the most MoE layers (dense layers come first, so that one may sit further
    down) and the last (LM head, logits); with DualPipe every rank r holds stage r of one direction
    and stage pp-1-r of the other (DeepSeek-V3 Sec. 3.2.1, Table 2: parameters 2x), so rank 0 holds
    the first and the last stage, rank 1 the first middle stage and stage pp-2, and the rank of the
    MoE-heaviest middle stage two such stages."""
    model, tp, pp, v, tokens, m_mb = ctx.model, sh.tp, sh.pp, sh.v, sh.tokens, sh.m_mb
    z, rec = st.zero, st.recompute
    s, h, B = float(ctx.seq_len), float(model.hidden), ctx.act_bytes
    w_b = 2.0
    dual = st.dualpipe & (pp > 1)
    # fp32 main gradients; with ZeRO-3/FSDP a parameter shard costs 16 bytes, not 18: DeepSpeed keeps
    # 16-bit gradient shards (ZeRO paper Sec. 3.1: 2 + 2 + 12 bytes), FSDP's fp32 shard is itself the
    # optimizer's master copy (mixed precision: 4 + 4 + 8, plus the transient bf16 gathers in z3_buf)
    # (bf16 when gradients are reduced in bf16: Megatron-Core DDP allocates the main-grad buffer in
    # fp32 only with grad_reduce_in_fp32, else in the parameters' dtype)
    grad_b = np.where((z == 3) | ~st.grad_fp32, PARAM_BYTES, GRAD_BYTES)
    # fp32 master + Adam m, v; DeepSeek-V3's FP8 framework keeps the AdamW moments in BF16 (Sec. 3.3.3,
    # "Low-Precision Optimizer States": 4 + 2 + 2 bytes)
    blockwise = ctx.fp8 and ctx.training.precision_recipe == "fp8_blockwise"
    opt_b = 8.0 if blockwise else 12.0
    muon = ctx.training.optimizer == "muon"
    muon_b = 4.0 + 0.5 * (opt_b - 4.0)  # the master copy and one of the two moments
    # FP8 GEMM weights beside or instead of the BF16 ones (ZeRO-3 / FSDP shards keep today's accounting: their
    # gathered copies are transient, z3_buf). With FP8 parameters (fp8_param_gather) a layer weight is its FP8
    # data and column-wise copy (fp8_weight_bytes) and has no BF16 copy: Megatron-Core creates the TE modules
    # under fp8_model_init / quantized_model_init, the distributed optimizer's fp32 shard is the master, and the
    # FP8 data lives in the DDP parameter buffer (uint8; under MXFP8 the BF16 gather staging is the gradient
    # buffer, reuse_grad_buf_for_mxfp8_param_ag). Without them Transformer Engine quantizes each BF16 weight on
    # the first micro-batch into a weight workspace it keeps for the step's other micro-batches (module/linear.py
    # and grouped_linear.py: cached in _fp8_workspaces when is_first_microbatch is given; Megatron-Core's TE
    # layers pass it unless disable_parameter_transpose_cache, extensions/transformer_engine.py): that copy is
    # held beside the BF16 weights (fp8_weight_cache). The embedding and the output head stay BF16.
    fp8_w = fp8_gemm_weights(ctx)
    w8 = fp8_weight_bytes(ctx) if fp8_w else 0.0
    w8_extra = np.where(
        (z < 3) & fp8_w,
        np.where(st.fp8_params, w8 - w_b, np.where(st.fp8_wcache, w8, 0.0)),
        0.0,
    )

    def states(*stages: tuple[Arr, Arr, Arr | float]) -> tuple[Arr, Arr, Arr, Arr]:
        """Weights, gradients, optimizer states and parameters on one GPU of a rank holding
        ``stages`` ((dense, MoE) layers and embedding / head parameters of each)."""
        p_d, p_e, p_l = 0.0 * tp, 0.0 * tp, 0.0 * tp
        for nd, nm, emb in stages:
            d, e = stage_params(ctx, sh, nd, nm, emb)
            p_d, p_e = p_d + d, p_e + e
            if fp8_w:
                p_l = p_l + stage_params(ctx, sh, nd, nm, 0.0)[0] + e  # the layers' (FP8) GEMM weights
        p_local, p_shard = p_d + p_e, p_d / pr.g + p_e / pr.g_e
        weights = np.where(z == 3, p_shard, p_local) * w_b
        if fp8_w:
            weights = weights + p_l * w8_extra
        grads = np.where(z >= 2, p_shard, p_local) * grad_b
        # optimizer states: one copy of each stage's, shared by the two DualPipe ranks that hold the
        # stage (Table 2 doubles the parameters only), so a rank of two stages keeps half of each
        shard_opt = (p_d / np.where(z >= 1, pr.g, 1.0) + p_e / np.where(z >= 1, pr.g_e, 1.0)) / len(stages)
        if not muon:
            return np.asarray(weights), np.asarray(grads), np.asarray(opt_b * shard_opt), np.asarray(p_local)
        # Muon keeps the master copy and one moment, its momentum buffer (zeros_like the FP32 main
        # gradient: Emerging-Optimizers OrthogonalizedOptimizer.step), for its matrices; AdamW both
        # moments for the rest (Liu et al. 2025, arXiv 2502.16982: Muon keeps half of AdamW's moment state)
        m_d = sum((muon_params_per_gpu(ctx, sh, nd, nm) for nd, nm, _ in stages), 0.0 * tp)
        shard_m = (m_d / np.where(z >= 1, pr.g, 1.0) + p_e / np.where(z >= 1, pr.g_e, 1.0)) / len(stages)
        optim = opt_b * (shard_opt - shard_m) + muon_b * shard_m
        return np.asarray(weights), np.asarray(grads), np.asarray(optim), np.asarray(p_local)

    # unfused attention stores softmax output, dropout mask and output: 5·a·s²·b bytes per layer
    # (Korthikanti et al. 2022, Eq. 1) unless selective recompute drops them
    scores = np.where(~st.flash & (rec == 0), 5.0 * float(model.n_heads) / tp * s * tokens, 0.0)
    # fine-grained selective recompute (fused attention) drops the norm/activation/up-projection outputs
    drop = (rec == 1) & st.flash
    core_attn = selective_is_core_attn(ctx)
    drop_d = drop & (not core_attn)  # the cheap modules of a dense layer (selective_is_core_attn)
    seq_shard = np.where(st.sp, tp, 1.0)
    # with FP8 GEMMs the inputs saved for the weight-gradient GEMMs are kept in FP8, one byte each
    # (Transformer Engine; DeepSeek-V3 Sec. 3.3.3); the norm and activation outputs among them are
    # not stored at all when fine-grained recompute drops them
    f8 = (B - 1.0) if ctx.fp8 else 0.0
    moe_f = float(model.moe.expert_ffn_hidden * (model.moe.top_k + model.moe.n_shared_experts)) if model.moe else 0.0
    g_dense = ctx.gemm_in_dense - np.where(drop_d, 2.0 * h + float(model.ffn_hidden), 0.0)
    g_moe = ctx.gemm_in_moe - np.where(drop, 2.0 * h + moe_f, 0.0)
    # DeepSeek-V3's FP8 framework (blockwise scaling, Sec. 3.3.3) also caches the input of the MoE
    # SwiGLU in FP8 ("only cache the inputs of the SwiGLU operator and recompute its output ... also
    # stored in FP8"): one byte for the fc1 outputs of the routed and shared experts
    if blockwise and model.moe is not None:
        g_moe = g_moe + float(ffn_matrices(model) - 1) * moe_f
    # ... but the attention output, an FP8 input of the output projection, is also kept in BF16 by the
    # fused attention kernel, whose backward needs it (FlashAttention-2 Alg. 2: D = rowsum(dO * O);
    # Transformer Engine's FusedAttention saves q, k, v and out); in BF16 both are one tensor, and
    # DeepSeek-V3's framework caches that one input once, for both backwards (Sec. 3.3.3, E5M6)
    o_twice = np.where(st.flash & ctx.fp8 & (not blockwise), B * attention_output_elems_per_token(model), 0.0)
    # the core-attention checkpoint keeps q, k, v and drops the kernel's own copy of its output (in BF16
    # the output projection keeps that same tensor as its input)
    o_dense = np.where(drop & core_attn, 0.0, o_twice)
    act_dense = (
        ((ctx.act_dense - np.where(drop_d, ctx.sel_dense[0], 0.0)) * B - f8 * g_dense + o_dense) * tokens / seq_shard
    )
    act_moe = ((ctx.act_moe - np.where(drop, ctx.sel_moe[0], 0.0)) * B - f8 * g_moe + o_twice) * tokens / seq_shard
    act_dense, act_moe = act_dense + scores, act_moe + scores
    # GShard's einsum dispatch keeps its [tokens, E·C] masks for the backward (einsum_dispatch_time): the
    # dispatch mask and combine weights in the activation dtype, the einsums' operands, and the gate's fp32
    # combine weights
    if model.moe is not None and np.any(st.einsum):
        s_rank = tokens / seq_shard
        slots = float(model.moe.top_k) * routing_imbalance(ctx, tokens, sh.ep) * s_rank
        act_moe = act_moe + np.where(st.einsum, (2.0 * B + 4.0) * slots * s_rank, 0.0)
    # without the backward re-gather (tensor_parallel) the two gathered column-parallel inputs of a layer
    # are saved whole: (1 - 1/tp) of them beyond the local shard counted above
    gather_b = _gather_bytes(ctx, st)
    kept = np.where(st.sp & ~st.regather & (tp > 1), 2.0 * h * gather_b * (1.0 - 1.0 / tp) * tokens, 0.0)
    act_dense, act_moe = act_dense + kept, act_moe + kept
    # the eager clamp keeps the FC1 output for its backward, unless fused or re-run by recompute
    if ctx.eager_mlp_dense[1] or ctx.eager_mlp_moe[1]:
        keep = np.where(~st.op_fuser & ~drop, B * tokens / seq_shard, 0.0)
        keep_d = np.where(~st.op_fuser & ~drop_d, B * tokens / seq_shard, 0.0)
        act_dense, act_moe = act_dense + keep_d * ctx.eager_mlp_dense[1], act_moe + keep * ctx.eager_mlp_moe[1]

    # micro-batches in flight on pipeline rank r: min(m, pp - r) with 1F1B; with interleaving
    # ((pp - r - 1)·2 + (v - 1)·pp + 1)/v stage-equivalents (Megatron-Core warm-up), at most all m
    # (Megatron-Core caps the warm-up at the m·v chunks of the step: all_warmup_microbatches). The first
    # stage holds the most, which is why layouts give it fewer layers. Where a stage's first or last
    # model chunk holds fewer layers than the others (the embedding or the loss in a slot of its own,
    # or an uneven remainder), which chunks are in flight matters: interleaved_inflight_layers
    def inflight(r: Arr | float, edge: Arr | None = None, first_stage: bool = False) -> Arr:
        inter = np.minimum(m_mb, np.minimum(m_mb, pp) * (1.0 + (pp - 1.0 - 2.0 * r) / (pp * v)))
        if edge is not None:
            lam = sh.chunk_slots
            stage = (v - 1.0) * lam + edge
            lay = interleaved_inflight_layers(pp, v, m_mb, first_stage, edge, lam)
            chunked = lay / np.maximum(stage, 1e-9)
            inter = np.where((m_mb >= pp) & (v > 1) & (stage > 0) & (edge != lam), chunked, inter)
        one_f1b = np.where(v > 1, inter, np.minimum(m_mb, pp - r))
        return np.asarray(np.where(pp > 1, one_f1b, 1.0))

    # DualPipe: each direction runs half the micro-batches, and the stage at position r of a direction
    # holds min(m/2, pp - r) of them at the peak, so rank r's pair holds pp - r + r + 1 = PP + 1
    # (DeepSeek-V3 Table 2; deepseek-ai/DualPipe dualpipe.py step(): 2(pp/2 - r - 1) + r + 1 forwards of
    # its first chunk and r + 1 of its second before the main loop's overlapped F0 B1 adds one more)
    def inflight_dual(r: Arr | float) -> Arr:
        return np.asarray(np.minimum(0.5 * m_mb, pp - r))

    # with full recompute a micro-batch in flight keeps only each layer's input (2·s·b·h bytes,
    # Korthikanti et al. 2022, Table 2); the one layer being recomputed in the backward holds its
    # full activations once, whatever the number of micro-batches in flight (returned apart: a rank
    # holding two stages recomputes one layer at a time)
    def stage_act(nd: Arr, nm: Arr, k: Arr, rc: tuple[Arr, Arr], off: Arr | None = None) -> tuple[Arr, Arr]:
        full_l = np.where(nm > 0, act_moe, act_dense)
        stored = (nd * act_dense + nm * act_moe) * k
        # activation offload (pp = 1): the offloaded layers' activations live in host memory; one
        # layer's stay on the GPU while its copy is in flight (Transformer Engine's double buffer)
        if off is None:
            off = offloaded_bytes(ctx, st, nd, nm, act_dense, act_moe)
        stored = stored - np.where(off > 0, off - full_l, 0.0)
        ckpt, once = (nd + nm) * 2.0 * h * tokens / seq_shard * k, full_l
        if np.any(st.rc_layers >= 0):
            # block method: only the layers full recompute re-runs keep just their input; the others
            # keep their activations as without recompute (full_recompute_layers), unfused scores too
            rd, rm = rc
            sc_keep = np.where(~st.flash, 5.0 * float(model.n_heads) / tp * s * tokens, 0.0)
            keep = (nd - rd) * (act_dense + sc_keep) + (nm - rm) * (act_moe + sc_keep)
            part = ((rd + rm) * 2.0 * h * tokens / seq_shard + keep) * k
            ckpt = np.where(st.rc_layers >= 0, part, ckpt)
            once = np.where(st.rc_layers >= 0, np.where(rd + rm > 0, full_l, 0.0), once)
        return np.asarray(np.where(rec == 2, ckpt, stored)), np.asarray(np.where(rec == 2, once, 0.0))

    P = ctx.params
    # embedding and head parameters: every stage is charged the larger of the two where pp > 1, as in
    # params() (the first stage holds the embedding, the last the head or its copy of a tied embedding)
    emb = np.where(pp > 1, float(max(P.embedding, P.output)), float(P.embedding + P.output))
    (d1, m1), (dm, mm), (dl, ml) = sh.layers["first"], sh.layers["mid"], sh.layers["last"]
    # the middle stage with the most MoE layers (heaviest_mid), past the dense ones
    dense_rest = np.maximum(float(ctx.n_dense_layers) - sh.n_first, 0.0)
    dh, mh = heaviest_mid(ctx, sh)
    r_h = np.clip(
        np.where(mh >= sh.slots, 1.0 + np.ceil(dense_rest / sh.slots), pp - 2.0), 1.0, np.maximum(pp - 2.0, 1.0)
    )
    rc_h = full_recompute_layers(st, sh, "mid", (dh, mh))

    logits_mem = tokens * (model.vocab / tp) * 6.0
    off = offloaded_bytes(ctx, st, d1, m1, act_dense, act_moe)  # the first stage's (Memory.offloaded)
    has_mid = pp > 2
    zero = 0.0 * tp
    # (weights, gradients, optimizer, parameters, activations) of each rank compared; the DualPipe pairs
    # only where the batch has DualPipe, the MoE-heaviest middle stage only where it is not the first
    any_dual = bool(np.any(dual))
    ranks = []

    def pair(one: tuple[Arr, ...], *two: tuple[Arr, Arr, Arr | float]) -> list[Arr]:
        return [np.where(dual, b, a) for a, b in zip(one, states(*two), strict=True)] if any_dual else list(one)

    # rank 0: the first stage (1F1B, with the logits where pp = 1), or the first and the last (DualPipe)
    k_first = inflight(0.0, sh.chunk_slots - sh.short, first_stage=True)
    a1, o1 = stage_act(d1, m1, np.where(dual, inflight_dual(0.0), k_first), cm.rc["first"], off)
    act = a1 + o1 + np.where(pp == 1, logits_mem, 0.0)
    if any_dual:
        al, ol = stage_act(dl, ml, inflight_dual(pp - 1.0), cm.rc["last"])
        act = np.where(dual, a1 + al + np.maximum(o1, ol) + logits_mem, act)
    ranks.append((*pair(states((d1, m1, emb)), (d1, m1, emb), (dl, ml, emb)), act))
    # rank 1: the first middle stage (under DualPipe with stage pp-2, whose MoE layers are the heaviest's)
    am, om = stage_act(dm, mm, np.where(dual, inflight_dual(1.0), inflight(1.0)), cm.rc["mid"])
    act = am + om
    if any_dual:
        ah2, oh2 = stage_act(dh, mh, inflight_dual(pp - 2.0), rc_h)
        act = np.where(dual, am + ah2 + np.maximum(om, oh2), act)
    mid = pair(states((dm, mm, emb)), (dm, mm, emb), (dh, mh, emb))
    ranks.append((*(np.where(has_mid, x, zero) for x in mid), np.where(has_mid, act, zero)))
    # rank r_h: the MoE-heaviest middle stage (DualPipe: with its partner pp-1-r_h, as heavy or heavier)
    if not np.all((dh == dm) & (mh == mm) & (r_h <= 1.0)):
        ah, oh = stage_act(dh, mh, np.where(dual, inflight_dual(r_h), inflight(r_h)), rc_h)
        act = ah + oh
        if any_dual:
            ahp, ohp = stage_act(dh, mh, inflight_dual(pp - 1.0 - r_h), rc_h)
            act = np.where(dual, ah + ahp + np.maximum(oh, ohp), act)
        heavy = pair(states((dh, mh, emb)), (dh, mh, emb), (dh, mh, emb))
        ranks.append((*(np.where(has_mid, x, zero) for x in heavy), np.where(has_mid, act, zero)))
    # the last stage (1F1B; under DualPipe rank pp-1 holds what rank 0 does)
    al1, ol1 = stage_act(dl, ml, inflight(pp - 1.0, sh.last_chunk), cm.rc["last"])
    last_rank = (pp > 1) & ~dual
    act = np.where(last_rank, al1 + ol1 + logits_mem, zero)
    ranks.append((*(np.where(last_rank, a, zero) for a in states((dl, ml, emb))), act))

    z3_buf = np.where(z == 3, 2.0 * pr.layer_dense / tp * w_b * 2.0, 0.0)
    # margins real runs have: the caching allocator's fragmentation of the tensors allocated and
    # freed every step (activations, gathered ZeRO-3 parameters; Megatron-Core and FSDP keep
    # parameters, gradients and optimizer states in buffers allocated once), and NCCL's buffers for
    # every communicator this rank belongs to
    ep = sh.ep
    n_comms = (
        1.0
        + (tp > 1)
        + (sh.cp > 1)
        + (pp > 1)
        + (pr.dpc > 1)
        + (pr.hybrid & (pr.rep > 1))
        + ((ep > 1) if sh.has_moe else 0.0)
        + ((pr.edp > 1) if sh.has_moe else 0.0)
    )
    cp_buf = cp_buffer_bytes(ctx, st, sh)  # one layer's transient CP buffers (all-gather, all-to-all)
    margin = allocator_margin(ctx, st)
    best: list[Arr] = []
    best_total = zero - 1.0
    for weights, grads, optim, p_local, activations in ranks:
        buffers = ctx.cal.framework_overhead_bytes + z3_buf + np.minimum(p_local * 4.0, 2.0 * 40e6 * 4.0)
        buffers = (
            buffers + cp_buf + margin * (activations + z3_buf + cp_buf) + ctx.cal.nccl_bytes_per_communicator * n_comms
        )
        parts = [weights, grads, optim, activations, buffers]
        total = weights + grads + optim + activations + buffers
        more = total > best_total
        best = parts if not best else [np.where(more, new, old) for new, old in zip(parts, best, strict=True)]
        best_total = np.where(more, total, best_total)
    weights, grads, optim, activations, buffers = best
    return Memory(
        weights=weights, gradients=grads, optimizer=optim, activations=activations, offloaded=off, buffers=buffers
    )


def allocator_margin(ctx: Context, st: Strategies) -> Arr:
    """Share of the bytes allocated and freed every step that the caching allocator holds beyond them:
    ``allocator_fragmentation`` with PyTorch's default fixed segments (free blocks stranded between live
    ones), ``allocator_fragmentation_expandable`` with expandable segments (free pages unmapped and
    remapped at the segment's end; what stays is the partly used pages)."""
    cal = ctx.cal
    return np.asarray(np.where(st.expandable, cal.allocator_fragmentation_expandable, cal.allocator_fragmentation))


# ---------------------------------------------------------------- the step
def evaluate(ctx: Context, st: Strategies) -> dict[str, Any]:
    """Step time, breakdown, memory and traffic for every strategy in ``st``: one function per
    concern, assembled; a single strategy is a batch of one."""
    sh = shape(ctx, st)
    cm = compute(ctx, st, sh)
    tpc = tensor_parallel(ctx, st, sh, cm)
    cpc = context_parallel(ctx, st, sh, cm)
    epc = expert_parallel(ctx, st, sh, cm)
    bubble, ppc = pipeline(ctx, st, sh, cm, tpc.exposed + cpc.exposed + epc.exposed)
    pr = params(ctx, st, sh, cm)
    dpc = data_parallel(ctx, st, sh, cm, pr)
    t_opt = optimizer(ctx, st, pr)
    if ctx.training.optimizer == "muon":
        # the element-wise pass stays Adam's bytes per parameter: a Muon matrix moves no second moment
        # (8 bytes less) but its momentum goes through the casts around Newton-Schulz (normalised in
        # FP32, cast to BF16 and back, scaled: Emerging-Optimizers muon_utils.newton_schulz) instead
        t_opt = t_opt + newton_schulz(ctx, st, sh, cm, pr)
    m_mb = sh.m_mb
    comms = {"tp": tpc, "cp": cpc, "ep": epc, "pp": ppc, "dp": dpc}
    per_step = {"tp": m_mb * tpc.exposed, "cp": m_mb * cpc.exposed, "ep": m_mb * epc.exposed}
    lk = links(ctx, sh, cm, comms, {**per_step, "pp": ppc.exposed, "dp": dpc.exposed})
    compute_total = m_mb * (cm.t_fwd + cm.t_bwd)
    mem = memory(ctx, st, sh, cm, pr)
    # the NICs' traffic of the step shares the host link with the copies (per micro-batch, spread over it)
    nic_busy = sum(lk.busy["nic"].values(), np.zeros_like(sh.tp))
    t_offload = offload_time(ctx, st, cm, mem.offloaded, nic_busy / sh.m_mb)
    breakdown = {
        "compute": compute_total,
        "recompute": m_mb * (cm.t_rec + t_offload),  # the time memory saving costs: recompute, offload
        "tp_comm": lk.exposed["tp"],
        "cp_comm": lk.exposed["cp"],
        "ep_comm": lk.exposed["ep"],
        "pp_bubble": bubble,
        "pp_comm": lk.exposed["pp"],
        "dp_comm": lk.exposed["dp"],
        "optimizer": t_opt,
        "stragglers": stragglers(ctx, sh, cm),
    }
    step = sum(breakdown.values(), np.zeros_like(sh.tp))
    total_mem = mem.total

    tokens_step = float(ctx.global_batch_seqs) * float(ctx.seq_len)
    tps_gpu = tokens_step / (step * ctx.gpus)
    mfu = ctx.model_flops_per_token * tokens_step / (step * ctx.gpus * ctx.mfu_peak)
    # HFU adds recomputed FLOPs: the whole forward (full) or what selective recompute re-runs (the
    # attention core when unfused, MLA up-projections when fused), relative to forward + backward
    fwd_flops = cm.nd_s * cm.dense["flops"] + cm.nm_s * cm.moe["flops"]
    sel_fwd = cm.nd_s * cm.dense["sel_flops"] + cm.nm_s * cm.moe["sel_flops"]
    rec = st.recompute
    full_flops = cm.rd_s * cm.dense["flops"] + cm.rm_s * cm.moe["flops"]  # full recompute's layers
    rec_flops = np.where(rec == 2, full_flops, np.where(rec == 1, sel_fwd, 0.0))
    hfu = mfu * (1.0 + rec_flops / np.maximum(3.0 * fwd_flops, 1.0))
    return {
        "step_time_s": step,
        "breakdown": breakdown,
        "memory": {
            "weights": mem.weights,
            "gradients": mem.gradients,
            "optimizer": mem.optimizer,
            "activations": mem.activations,
            "buffers": mem.buffers,
        },
        "memory_bytes": total_mem,
        # activation offload holds one micro-batch's offloaded layers per GPU in the node's host memory
        # (pp = 1: one micro-batch in flight), beside what the node's other GPUs offload
        "offloaded_bytes": mem.offloaded,
        "host_memory_per_gpu": ctx.host_memory_per_gpu,
        "fits": (total_mem <= ctx.hbm_usable) & (mem.offloaded <= ctx.host_memory_per_gpu),
        "tokens_per_s_per_gpu": tps_gpu,
        "mfu": mfu,
        "hfu": hfu,
        "micro_batches": m_mb,
        "traffic": {
            "tp": m_mb * tpc.nbytes,
            "cp": m_mb * cpc.nbytes,
            "ep": m_mb * epc.nbytes,
            "pp": ppc.nbytes,
            "dp": dpc.nbytes,
        },
        "links": {k: {"busy": lk.busy[k], "exposed": lk.exposed_link[k]} for k in LINKS},
        "overlap_window": lk.window,
        "params_per_gpu": pr.p_local,
        "layers_per_stage": cm.layers_s,
    }
