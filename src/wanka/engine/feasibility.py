"""Which strategies can run at all: divisibility, heads, experts, layers, batch, memory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy.typing as npt

from wanka import npx as np  # numpy, with fast paths for one strategy (numpy scalars)
from wanka.engine.context import Context
from wanka.engine.strategies import Strategies

__all__ = ["PIPELINE_SPLIT_RULES", "REASONS", "RULE_FIELDS", "check", "cp_a2a_size"]

# Each reason names the rule, what it needs and the fix. The pipeline-split rules (4-6) follow the
# Megatron-Core release of the scenario's software (Context.splits, from the catalog's software
# table): NVIDIA/Megatron-LM megatron/training/arguments.py and transformer_config.py at the tags.
REASONS = (
    "world size: tp·pp·dp·cp must equal the job's GPUs; change dp (or job_gpus)",
    "tensor parallel: tp must divide n_heads; choose a tp that divides the attention heads",
    "tensor parallel: tp and n_kv_heads must divide one another; choose a tp that divides the KV heads or a "
    "multiple of them",
    "pipeline stages: pp·vpp exceeds n_layers + 2 (each virtual stage holds at least one layer, the embedding "
    "or the loss); lower pp or vpp",
    "pipeline split: pp does not split n_layers in a way this release builds (Megatron-LM and Megatron-Core "
    "< 0.9: pp divides n_layers; 0.9+: uneven first/last stages, --decoder-first/last-pipeline-num-layers, "
    "with n_layers >= pp; 0.11+: also n_layers + 1 or + 2 divisible by pp, --account-for-embedding/loss-in-"
    "pipeline-split; 0.13+: any split, --pipeline-model-parallel-layout); choose a pp that divides n_layers "
    "or give a newer software.release",
    "interleaved pipeline split: pp·vpp does not split n_layers in a way this release builds (Megatron-LM and "
    "Megatron-Core < 0.11: pp·vpp divides n_layers; 0.11+: also n_layers + 1 or + 2 divisible by pp·vpp, or "
    "vpp dividing n_layers with n_layers/vpp >= pp, --num-virtual-stages-per-pipeline-rank with uneven "
    "first/last stages; 0.13+: any split, --pipeline-model-parallel-layout, with MTP layers from 0.14); "
    "choose a vpp that divides n_layers/pp or give a newer software.release",
    "interleaved schedule: vpp > 1 needs pp > 2, or pp = 2 with pp_comm_overlap (Megatron overlap_p2p_comm, "
    "Megatron-Core 0.8+); set vpp 1, a pp above 2 or pp_comm_overlap: true",
    "batch: global batch must be divisible by dp × micro_batch; change global_batch_seqs or micro_batch",
    "interleaved schedule: micro-batches per step (global batch / (dp × micro_batch)) must be a multiple of pp "
    "(Megatron-Core's default micro-batch group); change the batch or micro_batch, or set vpp 1",
    "expert parallel: ep must divide n_experts; choose an ep that divides the experts",
    "expert parallel: ep must divide tp × dp × cp; choose an ep that divides tp·dp·cp",
    "context parallel: seq_len must be divisible by 2·cp (load-balanced causal context parallel); lower cp",
    "sequence parallel: seq_len must be divisible by tp; choose another tp or sp: false",
    "expert parallel: ep > 1 needs an MoE model; set ep 1",
    "interleaved schedule: vpp > 1 needs pp > 1; set vpp 1",
    "DualPipe: needs an even pp >= 2 and no interleaving (vpp 1); choose an even pp and vpp 1, or pp_schedule 1f1b",
    "ZeRO shard group: zero_shard_group must divide dp·cp; choose a divisor of dp·cp (0 = all)",
    "cp_comm_type a2a: cp must divide the attention heads and the KV heads per tp rank (Ulysses all-to-all "
    "splits heads over cp); lower cp or use cp_comm_type p2p",
    "cp_comm_type a2a+p2p: the all-to-all group (cp_a2a_size) must divide cp, the attention heads and the KV "
    "heads per tp rank; choose another cp_a2a_size",
    "activation offload: offload_layers needs pp = 1, recompute none, fewer layers than the model has and a "
    "framework that offloads activations (Megatron-Core 0.5+ cpu_offloading; software activation_offload); set "
    "offload_layers 0 or meet those",
    "block recompute: recompute_layers needs recompute full (Megatron-Core --recompute-method block); "
    "set recompute full or recompute_layers null",
    "optimizer muon: Megatron-Core runs Muon with every rank stepping all its parameters (zero 0) or as its "
    "layer-wise distributed optimizer over all dp·cp ranks (zero 1), never with sharded gradients or "
    "parameters (zero 2, 3) or a partial shard group; set zero 0 or 1 and zero_shard_group null, or optimizer adam",
    "zero-bubble pipeline (ZB-H1): no interleaving (its schedule runs one model chunk per rank); set vpp 1, or "
    "pp_schedule 1f1b",
)

# the scenario field each rule asks to change first (its reason names the others)
RULE_FIELDS = (
    "parallel.dp",
    "parallel.tp",
    "parallel.tp",
    "parallel.pp",
    "parallel.pp",
    "parallel.vpp",
    "parallel.vpp",
    "training.micro_batch",
    "parallel.vpp",
    "parallel.ep",
    "parallel.ep",
    "parallel.cp",
    "parallel.tp",
    "parallel.ep",
    "parallel.vpp",
    "parallel.pp",
    "parallel.zero_shard_group",
    "parallel.cp",
    "parallel.cp_a2a_size",
    "parallel.offload_layers",
    "parallel.recompute_layers",
    "parallel.zero",
    "parallel.vpp",
)
assert len(RULE_FIELDS) == len(REASONS)
PIPELINE_SPLIT_RULES = (4, 5, 6)  # the rules that follow the software release (Context.splits)


def check(ctx: Context, st: Strategies) -> npt.NDArray[np.int64]:
    """Index into :data:`REASONS` of the first violated rule per strategy, -1 when feasible (one
    strategy of numpy scalars, :meth:`Strategies.scalars`: a one-element array)."""
    m = ctx.model
    L = m.n_layers + m.mtp_layers
    one = not isinstance(st.tp, np.ndarray)
    code = np.full(1 if one else len(st), -1, dtype=np.int64)
    # a batch: 1 + the first rule broken (0: none so far) in one byte per strategy, and the strategies
    # no rule has caught yet (boolean operations on bytes, no scattered writes into an int64 column)
    first = np.zeros(len(code), dtype=np.int8)
    ok = np.ones(len(code), dtype=bool)

    def rule(i: int, bad: npt.NDArray[np.bool_]) -> None:
        if one:
            if bad and code[0] < 0:
                code[0] = i
        else:
            hit = ok & bad
            np.logical_and(ok, np.logical_not(bad), out=ok)
            np.add(first, hit * np.int8(i + 1), out=first)

    world = st.tp * st.pp * st.dp * st.cp
    rule(0, world != ctx.gpus)
    rule(1, m.n_heads % st.tp != 0)
    kv = m.n_heads if m.attention is not None else m.n_kv_heads
    rule(2, (kv % st.tp != 0) & (st.tp % kv != 0))
    rule(3, st.pp * st.vpp > L + 2)
    _pipeline_split(ctx, st, rule)
    rule(7, ctx.global_batch_seqs % (st.dp * st.micro_batch) != 0)
    m_mb = ctx.global_batch_seqs // np.maximum(1, st.dp * st.micro_batch)
    rule(8, (st.vpp > 1) & (m_mb % st.pp != 0))
    if m.moe is not None:
        rule(9, m.moe.n_experts % st.ep != 0)
    # EP beyond dp·cp folds over the tp ranks (Megatron-Core MoE parallel folding, ETP = 1)
    rule(10, (st.tp * st.dp * st.cp) % st.ep != 0)
    rule(11, (st.cp > 1) & (ctx.seq_len % (2 * st.cp) != 0))
    rule(12, st.sp & (st.tp > 1) & (ctx.seq_len % st.tp != 0))
    if m.moe is None:
        rule(13, st.ep > 1)
    rule(14, (st.vpp > 1) & (st.pp == 1))
    # (rules whose leading condition holds for no strategy of the batch are skipped: none breaks them)
    if np.any(st.dualpipe):
        rule(15, st.dualpipe & ((st.pp < 2) | (st.pp % 2 != 0) | (st.vpp > 1)))
    if np.any(st.shard > 0):
        rule(16, (st.shard > 0) & ((st.dp * st.cp) % np.maximum(st.shard, 1) != 0))
    # Ulysses (DeepSpeed-Ulysses; TE AttnFuncWithCPAndQKVOA2A) gives each cp rank heads/cp whole heads
    # of Q and of K/V; with tp > kv heads each tp rank holds one replicated KV head, which cannot split
    if np.any(st.cp_comm >= 2):
        q_heads = m.n_heads // st.tp
        kv_heads = np.maximum(kv // st.tp, 1)
        a2a = cp_a2a_size(ctx, st)

        def splits(g: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
            return np.asarray((q_heads % g == 0) & (kv_heads % g == 0))

        rule(17, (st.cp_comm == 2) & (st.cp > 1) & ~splits(st.cp))
        rule(18, (st.cp_comm == 3) & (st.cp > 1) & ((st.cp % a2a != 0) | ~splits(a2a)))
    if np.any(st.offload > 0):
        # a framework without the mechanism (its switch), or a Megatron-Core before 0.5, offloads nothing
        no_offload = ~st.offload_ok | (not ctx.splits.cpu_offloading)
        rule(19, (st.offload > 0) & ((st.pp > 1) | (st.recompute != 0) | (st.offload >= L) | no_offload))
    if np.any(st.rc_layers >= 0):
        rule(20, (st.rc_layers >= 0) & (st.recompute != 2))
    # Muon: Megatron-Bridge v0.5.0 kimi_k2.py sets use_distributed_optimizer False for Muon ("Muon needs
    # this to be False"); LayerWiseDistributedOptimizer shards whole parameters over dp_cp / expt_dp
    # (NVIDIA/Megatron-LM megatron/core/optimizer/layer_wise_optimizer.py), and Megatron-LM's
    # arguments.py asserts "Emerging optimizer does not support Torch-FSDP2 / Megatron-FSDP"
    if ctx.training.optimizer == "muon":
        rule(21, (st.zero >= 2) | (st.shard > 0))
    if np.any(st.zero_bubble):
        rule(22, st.zero_bubble & (st.vpp > 1))
    return code if one else np.asarray(first.astype(np.int64) - 1)


def _pipeline_split(ctx: Context, st: Strategies, rule: Callable[[int, Any], None]) -> None:
    """Rules 4-6: the splits of the decoder layers over pp·vpp stages that the scenario's Megatron-Core
    release can build (:class:`wanka.catalog.software.PipelineSplits`; a framework without Megatron-Core's
    pipeline code: none of them). Megatron-Core counts MTP layers apart from ``num_layers`` (they sit on
    the last stage), so the divisibility is on ``n_layers``."""
    sp = ctx.splits
    if not sp.megatron:
        return
    interleaved = st.vpp > 1
    if not sp.pp2_interleaved:
        rule(6, interleaved & (st.pp == 2))
    elif not np.all(st.pp_overlap):  # with overlapped p2p everywhere no strategy breaks it
        rule(6, interleaved & (st.pp == 2) & ~st.pp_overlap)
    if sp.layout(ctx.model.mtp_layers > 0):
        return  # --pipeline-model-parallel-layout builds any split
    n = ctx.model.n_layers
    vp = st.pp * st.vpp
    uneven = (st.pp > 1) & (n % vp != 0)
    if sp.accounted:
        # --account-for-embedding/loss-in-pipeline-split: n + 1 or n + 2 divide evenly
        uneven = uneven & ((n + 1) % vp != 0) & ((n + 2) % vp != 0)
    # without interleaving, uneven first/last stages (0.9+) take any split with a layer per stage
    flat = ~interleaved & (n >= st.pp) if sp.first_last else np.zeros_like(interleaved)
    rule(4, uneven & ~interleaved & ~flat)
    # interleaved uneven first/last stages (0.11+): vpp divides the first, the last and each middle
    # stage's layers (--num-virtual-stages-per-pipeline-rank)
    inter_ok = (n % st.vpp == 0) & (n // st.vpp >= st.pp) if sp.accounted else np.zeros_like(interleaved)
    rule(5, uneven & interleaved & ~inter_ok)


def cp_a2a_size(ctx: Context, st: Strategies) -> npt.NDArray[np.int64]:
    """Ranks of the all-to-all group of each strategy's context parallelism: cp for ``a2a``, the inner
    group of ``a2a+p2p`` (given when cp > 1, or the cp ranks that share a scale-up domain: cp ranks sit ``tp`` apart
    in Megatron's rank order), 1 for ``p2p`` and ``all_gather``."""
    if not np.any(st.cp_comm >= 2):  # no all-to-all variant in the batch
        return np.asarray(np.ones_like(st.cp))
    domain = int(ctx.cluster.scale_up.domain_size)
    auto = np.minimum(st.cp, np.maximum(1, domain // np.maximum(st.tp, 1)))
    # the largest power-of-two divisor of cp that fits the domain (cp is searched in powers of two)
    auto = np.asarray(np.gcd(st.cp, auto), dtype=np.int64)
    # without context parallelism (cp 1) there is no all-to-all group, whatever cp_a2a_size says
    inner = np.where(st.cp_a2a > 0, np.where(st.cp > 1, st.cp_a2a, 1), auto)
    return np.asarray(np.where(st.cp_comm == 2, st.cp, np.where(st.cp_comm == 3, inner, 1)), dtype=np.int64)
