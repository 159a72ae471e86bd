"""Which strategies can run at all: divisibility, heads, experts, layers, batch, memory."""

from __future__ import annotations

import numpy.typing as npt

from wanka import npx as np  # numpy, with fast paths for one strategy (numpy scalars)
from wanka.engine.context import Context
from wanka.engine.strategies import Strategies

__all__ = ["REASONS", "check", "cp_a2a_size"]

REASONS = (
    "world size: tp·pp·dp·cp must equal the job's GPUs",
    "tp must divide n_heads",
    "tp and n_kv_heads must divide one another",
    "pp·vpp exceeds n_layers + 2 (the embedding and the loss may each fill a virtual stage)",
    "each virtual pipeline stage needs at least one layer",
    "global batch must be divisible by dp × micro_batch",
    "interleaved schedule needs micro-batches divisible by pp",
    "ep must divide n_experts",
    "ep must divide tp × dp × cp",
    "seq_len must be divisible by 2·cp (load-balanced causal context parallel)",
    "seq_len must be divisible by tp (sequence parallel)",
    "ep > 1 needs an MoE model",
    "vpp > 1 needs pp > 1",
    "DualPipe needs an even pp >= 2 and no interleaving",
    "zero_shard_group must divide dp·cp",
    "cp_comm_type a2a: cp must divide the attention heads and the KV heads per tp rank (Ulysses all-to-all "
    "splits heads over cp)",
    "cp_comm_type a2a+p2p: the all-to-all group (cp_a2a_size) must divide cp, the attention heads and the KV "
    "heads per tp rank",
    "activation offload (offload_layers) needs pp = 1, recompute none and fewer layers than the model has "
    "(Megatron-Core cpu_offloading)",
)


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
    # Megatron --account-for-embedding/loss-in-pipeline-split and custom pipeline layouts let the
    # embedding and the loss take a virtual stage of their own
    rule(3, st.pp * st.vpp > L + 2)
    # Megatron-Core's split flags need the layers (or layers + embedding + loss) to divide evenly over
    # pp·vpp; other splits need an explicit --pipeline-model-parallel-layout (as NVIDIA's DeepSeek-V3
    # recipes use for 61 layers on pp 4 x vpp 4); the engine paces those by their largest chunk
    rule(4, (st.vpp > 1) & (st.pp * st.vpp > L + 2))
    rule(5, ctx.global_batch_seqs % (st.dp * st.micro_batch) != 0)
    m_mb = ctx.global_batch_seqs // np.maximum(1, st.dp * st.micro_batch)
    rule(6, (st.vpp > 1) & (m_mb % st.pp != 0))
    if m.moe is not None:
        rule(7, m.moe.n_experts % st.ep != 0)
    # EP beyond dp·cp folds over the tp ranks (Megatron-Core MoE parallel folding, ETP = 1)
    rule(8, (st.tp * st.dp * st.cp) % st.ep != 0)
    rule(9, (st.cp > 1) & (ctx.seq_len % (2 * st.cp) != 0))
    rule(10, st.sp & (st.tp > 1) & (ctx.seq_len % st.tp != 0))
    if m.moe is None:
        rule(11, st.ep > 1)
    rule(12, (st.vpp > 1) & (st.pp == 1))
    # (rules whose leading condition holds for no strategy of the batch are skipped: none breaks them)
    if np.any(st.dualpipe):
        rule(13, st.dualpipe & ((st.pp < 2) | (st.pp % 2 != 0) | (st.vpp > 1)))
    if np.any(st.shard > 0):
        rule(14, (st.shard > 0) & ((st.dp * st.cp) % np.maximum(st.shard, 1) != 0))
    # Ulysses (DeepSpeed-Ulysses; TE AttnFuncWithCPAndQKVOA2A) gives each cp rank heads/cp whole heads
    # of Q and of K/V; with tp > kv heads each tp rank holds one replicated KV head, which cannot split
    if np.any(st.cp_comm >= 2):
        q_heads = m.n_heads // st.tp
        kv_heads = np.maximum(kv // st.tp, 1)
        a2a = cp_a2a_size(ctx, st)

        def splits(g: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
            return np.asarray((q_heads % g == 0) & (kv_heads % g == 0))

        rule(15, (st.cp_comm == 2) & (st.cp > 1) & ~splits(st.cp))
        rule(16, (st.cp_comm == 3) & (st.cp > 1) & ((st.cp % a2a != 0) | ~splits(a2a)))
    if np.any(st.offload > 0):
        rule(17, (st.offload > 0) & ((st.pp > 1) | (st.recompute != 0) | (st.offload >= L)))
    return code if one else np.asarray(first.astype(np.int64) - 1)


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
