"""The vectorised step-time and memory model.

One function, :func:`evaluate`, computes every quantity for a batch of strategies at once; a single
strategy is a batch of one. The structure, per pipeline stage and micro-batch:

  compute   GEMMs at a shape-dependent efficiency (ctx.cal.gemm_*), FP8 where the chip has it,
            plus the memory-bound casts of FP8 operands; attention core (fused kernel, causal
            half) at the chip's native or FlashAttention-2 fraction x ATTN_EFFICIENCY of the bf16
            peak; memory-bound kernels at ELEMENTWISE_EFFICIENCY of HBM bandwidth. Backward = 2x
            forward for GEMMs (input and weight gradients), 2.5x for the attention core
            (FlashAttention-2 recomputes scores: 5 GEMMs vs 2). Recompute: full repeats the
            forward; selective the attention core when unfused (Korthikanti et al. 2022), the norms,
            activation and MLA up-projections when fused (Megatron-Core recompute modules).
  tp        Sequence parallel: 2 all-gathers + 2 reduce-scatters of s·b·h per layer forward and
            again backward; without it 2 all-reduces each way (Korthikanti et al. 2022, Sec. 4.2.2).
  cp        Ring attention: (cp-1) K/V block exchanges per layer, overlapped with attention.
  ep        MoE dispatch + combine all-to-all forward and backward, tokens·top_k·h bytes each; EP
            beyond dp·cp folds over the tp ranks with whole experts (MoE parallel folding).
  pp        1F1B bubble (p-1)/v stage-times (Narayanan et al. 2021); p2p transfers blocking (all on
            the critical path) or asynchronous (fill and drain hops only).
  dp        Gradient reduce-scatter + parameter all-gather (distributed optimizer, ZeRO-1/2) or
            all-reduce (ZeRO-0), overlapped with the last backward / first forward micro-batch
            (per model chunk with interleaving); ZeRO-3 gathers parameters per micro-batch forward
            and backward (Rajbhandari et al. 2020).
  optimizer Adam update bound by HBM bandwidth over the local parameter shard.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from wanka.engine.context import Context
from wanka.engine.strategies import Strategies
from wanka.network import bus_factor, collective_time, comm_group
from wanka.workload import Gemm

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
    return replace(comm_group(ctx.cluster, size, inner, contention), calibration=ctx.cal)


def _hbm_time(ctx: Context, nbytes: Arr | float) -> Arr:
    """Time of a memory-bound kernel that moves ``nbytes`` through HBM."""
    return np.asarray(nbytes / (ctx.hbm_bw * ctx.cal.elementwise_efficiency))


LINKS = ("scale_up", "nic")
COMM_KEYS = ("tp", "cp", "ep", "pp", "dp")


def _link_time(ctx: Context, op: str, nbytes: Arr | float, group: Any) -> tuple[Arr, Arr]:
    """Seconds one collective keeps each link of a GPU busy at its achievable bandwidth: ``(scale-up,
    NIC)``, bytes per GPU over link rate x efficiency (/ fabric contention).

    A ring over ``n`` ranks, ``a`` per scale-up domain, runs one channel per NIC (NCCL): when it
    leaves the domain, each GPU's NIC carries ``1/a`` of the bus bytes and its scale-up links the
    other ``(a-1)/a``; inside one domain everything stays on scale-up. An all-to-all sends
    ``(n-a)/n`` of its buffer over the NIC (x the node-deduplication share) and ``(a-1)/n`` over
    scale-up; a point-to-point send crosses the fabric whole when its peer is in another domain.
    """
    n = np.asarray(group.size, dtype=float)
    a = np.minimum(np.asarray(group.per_domain, dtype=float), n)
    s = np.asarray(nbytes, dtype=float)
    cross = n > a
    cal = ctx.cal
    up_bw = ctx.scale_up_bw * cal.scale_up_efficiency
    contention = np.maximum(1.0, np.asarray(group.scale_out_contention, dtype=float))
    nic_bw = ctx.scale_out_bw * cal.scale_out_efficiency / contention
    if op == "all_to_all":
        dedup = np.asarray(group.remote_dedup, dtype=float)
        nic = (n - a) / n * s * dedup
        up = (a - 1.0) / n * s + np.where(dedup < 1.0, (n - a) / n * s, 0.0)
        nic_bw = ctx.scale_out_bw * cal.a2a_efficiency / contention
    elif op == "send_recv":
        nic = np.where(cross, s, 0.0)
        up = np.where(cross, 0.0, s)
    else:
        bus = np.asarray(bus_factor(op, np.maximum(n, 1.0)), dtype=float) * s
        nic = np.where(cross, bus / np.maximum(a, 1.0), 0.0)
        up = np.where(cross, bus * (a - 1.0) / np.maximum(a, 1.0), bus)
    single = n <= 1
    return np.where(single, 0.0, up / up_bw), np.where(single, 0.0, nic / nic_bw)


# MLA up-projections: fine-grained ("selective") recompute re-runs them instead of storing q, k, v
_UP_PROJECTIONS = frozenset({"q_up", "kv_up"})


def _gemms_fwd_time(
    ctx: Context, gemms: tuple[Gemm, ...], tokens: Arr, tp: Arr, ep: Arr, etp: Arr, imbalance: Arr | float
) -> tuple[Arr, Arr, Arr, Arr]:
    """Forward time and FLOPs of a layer's weight GEMMs on one GPU for ``tokens`` tokens, and of
    those among them that fine-grained recompute runs again (MLA up-projections).

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
        n = np.full_like(tokens, float(g.n))
        k = np.full_like(tokens, float(g.k))
        if g.expert:
            assert ctx.model.moe is not None
            e = float(ctx.model.moe.n_experts)
            local = e / ep  # experts per rank, each split etp ways
            m = tokens * g.tokens * ep / e * imbalance * etp / tp  # tokens per local expert
            if g.split == "n" or g.name == "expert_fc1":
                n = n / etp
            else:
                k = k / etp
            flops = 2.0 * m * n * k * local
            # grouped GEMM: each expert's rows are padded to whole tiles (half a tile wasted on average)
            tile = ctx.cal.grouped_gemm_tile_rows
            eff = _gemm_eff(ctx, m, n, k, ctx.fp8) / ctx.cal.grouped_gemm_penalty * m / (m + 0.5 * tile)
        else:
            local = np.ones_like(tokens)
            m = tokens * g.tokens
            if g.split == "n":
                n = n / tp
            elif g.split == "k":
                k = k / tp
            flops = 2.0 * m * n * k
            eff = _gemm_eff(ctx, m, n, k, ctx.fp8)
        t_g = flops / (ctx.gemm_peak * eff)
        if ctx.fp8:
            # Transformer Engine quantizes each FP8 GEMM's operands: read the bf16 input (m·k) and
            # write it as fp8 (the backward does the same for the output gradient, m·n), a memory-
            # bound pass that FP8's 2x peak does not speed up (Micikevicius et al. 2022, FP8 formats)
            cast = m * (k + n) * local * ctx.cal.fp8_cast_bytes_per_element
            t_g = t_g + _hbm_time(ctx, cast)
        t_total = t_total + t_g
        f_total = f_total + flops
        if g.name in _UP_PROJECTIONS:
            t_up = t_up + t_g
            f_up = f_up + flops
    return t_total, f_total, t_up, f_up


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


def _layer_fwd(ctx: Context, kind: str, tokens: Arr, st: Strategies, tp: Arr, ep: Arr, etp: Arr) -> dict[str, Arr]:
    """Forward pieces of one layer per micro-batch on one GPU."""
    moe = kind == "moe"
    gemms = ctx.moe_gemms if moe else ctx.dense_gemms
    cfg = ctx.model.moe
    imb = routing_imbalance(ctx, tokens, ep) if moe else 1.0
    t_gemm, f_gemm, t_up, f_up = _gemms_fwd_time(ctx, gemms, tokens, tp, ep, etp, imb)
    # attention core: queries of this rank (tokens, heads/tp) against the full causal context.
    # FlashAttention skips masked blocks (half the FLOPs, Dao 2023); the unfused path computes the
    # full s x s scores as batched GEMMs and makes ~6 passes over them in HBM (scores, scale-mask-
    # softmax read+write, dropout read+write+mask, read by the AV GEMM; Korthikanti et al. 2022).
    heads = float(ctx.model.n_heads) / tp
    full_flops = ctx.attn_flops_per_token * tokens / tp
    s = float(ctx.seq_len)
    attn_frac = np.where(st.fa2, ctx.acc.attention_fraction_fa2, ctx.acc.attention_fraction)
    t_flash = 0.5 * full_flops / (ctx.bf16_peak * attn_frac * ctx.cal.attn_efficiency)
    d = float(ctx.model.kv_channels)
    t_unfused = full_flops / (ctx.bf16_peak * _gemm_eff(ctx, s + 0.0 * tokens, s + 0.0 * tokens, d + 0.0 * tokens))
    t_unfused = t_unfused + _hbm_time(ctx, 6.0 * heads * tokens * s * ctx.act_bytes)
    t_attn = np.where(st.flash, t_flash, t_unfused)
    attn_flops = np.where(st.flash, 0.5 * full_flops, full_flops)
    elems = ctx.elem_moe if moe else ctx.elem_dense
    shard = np.where(st.sp, tp, 1.0)
    t_elem = _hbm_time(ctx, elems * tokens / shard * ctx.act_bytes)
    launch = ctx.cal.layer_overhead_s + (ctx.cal.moe_layer_overhead_s if moe else 0.0)
    t_elem = t_elem + launch * np.where(st.cuda_graphs, ctx.cal.cuda_graph_overhead_factor, 1.0)
    # dropless MoE syncs device to host once per layer pass; CUDA graphs cannot remove it
    if moe and cfg is not None and cfg.dispatch == "dropless":
        t_elem = t_elem + ctx.cal.moe_host_sync_s
    # selective recompute: with unfused attention the attention core (Korthikanti et al. 2022);
    # with a fused kernel the cheap modules instead (norms, activation, MLA up-projections)
    _, sel_traffic = ctx.sel_moe if moe else ctx.sel_dense
    t_sel_cheap = _hbm_time(ctx, sel_traffic * tokens / shard * ctx.act_bytes) + t_up
    t_sel = np.where(st.flash, t_sel_cheap, t_attn)
    f_sel = np.where(st.flash, f_up, attn_flops)
    return {
        "gemm": t_gemm,
        "attn": t_attn,
        "elem": t_elem,
        "flops": f_gemm + attn_flops,
        "sel": t_sel,
        "sel_flops": f_sel,
    }


def evaluate(ctx: Context, st: Strategies) -> dict[str, Any]:
    """Step time, breakdown, memory and traffic for every strategy in ``st``."""
    f = np.float64
    tp = st.tp.astype(f)
    pp = st.pp.astype(f)
    dp = st.dp.astype(f)
    cp = st.cp.astype(f)
    ep = st.ep.astype(f)
    v = st.vpp.astype(f)
    mb = st.micro_batch.astype(f)
    s = float(ctx.seq_len)
    h = float(ctx.model.hidden)
    B = ctx.act_bytes
    model = ctx.model
    L = float(model.n_layers + model.mtp_layers)

    tokens = mb * s / cp  # tokens of one micro-batch on one cp rank
    m_mb = np.maximum(1.0, ctx.global_batch_seqs / (dp * mb))  # micro-batches per step

    # ---- pipeline layout (Megatron-Core): the layers split evenly over the pp·vpp virtual stages;
    # else the embedding and the loss each take a layer's slot (--account-for-embedding/loss-in-
    # pipeline-split: first and last stage one layer short); else an uneven split (--decoder-first/
    # last-pipeline-num-layers, or an explicit --pipeline-model-parallel-layout with interleaving)
    # whose busiest stage holds ceil(L/pp) layers and busiest chunk ceil(L/(pp·vpp))
    vp = pp * v
    even = np.mod(L, vp) == 0
    accounted = ~even & (np.mod(L + 2.0, vp) == 0) & (pp > 1)
    slots = np.where(even, L / pp, np.where(accounted, (L + 2.0) / pp, np.ceil(L / pp)))
    chunk_slots = np.where(even, L / vp, np.where(accounted, (L + 2.0) / vp, np.ceil(L / vp)))
    short = np.where(accounted, 1.0, 0.0)  # layers the first and last stage give up
    n_first = np.where(pp > 1, slots - short, L)
    n_last = np.where(pp > 1, slots - short, L)
    n_dense = float(ctx.n_dense_layers)
    has_moe = ctx.n_moe_layers > 0
    # dense layers sit at the front (DeepSeek-V3 style), MoE layers at the back
    dense_first = np.minimum(n_dense, n_first)
    moe_first = n_first - dense_first
    dense_mid = np.clip(n_dense - n_first, 0.0, slots)
    moe_mid = slots - dense_mid
    moe_last = np.where(has_moe, np.minimum(n_last, float(ctx.n_moe_layers)), 0.0)
    dense_last = n_last - moe_last

    # expert layout: EP inside dp·cp keeps experts tensor-parallel like the dense layers (ETP = TP,
    # Megatron's default); an EP that also spans the tp ranks is Megatron-Core MoE parallel folding
    # (ETP = 1, expert ranks consecutive in rank order)
    folded = (dp * cp) % ep != 0
    etp = np.where(folded, 1.0, tp)
    dense = _layer_fwd(ctx, "dense", tokens, st, tp, ep, etp)
    moe = _layer_fwd(ctx, "moe", tokens, st, tp, ep, etp) if has_moe else {k: 0.0 * tokens for k in dense}

    # logits + loss on the last stage
    lg = ctx.logits
    m_tok = tokens
    n_v = lg.n / tp
    logit_flops = 2.0 * m_tok * n_v * lg.k
    t_logit = logit_flops / (ctx.bf16_peak * _gemm_eff(ctx, m_tok, n_v, np.full_like(tp, float(lg.k))))
    t_loss = _hbm_time(ctx, 3.0 * m_tok * n_v * 4.0)  # fp32 softmax + CE
    t_head = t_logit + t_loss

    def stage(nd: Arr, nm: Arr, head: Arr) -> dict[str, Arr]:
        out = {}
        for key in ("gemm", "attn", "elem", "flops", "sel", "sel_flops"):
            out[key] = nd * dense[key] + nm * moe[key]
        out["head"] = head
        return out

    first = stage(dense_first, moe_first, np.where(pp > 1, 0.0, t_head))
    mid = stage(dense_mid, moe_mid, 0.0 * t_head)
    last = stage(dense_last, moe_last, t_head)

    rec = st.recompute

    def fwd_bwd(sg: dict[str, Arr]) -> tuple[Arr, Arr, Arr]:
        fwd = sg["gemm"] + sg["attn"] + sg["elem"] + sg["head"]
        bwd = 2.0 * sg["gemm"] + 2.5 * sg["attn"] + 2.0 * sg["elem"] + 2.0 * sg["head"]
        recomp = np.where(rec == 2, sg["gemm"] + sg["attn"] + sg["elem"], np.where(rec == 1, sg["sel"], 0.0))
        return fwd, bwd, recomp

    # the busiest stage sets the pace: first, a middle one (pp > 2) or the last with the LM head
    f1, b1, r1 = fwd_bwd(first)
    fm, bm, rm = fwd_bwd(mid)
    f2, b2, r2 = fwd_bwd(last)
    c1, cm, c2 = f1 + b1 + r1, np.where(pp > 2, fm + bm + rm, 0.0), f2 + b2 + r2
    use_last = (c2 >= c1) & (c2 >= cm)
    use_mid = ~use_last & (cm > c1)

    def pick(a_last: Arr, a_mid: Arr, a_first: Arr) -> Arr:
        return np.where(use_last, a_last, np.where(use_mid, a_mid, a_first))

    t_fwd = pick(f2, fm, f1)
    t_bwd = pick(b2, bm, b1)
    t_rec = pick(r2, rm, r1)
    nd_s = pick(dense_last, dense_mid, dense_first)
    nm_s = pick(moe_last, moe_mid, moe_first)
    layers_s = nd_s + nm_s
    w_grad = pick(last["gemm"] + last["head"], mid["gemm"], first["gemm"])  # weight-gradient GEMMs (W)
    # the slowest model chunk paces the pipeline's warm-up and cool-down: a middle chunk of
    # slots/v layers, or the last stage's final chunk, which holds the LM head beside its layers
    per_layer_last = np.where(n_last > 0, (c2 - 3.0 * t_head) / np.maximum(n_last, 1.0), 0.0)
    chunk_last = per_layer_last * np.maximum(chunk_slots - short, 0.0) + 3.0 * t_head
    per_layer_busy = np.maximum(c1 / np.maximum(n_first, 1.0), cm / np.maximum(slots, 1.0))
    chunk_max = np.maximum(np.maximum(np.maximum(c1, cm) / v, per_layer_busy * chunk_slots), chunk_last)

    # ---- tensor parallel communication per micro-batch (per stage)
    tp_group = _group(ctx, tp, 1.0, ctx.ring_contention)
    act = tokens * h * B  # s·b·h activation of one micro-batch (bytes)
    ag = collective_time("all_gather", act, tp_group).time_s
    rs = collective_time("reduce_scatter", act, tp_group).time_s
    ar = collective_time("all_reduce", act, tp_group).time_s
    per_layer_tp = np.where(st.sp, 2.0 * (np.asarray(ag) + np.asarray(rs)), 2.0 * np.asarray(ar))
    tp_passes = 2.0 + np.where(rec == 2, 1.0, 0.0)  # forward, backward, recompute
    tp_total = np.where(tp > 1, per_layer_tp * layers_s * tp_passes, 0.0)
    tp_hidden = np.where(st.tp_overlap, ctx.cal.tp_overlap_hidden, 0.0)
    tp_exposed = tp_total * (1.0 - tp_hidden)
    tp_bytes_mb = np.where(tp > 1, np.where(st.sp, 4.0, 4.0) * act * (tp - 1) / tp * layers_s * tp_passes, 0.0)

    # ---- context parallel: ring exchange of K/V blocks, overlapped with attention
    cp_group = _group(ctx, cp, tp, ctx.ring_contention)
    dqk_dv = ctx.attn_flops_per_token / (2.0 * s * model.n_heads)  # d_qk + d_v
    kv_heads = float(model.n_heads if model.attention is not None else model.n_kv_heads)
    kv_block = tokens * np.maximum(kv_heads / tp, 1.0) * dqk_dv * B
    t_kv = np.asarray(collective_time("send_recv", kv_block, cp_group).time_s) * (cp - 1.0)
    attn_f = nd_s * dense["attn"] + nm_s * moe["attn"]
    per_layer_attn = np.where(layers_s > 0, attn_f / np.maximum(layers_s, 1.0), 0.0)
    cp_fwd = np.maximum(0.0, t_kv - per_layer_attn)
    cp_bwd = np.maximum(0.0, 2.0 * t_kv - 2.5 * per_layer_attn)
    # each ring step also merges its partial attention output into the running one (online-softmax
    # rescale: read and write the fp32 output and statistics of this rank's queries), a memory-bound
    # pass that no overlap hides: (cp - 1) forward, 2 (cp - 1) backward
    q_heads = float(model.n_heads) / tp
    merge = _hbm_time(ctx, 2.0 * tokens * q_heads * (dqk_dv / 2.0 + 1.0) * 4.0)
    cp_exposed = np.where(cp > 1, (cp_fwd + cp_bwd + 3.0 * (cp - 1.0) * merge) * layers_s, 0.0)
    cp_bytes_mb = np.where(cp > 1, 3.0 * kv_block * (cp - 1.0) * layers_s, 0.0)

    # ---- expert parallel all-to-all
    if has_moe and model.moe is not None:
        k_top = float(model.moe.top_k)
        ep_group = _group(ctx, ep, np.where(folded, 1.0, tp * cp), ctx.a2a_contention)
        # node-deduplicated dispatch (DeepEP): a token crosses the fabric once per remote domain that
        # holds one of its top-k experts; with uniform routing over N domains that is
        # (N-1)(1-(1-1/N)^k) domains instead of k(N-1)/N copies
        n_dom = np.maximum(1.0, ep / np.asarray(ep_group.per_domain, dtype=float))
        remote = (n_dom - 1.0) * (1.0 - (1.0 - 1.0 / n_dom) ** k_top)
        plain = k_top * (n_dom - 1.0) / n_dom
        dedup = np.where(st.deepep & (n_dom > 1), remote / np.maximum(plain, 1e-12), 1.0)
        ep_group = replace(ep_group, remote_dedup=dedup)
        # FP8 dispatch (DeepSeek-V3 Sec. 3.3): the forward dispatch moves 1-byte activations, the
        # combine and both backward passes 2-byte ones
        bytes_scale = np.where(st.deepep & ctx.fp8, (1.0 + 3.0 * B) / (4.0 * B), 1.0)
        a2a_bytes = tokens / np.where(st.sp, tp, 1.0) * k_top * h * B * bytes_scale
        t_a2a = np.asarray(collective_time("all_to_all", a2a_bytes, ep_group).time_s)
        passes = 4.0 + np.where(rec == 2, 2.0, 0.0)
        ep_total = np.where(ep > 1, t_a2a * passes * nm_s, 0.0)
        ep_bytes_mb = np.where(ep > 1, a2a_bytes * (ep - 1) / ep * passes * nm_s, 0.0)
    else:
        ep_total = np.zeros_like(tp)
        ep_bytes_mb = np.zeros_like(tp)
    # with batch-level overlap (DualPipe; MCore --overlap-moe-expert-parallel-comm) the all-to-all
    # of one micro-batch hides behind the other's compute, down to a floor share
    moe_compute = nm_s * (3.0 * moe["gemm"] + 3.5 * moe["attn"])
    ep_plain = ep_total * (1.0 - ctx.cal.ep_overlap_hidden)
    ep_hidden = np.maximum(ctx.cal.ep_overlap_floor * ep_total, ep_total - moe_compute)
    ep_exposed = np.where(st.ep_overlap, np.minimum(ep_plain, ep_hidden), ep_plain)

    # ---- pipeline
    # DualPipe's bubble is (PP/2 - 1) stage-times against 1F1B's PP - 1 (DeepSeek-V3 Table 2)
    # 1F1B idles (pp - 1) slowest-chunk times in warm-up and cool-down (Narayanan et al. 2021), each
    # with its share of the micro-batch's exposed TP/CP/EP communication. DualPipe (DeepSeek-V3
    # Table 2): (PP/2 - 1)(F&B + B - 3W) with F&B the overlapped forward+backward pair, B the full
    # backward, W its weight-gradient half
    comm_mb = tp_exposed + cp_exposed + ep_exposed
    one_f1b = (pp - 1.0) * (chunk_max + comm_mb / v)
    dual = np.maximum(pp / 2.0 - 1.0, 0.0) * (np.maximum(t_fwd + 2.0 * t_bwd + t_rec - 3.0 * w_grad, 0.0) + comm_mb)
    bubble = np.where(pp > 1, np.where(st.dualpipe, dual, one_f1b), 0.0)
    pp_group = _group(ctx, np.full_like(tp, 2.0), tp * cp * dp, ctx.ring_contention)
    # a pipeline boundary carries one micro-batch's s·b·h activation; with sequence parallelism it is
    # already split over tp, and Megatron's scatter/gather splits it otherwise; DeepSpeed's
    # PipelineEngine sends it whole from every tensor-parallel rank
    p2p_bytes = tokens * h * B / np.where(st.sp | st.pp_scatter, tp, 1.0)
    t_p2p = np.asarray(collective_time("send_recv", p2p_bytes, pp_group).time_s)
    # blocking p2p (Megatron-LM 2021, DeepSpeed's PipelineEngine): every send/recv of the schedule
    # sits on the critical path. Asynchronous p2p (Megatron-Core overlap_p2p_comm) runs beside the
    # next chunk's compute: only the pipeline fill and drain hops show, plus any transfer longer
    # than the chunk it hides behind.
    n_p2p = 2.0 * v * (m_mb + pp - 1.0)
    blocking = ctx.cal.pp_p2p_exposed * n_p2p * t_p2p
    chunk_fwd = t_fwd / v
    async_ = 2.0 * (pp - 1.0) * t_p2p + 2.0 * v * m_mb * np.maximum(0.0, t_p2p - chunk_fwd)
    pp_exposed = np.where(pp > 1, np.where(st.pp_overlap, async_, blocking), 0.0)
    pp_bytes = np.where(pp > 1, 2.0 * v * m_mb * p2p_bytes, 0.0)

    # ---- parameters on one GPU (busiest stage) and data-parallel communication
    P = ctx.params
    expert_per_layer = float(P.expert * P.experts_per_layer)
    dense_per_layer = float(P.attention_per_layer + 2 * h)
    layer_dense_params = dense_per_layer + float(P.dense_ffn_per_layer)
    layer_moe_nonexpert = dense_per_layer + float(P.shared_experts_per_layer + P.router_per_layer)
    emb = float(max(P.embedding, P.output))
    stage_nonexpert = nd_s * layer_dense_params + nm_s * layer_moe_nonexpert
    stage_nonexpert = stage_nonexpert + np.where(pp > 1, emb, float(P.embedding + P.output))
    p_dense = stage_nonexpert / tp
    p_expert = nm_s * expert_per_layer / (ep * etp)
    p_local = p_dense + p_expert
    dpc = dp * cp
    edp = np.maximum(1.0, tp * dpc / (ep * etp))  # expert-data-parallel replicas of each expert shard
    dp_group = _group(ctx, dpc, tp, ctx.ring_contention)
    e_stride = etp * ep * np.where(folded, 1.0, cp)
    edp_group = _group(ctx, edp, e_stride, ctx.ring_contention)
    # hybrid sharding (FSDP HYBRID_SHARD, MiCS, Megatron-Core partial distributed optimizer): ZeRO
    # shards inside groups of g consecutive data-parallel ranks and replicates across the dp·cp/g
    # groups, whose gradient shards are all-reduced once per step
    hybrid = (st.shard > 0) & (st.zero >= 1)
    g = np.where(hybrid, np.minimum(st.shard, dpc), dpc)
    g_e = np.where(hybrid, np.minimum(st.shard, edp), edp)
    rep, rep_e = dpc / g, edp / g_e
    shard_group = _group(ctx, g, tp, ctx.ring_contention)
    eshard_group = _group(ctx, g_e, e_stride, ctx.ring_contention)
    rep_group = _group(ctx, rep, tp * g, ctx.ring_contention)
    erep_group = _group(ctx, rep_e, e_stride * g_e, ctx.ring_contention)

    z = st.zero
    c = ctx.cal
    bucket = np.where(z == 3, c.zero3_bucket_params, np.maximum(c.dp_bucket_params, c.dp_bucket_params_per_rank * dpc))

    def dp_op(op: str, params: Arr, nbytes_per_param: float, group: Any, n: Arr) -> Arr:
        # the collective runs once per bucket; latency terms add up over buckets
        nb = np.maximum(1.0, np.ceil(params / bucket))
        t = np.asarray(collective_time(op, params / nb * nbytes_per_param, group).time_s) * nb
        return np.where((n > 1) & (params > 0), t, 0.0)

    nb_dense = np.maximum(1.0, np.ceil(p_dense / bucket))

    grad_b = 4.0  # fp32 main-grad reduction (Megatron --accumulate-allreduce-grads-in-fp32)
    param_b = 2.0
    zero_t = np.zeros_like(tp)

    def dp_both(
        op: str, nbytes_per_param: float, needed: bool, groups: tuple[Any, ...], scale: Arr | float = 1.0
    ) -> Arr:
        # dense parameters over their group, routed experts over the expert-data-parallel one;
        # skipped (zero) when no strategy in the batch needs this collective
        if not needed:
            return zero_t
        dense_g, dense_n, exp_g, exp_n, exp_scale = groups
        t = dp_op(op, p_dense * scale, nbytes_per_param, dense_g, dense_n)
        return t + dp_op(op, p_expert * exp_scale, nbytes_per_param, exp_g, exp_n) if has_moe else t

    full = (dp_group, dpc, edp_group, edp, 1.0)
    shards = (shard_group, g, eshard_group, g_e, 1.0)
    t_ar = dp_both("all_reduce", grad_b, bool(np.any(z == 0)), full)
    t_rs = dp_both("reduce_scatter", grad_b, bool(np.any(z >= 1)), shards)
    t_ag = dp_both("all_gather", param_b, bool(np.any(z >= 1)), shards)
    # across hybrid groups: one all-reduce of each group's gradient shard per step
    t_rep = dp_both("all_reduce", grad_b, bool(np.any(hybrid)), (rep_group, rep, erep_group, rep_e, 1.0 / g_e), 1.0 / g)
    # the overlap windows. ZeRO-0/1 reduce once per step: a bucket's gradients are final after the
    # last micro-batch's backward, so the reduction hides behind that backward; with v model chunks
    # per stage a chunk's reduction also hides behind the later chunks' backward of the cooldown
    # (Megatron-Core overlap_grad_reduce per chunk), at most the whole step's backward. Likewise the
    # parameter all-gather of the next step hides behind the first micro-batches' forward.
    spread = np.minimum(1.0 + (v - 1.0) * np.minimum(m_mb, pp), m_mb * v)
    bwd_mb = t_bwd + t_rec  # one micro-batch's backward (and its recompute) on this stage
    win_b = bwd_mb / v * spread
    win_f = t_fwd / v * spread

    def exposed(t: Arr, window: Arr, floor: float = ctx.cal.dp_exposed_floor) -> Arr:
        # overlapped buckets hide behind the window; the last bucket (and a floor share for
        # stream contention) always shows
        return np.where(st.dp_overlap, np.maximum(np.maximum(floor * t, t / nb_dense), t - window), t)

    dp_z0 = exposed(t_ar, win_b)
    # ZeRO-1 (Megatron distributed optimizer): one reduce-scatter and one all-gather per step.
    # ZeRO-2 keeps only its gradient shard, so with gradient accumulation every micro-batch's
    # gradients are reduce-scattered into it (DeepSpeed stage 2): m reduce-scatters, each hidden at
    # most behind its own micro-batch's backward.
    dp_z1 = exposed(t_rs, win_b) + exposed(t_ag, win_f)
    dp_z2 = dp_z1 + (m_mb - 1.0) * exposed(t_rs, bwd_mb, 0.0)
    # ZeRO-3 / FSDP: every micro-batch gathers the parameters before its forward and its backward
    # (and the recompute) and reduce-scatters its gradients; each collective hides at most behind
    # that micro-batch's own forward or backward; prefetching hides every bucket but the first
    n_ag_bwd = np.where(rec == 2, 2.0, 1.0)
    dp_z3 = m_mb * (exposed(t_ag, t_fwd, 0.0) + exposed(n_ag_bwd * t_ag + t_rs, bwd_mb, 0.0))
    dp_exposed = np.where(z == 0, dp_z0, np.where(z == 3, dp_z3, np.where(z == 2, dp_z2, dp_z1)))
    dp_exposed = dp_exposed + np.where(hybrid, exposed(t_rep, win_b), 0.0)
    # collectives per step: (all-reduce, reduce-scatter, all-gather)
    n_rs = np.where(z == 0, 0.0, np.where(z >= 2, m_mb, 1.0))
    n_ag = np.where(z == 0, 0.0, np.where(z == 3, m_mb * (1.0 + n_ag_bwd), 1.0))
    n_ar = np.where(z == 0, 1.0, 0.0)
    p_shard = p_dense / g + p_expert / g_e  # this rank's ZeRO shard
    dp_bytes = (
        n_ar * 2.0 * p_local * grad_b * np.where(dpc > 1, (dpc - 1) / dpc, 0.0)
        + (n_rs * p_local * grad_b + n_ag * p_local * param_b) * np.where(g > 1, (g - 1) / g, 0.0)
        + np.where(hybrid, 2.0 * p_shard * grad_b * (rep - 1.0) / rep, 0.0)
    )

    # ---- optimizer (Adam over the local shard; ZeRO>=1 shards it over data-parallel ranks)
    shard_dense = np.where(z >= 1, g, 1.0)
    shard_exp = np.where(z >= 1, g_e, 1.0)
    p_opt = p_dense / shard_dense + p_expert / shard_exp
    t_opt = _hbm_time(ctx, p_opt * ctx.cal.optimizer_bytes_per_param)

    # ---- links: how long each concern keeps each GPU's scale-up links and NIC busy per step
    busy: dict[str, dict[str, Arr]] = {k: {c: zero_t for c in COMM_KEYS} for k in LINKS}

    def charge(cat: str, count: Arr | float, op: str, nbytes: Arr | float, group: Any) -> None:
        up, nic = _link_time(ctx, op, nbytes, group)
        busy["scale_up"][cat] = busy["scale_up"][cat] + count * up
        busy["nic"][cat] = busy["nic"][cat] + count * nic

    tp_calls = np.where(tp > 1, m_mb * layers_s * tp_passes, 0.0)
    charge("tp", tp_calls * np.where(st.sp, 2.0, 0.0), "all_gather", act, tp_group)
    charge("tp", tp_calls * np.where(st.sp, 2.0, 0.0), "reduce_scatter", act, tp_group)
    charge("tp", tp_calls * np.where(st.sp, 0.0, 2.0), "all_reduce", act, tp_group)
    charge("cp", np.where(cp > 1, m_mb * 3.0 * (cp - 1.0) * layers_s, 0.0), "send_recv", kv_block, cp_group)
    if has_moe and model.moe is not None:
        charge("ep", np.where(ep > 1, m_mb * passes * nm_s, 0.0), "all_to_all", a2a_bytes, ep_group)
    charge("pp", np.where(pp > 1, 2.0 * v * m_mb, 0.0), "send_recv", p2p_bytes, pp_group)
    for count, op, nbytes_per_param in (
        (n_ar, "all_reduce", grad_b),
        (n_rs, "reduce_scatter", grad_b),
        (n_ag, "all_gather", param_b),
    ):
        full_ar = op == "all_reduce"
        charge("dp", count, op, p_dense * nbytes_per_param, dp_group if full_ar else shard_group)
        if has_moe:
            charge("dp", count, op, p_expert * nbytes_per_param, edp_group if full_ar else eshard_group)
    charge("dp", np.where(hybrid, 1.0, 0.0), "all_reduce", p_dense / g * grad_b, rep_group)
    if has_moe:
        charge("dp", np.where(hybrid, 1.0, 0.0), "all_reduce", p_expert / g_e * grad_b, erep_group)

    # conservation: on every link, the exposed communication is at least the link's busy time less
    # the compute that can overlap it. Each concern's exposed time is split over the links in
    # proportion to its busy time there; a link's shortfall is charged to the concerns that use it,
    # in proportion to their share of it (concurrent collectives share the link).
    window = m_mb * (t_fwd + t_bwd + t_rec)
    exposed_c = {
        "tp": m_mb * tp_exposed,
        "cp": m_mb * cp_exposed,
        "ep": m_mb * ep_exposed,
        "pp": pp_exposed,
        "dp": dp_exposed,
    }
    both = {q: busy["scale_up"][q] + busy["nic"][q] for q in COMM_KEYS}
    on_link = {
        k: {
            q: exposed_c[q] * np.where(both[q] > 0, busy[k][q] / np.where(both[q] > 0, both[q], 1.0), 0.0)
            for q in COMM_KEYS
        }
        for k in LINKS
    }
    link_exposed: dict[str, Arr] = {}
    for k in LINKS:
        total_busy = sum(busy[k].values(), zero_t)
        shortfall = np.maximum(0.0, total_busy - window - sum(on_link[k].values(), zero_t))
        for q in COMM_KEYS:
            extra = shortfall * np.where(total_busy > 0, busy[k][q] / np.where(total_busy > 0, total_busy, 1.0), 0.0)
            on_link[k][q] = on_link[k][q] + extra
            exposed_c[q] = exposed_c[q] + extra
        link_exposed[k] = sum(on_link[k].values(), zero_t)
    # SMs are a shared resource too: while a collective hides behind compute, its NCCL thread blocks
    # take a share of the SMs, and the compute beside it runs that much longer
    for q in COMM_KEYS:
        hidden = sum((np.maximum(busy[k][q] - on_link[k][q], 0.0) for k in LINKS), zero_t)
        exposed_c[q] = exposed_c[q] + ctx.cal.comm_sm_share * hidden

    compute_total = m_mb * (t_fwd + t_bwd)
    breakdown = {
        "compute": compute_total,
        "recompute": m_mb * t_rec,
        "tp_comm": exposed_c["tp"],
        "cp_comm": exposed_c["cp"],
        "ep_comm": exposed_c["ep"],
        "pp_bubble": bubble,
        "pp_comm": exposed_c["pp"],
        "dp_comm": exposed_c["dp"],
        "optimizer": t_opt,
    }
    # stragglers: every step synchronises all ranks (data-parallel collectives, pipeline hand-offs),
    # so it waits for the slowest; with per-rank compute jitter of coefficient of variation sigma,
    # the expected maximum of N ranks is sigma·sqrt(2 ln N) above the mean (Gaussian extreme value)
    n_sync = float(ctx.gpus)
    lag = ctx.cal.rank_jitter_cv * np.sqrt(2.0 * np.log(n_sync)) if n_sync > 1 else 0.0
    breakdown["stragglers"] = lag * (compute_total + m_mb * t_rec)
    step = sum(breakdown.values(), zero_t)

    # ---- memory per GPU (busiest stage)
    w_b = 2.0
    copies = np.where(st.dualpipe, 2.0, 1.0)  # DualPipe keeps two copies of the parameters
    weights = np.where(z == 3, p_shard, p_local) * w_b * copies
    grads = np.where(z >= 2, p_shard, p_local) * 4.0 * copies
    optim = 12.0 * p_opt  # fp32 master + Adam m, v
    # unfused attention stores softmax output, dropout mask and output: 5·a·s²·b bytes per layer
    # (Korthikanti et al. 2022, Eq. 1) unless selective recompute drops them
    scores = np.where(~st.flash & (rec == 0), 5.0 * float(model.n_heads) / tp * s * tokens, 0.0)
    # fine-grained selective recompute (fused attention) drops the norm/activation/up-projection outputs
    drop = (rec == 1) & st.flash
    act_dense = (ctx.act_dense - np.where(drop, ctx.sel_dense[0], 0.0)) * B * tokens / np.where(st.sp, tp, 1.0) + scores
    act_moe = (ctx.act_moe - np.where(drop, ctx.sel_moe[0], 0.0)) * B * tokens / np.where(st.sp, tp, 1.0) + scores

    # micro-batches in flight on pipeline rank r: min(m, pp - r) with 1F1B; with interleaving
    # ((pp - r - 1)·2 + (v - 1)·pp + 1)/v stage-equivalents (Megatron-Core warm-up). The first
    # stage holds the most, which is why layouts give it fewer layers: the busiest stage in memory
    # is the largest of first, middle and last
    def inflight(r: Arr | float) -> Arr:
        inter = np.minimum(m_mb, pp) * (1.0 + (pp - 1.0 - 2.0 * r) / (pp * v))
        return np.asarray(np.where(pp > 1, np.where(v > 1, inter, np.minimum(m_mb, pp - r)), 1.0))

    def stage_act(nd: Arr, nm: Arr) -> Arr:
        full_l = np.where(nm > 0, act_moe, act_dense)
        stored = nd * act_dense + nm * act_moe
        ckpt = (nd + nm) * 2.0 * h * tokens / np.where(st.sp, tp, 1.0) + full_l
        return np.asarray(np.where(rec == 2, ckpt, stored))

    logits_mem = tokens * (ctx.model.vocab / tp) * 6.0
    act_first = stage_act(dense_first, moe_first) * inflight(0.0) + np.where(pp == 1, logits_mem, 0.0)
    act_mid = np.where(pp > 2, stage_act(dense_mid, moe_mid) * inflight(1.0), 0.0)
    act_last = np.where(pp > 1, stage_act(dense_last, moe_last) * inflight(pp - 1.0) + logits_mem, 0.0)
    activations = np.maximum(np.maximum(act_first, act_mid), act_last)
    z3_buf = np.where(z == 3, 2.0 * layer_dense_params / tp * w_b * 2.0, 0.0)
    buffers = ctx.cal.framework_overhead_bytes + z3_buf + np.minimum(p_local * 4.0, 2.0 * 40e6 * 4.0)
    # margins real runs have: the caching allocator's fragmentation of the tensors allocated and
    # freed every step (activations, gathered ZeRO-3 parameters; Megatron-Core and FSDP keep
    # parameters, gradients and optimizer states in buffers allocated once), and NCCL's buffers for
    # every communicator this rank belongs to
    tensors = activations + z3_buf
    n_comms = (
        1.0
        + (tp > 1)
        + (cp > 1)
        + (pp > 1)
        + (dpc > 1)
        + (hybrid & (rep > 1))
        + ((ep > 1) if has_moe else 0.0)
        + ((edp > 1) if has_moe else 0.0)
    )
    buffers = buffers + ctx.cal.allocator_fragmentation * tensors + ctx.cal.nccl_bytes_per_communicator * n_comms
    total_mem = weights + grads + optim + activations + buffers

    tokens_step = float(ctx.global_batch_seqs) * s
    tps_gpu = tokens_step / (step * ctx.gpus)
    mfu = ctx.model_flops_per_token * tokens_step / (step * ctx.gpus * ctx.mfu_peak)
    # HFU adds recomputed FLOPs: the whole forward (full) or what selective recompute re-runs (the
    # attention core when unfused, MLA up-projections when fused), relative to forward + backward
    fwd_flops = nd_s * dense["flops"] + nm_s * moe["flops"]
    sel_fwd = nd_s * dense["sel_flops"] + nm_s * moe["sel_flops"]
    rec_flops = np.where(rec == 2, fwd_flops, np.where(rec == 1, sel_fwd, 0.0))
    hfu = mfu * (1.0 + rec_flops / np.maximum(3.0 * fwd_flops, 1.0))
    return {
        "step_time_s": step,
        "breakdown": breakdown,
        "memory": {
            "weights": weights,
            "gradients": grads,
            "optimizer": optim,
            "activations": activations,
            "buffers": buffers,
        },
        "memory_bytes": total_mem,
        "fits": total_mem <= ctx.hbm_usable,
        "tokens_per_s_per_gpu": tps_gpu,
        "mfu": mfu,
        "hfu": hfu,
        "micro_batches": m_mb,
        "traffic": {
            "tp": m_mb * tp_bytes_mb,
            "cp": m_mb * cp_bytes_mb,
            "ep": m_mb * ep_bytes_mb,
            "pp": pp_bytes,
            "dp": dp_bytes,
        },
        "links": {k: {"busy": busy[k], "exposed": link_exposed[k]} for k in LINKS},
        "overlap_window": window,
        "params_per_gpu": p_local,
        "layers_per_stage": layers_s,
    }
