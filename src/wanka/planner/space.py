"""The space of parallel strategies for one job, enumerated with pruning.

Shape rules first, memory second, time last:

1. **shapes** ``(tp, cp, pp, dp, ep)`` with ``tp·cp·pp·dp = GPUs``: ``tp`` divides the attention heads
   (and is divided by or divides the KV heads), stays inside one scale-up domain (Megatron-LM keeps
   TP on NVLink; Narayanan et al. 2021 Sec. 3.2); ``cp`` is a power of two with ``seq_len`` divisible
   by ``2·cp`` (load-balanced causal ring attention); ``pp ≤ layers``; ``dp`` divides the global batch;
   ``ep`` divides the experts and ``dp·cp`` (MoE only).
2. **memory**: each shape is evaluated once at its least-memory settings (micro-batch 1, full
   recompute, vpp 1, every ZeRO stage); a shape none of whose variants fits in HBM is dropped whole.
3. the surviving shapes are crossed with micro-batch (divisors of the per-replica batch),
   vpp (``pp·vpp ≤ layers + 2``, micro-batches divisible by ``pp``; which uneven splits exist follows
   the software's Megatron-Core release, engine rules 4-6; uneven chunks are paced by the
   largest), ZeRO 0-3 and recompute none/selective/full; ``sp`` is on whenever ``tp > 1``. Where
   ``pp = 1`` and recompute is none, activation offload (``offload_layers``: the saved activations of
   the first k/8 of the layers kept in host memory, Transformer Engine's CPU offload as Megatron-Core's
   ``cpu_offloading_num_layers`` runs it; Megatron-Core allows it with neither pipelining nor
   recompute) is tried too, so a layout that fits only by offloading (FSDP on a Grace superchip's
   coherent host link) is found; the engine holds what is offloaded to the node's host memory. Where
   ``cp > 1`` the context-parallel exchange (``cp_comm_type``: ring, all-gather, Ulysses all-to-all
   where the heads per tp rank split over cp, all-to-all inside the scale-up domain + ring across it
   where that differs from both) is
   chosen once per shape: the fastest of those that fit at the shape's least-memory settings (ties go
   to the ring), so the space does not grow fourfold (it is ~90% cp > 1 shapes for a 4K-token MoE job).

Every row the space yields still passes through :func:`wanka.engine.evaluate_batch`, whose
feasibility rules are the ground truth; the rules here only keep the batch small.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from wanka.engine import CP_COMM_CODES, Context, Strategies, evaluate_batch
from wanka.engine.strategies import OFFLOAD_EIGHTHS, offload_layer_counts
from wanka.errors import SpecError

__all__ = ["SearchSpace", "SpaceCounts", "cp_comm_candidates", "enumerate_space", "shape_candidates"]

MAX_CP = 64  # ring attention beyond 64 ranks is not used in any published run
CHUNK_ROWS = 65_536  # rows per evaluate_batch call (bounds peak memory)
MAX_ROWS = 1_000_000  # hard bound on one search's size (rows × ~20 float columns in memory)


@dataclass(frozen=True)
class SearchSpace:
    """Bounds of the enumeration (the defaults cover every published layout)."""

    micro_batches: tuple[int, ...] = (1, 2, 4, 8)
    vpp_max: int = 8
    zero: tuple[int, ...] = (0, 1, 2, 3)
    recompute: tuple[int, ...] = (0, 1, 2)  # 0 none, 1 selective, 2 full
    max_cp: int = MAX_CP
    max_ep: int | None = None  # None: up to the expert count
    memory_prune: bool = True
    # hybrid sharding: ZeRO shard-group sizes to try besides sharding over all dp·cp ranks (0); a size
    # is used where it divides dp·cp and is smaller (FSDP HYBRID_SHARD / MiCS)
    shard_groups: tuple[int, ...] = (0,)
    # context-parallel exchanges tried where cp > 1 (ParallelSpec.cp_comm_type)
    cp_comm: tuple[str, ...] = ("p2p", "all_gather", "a2a", "a2a+p2p")
    # activation offload where pp = 1 and recompute none: the first k/8 of the layers for each k given
    # (() = never offload); as the validator completes an unpublished setting (validate.run)
    offload_eighths: tuple[int, ...] = OFFLOAD_EIGHTHS


@dataclass
class SpaceCounts:
    """How many candidates each stage of the enumeration kept or dropped."""

    shapes_considered: int = 0
    shapes_kept: int = 0
    shapes_pruned: dict[str, int] = field(default_factory=dict)
    shapes_no_fit: int = 0
    strategies: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "shapes_considered": self.shapes_considered,
            "shapes_kept": self.shapes_kept,
            "shapes_pruned": dict(self.shapes_pruned),
            "shapes_no_fit": self.shapes_no_fit,
            "strategies": self.strategies,
        }


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _powers_of_two(limit: int) -> list[int]:
    out, v = [], 1
    while v <= limit:
        out.append(v)
        v *= 2
    return out


def shape_candidates(ctx: Context, space: SearchSpace, counts: SpaceCounts) -> list[tuple[int, int, int, int, int]]:
    """``(tp, cp, pp, dp, ep)`` tuples that pass the shape rules; drops are tallied in ``counts``."""
    m = ctx.model
    n = ctx.gpus
    layers = m.n_layers + m.mtp_layers
    kv = m.n_heads if m.attention is not None else m.n_kv_heads
    domain = ctx.cluster.scale_up.domain_size
    pruned: Counter[str] = Counter()
    out: list[tuple[int, int, int, int, int]] = []
    for tp in _divisors(n):
        if m.n_heads % tp:
            pruned["tp does not divide n_heads"] += 1
            continue
        if kv % tp and tp % kv:
            pruned["tp and n_kv_heads do not divide one another"] += 1
            continue
        if tp > domain:
            pruned["tp exceeds the scale-up domain"] += 1
            continue
        for cp in _powers_of_two(min(space.max_cp, n // tp)):
            if (n // tp) % cp:
                continue
            if cp > 1 and ctx.seq_len % (2 * cp):
                pruned["seq_len not divisible by 2·cp"] += 1
                continue
            for pp in _divisors(n // (tp * cp)):
                counts.shapes_considered += 1
                if pp > layers:
                    pruned["pp exceeds the layers"] += 1
                    continue
                dp = n // (tp * cp * pp)
                if ctx.global_batch_seqs % dp:
                    pruned["global batch not divisible by dp"] += 1
                    continue
                for ep in _ep_candidates(ctx, space, dp * cp):
                    out.append((tp, cp, pp, dp, ep))
    counts.shapes_pruned = dict(sorted(pruned.items()))
    return out


def _ep_candidates(ctx: Context, space: SearchSpace, dpc: int) -> list[int]:
    moe = ctx.model.moe
    if moe is None:
        return [1]
    cap = moe.n_experts if space.max_ep is None else min(space.max_ep, moe.n_experts)
    return [e for e in _divisors(moe.n_experts) if e <= cap and dpc % e == 0]


def cp_comm_candidates(ctx: Context, space: SearchSpace, tp: int, cp: int) -> list[int]:
    """Codes of the context-parallel exchanges to try for ``tp`` x ``cp``: ring and all-gather always;
    Ulysses all-to-all where cp divides the attention and KV heads per tp rank; the hierarchical one
    where its inner group (the cp ranks of one scale-up domain) is neither 1 (= ring) nor cp (= a2a)
    and splits the heads."""
    if cp <= 1:
        return [CP_COMM_CODES["p2p"]]
    m = ctx.model
    kv = m.n_heads if m.attention is not None else m.n_kv_heads
    q_heads, kv_heads = m.n_heads // tp, max(kv // tp, 1)
    inner = math.gcd(cp, min(cp, max(1, ctx.cluster.scale_up.domain_size // tp)))

    def splits(g: int) -> bool:
        return q_heads % g == 0 and kv_heads % g == 0

    ok = {"p2p": True, "all_gather": True, "a2a": splits(cp), "a2a+p2p": 1 < inner < cp and splits(inner)}
    return [CP_COMM_CODES[k] for k in space.cp_comm if ok.get(k, False)] or [CP_COMM_CODES["p2p"]]


def _columns(
    rows: Sequence[tuple[int, ...]], names: tuple[str, ...], switches: dict[str, bool] | None = None
) -> Strategies:
    a = np.asarray(rows, dtype=np.int64).reshape(-1, len(names))
    cols: dict[str, Any] = {k: a[:, i] for i, k in enumerate(names)}
    cols["sp"] = cols["tp"] > 1
    return Strategies.from_columns(**(switches or {}), **cols)


_SHAPE = ("tp", "cp", "pp", "dp", "ep")
_FULL = ("tp", "cp", "pp", "dp", "ep", "micro_batch", "vpp", "zero", "recompute", "shard", "cp_comm", "offload")


def _memory_survivors(
    ctx: Context,
    shapes: list[tuple[int, int, int, int, int]],
    space: SearchSpace,
    switches: dict[str, bool] | None = None,
) -> list[tuple[int, int, int, int, int]]:
    """Shapes with at least one least-memory variant (mb 1, full recompute, vpp 1) that fits."""
    if not shapes or not space.memory_prune:
        return shapes
    least_rec = max(space.recompute)
    mb = min(space.micro_batches)
    rows = [(*s, mb, 1, z, least_rec, 0, 0, 0) for s in shapes for z in space.zero]  # ring: the least memory
    res = evaluate_batch(ctx, _columns(rows, _FULL, switches), 1.0)
    fits = np.asarray(np.any(np.asarray(res.fits).reshape(len(shapes), len(space.zero)), axis=1), dtype=bool)
    return [s for i, s in enumerate(shapes) if fits[i]]


def _cp_comm_choice(
    ctx: Context,
    shapes: list[tuple[int, int, int, int, int]],
    space: SearchSpace,
    switches: dict[str, bool] | None = None,
) -> dict[tuple[int, int, int, int, int], int]:
    """Each shape's context-parallel exchange: the fastest that fits at the least-memory settings (mb
    min, vpp 1, the largest recompute and ZeRO stage tried); the ring when none fits."""
    least_rec = max(space.recompute)
    mb = min(space.micro_batches)
    z = max(space.zero)
    rows: list[tuple[int, ...]] = []
    keys: list[tuple[tuple[int, int, int, int, int], int]] = []
    for sh in shapes:
        kinds = cp_comm_candidates(ctx, space, sh[0], sh[1])
        if len(kinds) > 1:
            for c in kinds:
                rows.append((*sh, mb, 1, z, least_rec, 0, c, 0))
                keys.append((sh, c))
    choice = {sh: (cp_comm_candidates(ctx, space, sh[0], sh[1]) or [0])[0] for sh in shapes}
    if not rows:
        return choice
    res = evaluate_batch(ctx, _columns(rows, _FULL, switches), 1.0)
    step = np.where(np.asarray(res.fits, dtype=bool), np.asarray(res.step_time_s, dtype=float), np.inf)
    best: dict[tuple[int, int, int, int, int], tuple[float, int]] = {}
    for (sh, c), t in zip(keys, step.tolist(), strict=True):
        if sh not in best or t < best[sh][0] or (t == best[sh][0] and c < best[sh][1]):
            best[sh] = (t, c)
    for sh, (t, c) in best.items():
        choice[sh] = c if np.isfinite(t) else 0
    return choice


def enumerate_space(
    ctx: Context, space: SearchSpace | None = None, switches: dict[str, bool] | None = None
) -> tuple[Strategies, SpaceCounts]:
    """Every candidate strategy for ``ctx``'s job after shape and memory pruning. ``switches``: the
    software columns every candidate runs with (:func:`wanka.engine.strategies.software_columns` of
    the scenario's framework; default: ParallelSpec's), so a framework's schedule (DualPipe), dispatch
    (DeepEP) and overlaps take part in the ranking."""
    space = space or SearchSpace()
    counts = SpaceCounts()
    shapes = shape_candidates(ctx, space, counts)
    kept = _memory_survivors(ctx, shapes, space, switches)
    counts.shapes_no_fit = len(shapes) - len(kept)
    counts.shapes_kept = len(kept)
    m = ctx.model
    layers = m.n_layers + m.mtp_layers
    rows: list[tuple[int, ...]] = []
    cp_kind = _cp_comm_choice(ctx, kept, space, switches)
    # offloaded layer counts where the scenario's framework offloads activations at all
    can_offload = (switches or {}).get("offload_ok", True) and ctx.splits.cpu_offloading
    offloads = offload_layer_counts(layers, space.offload_eighths) if can_offload else []
    for tp, cp, pp, dp, ep in kept:
        dpc = dp * cp
        shards = [0] + [g for g in space.shard_groups if 1 < g < dpc and dpc % g == 0]
        kinds = [cp_kind[(tp, cp, pp, dp, ep)]]
        # activation offload only with no pipelining and no recompute (Megatron-Core cpu_offloading)
        offs = [0, *offloads] if pp == 1 else [0]
        tail = [
            (z, r, g, c, o)
            for z in space.zero
            for r in space.recompute
            for g in shards
            if g == 0 or z >= 1
            for c in kinds
            for o in (offs if r == 0 else (0,))
        ]
        per_replica = ctx.global_batch_seqs // dp
        for mb in space.micro_batches:
            if per_replica % mb:
                continue
            n_mb = per_replica // mb
            vpps = [1] if pp == 1 else [v for v in range(1, space.vpp_max + 1) if pp * v <= layers + 2]
            for v in vpps:
                if v > 1 and n_mb % pp:
                    continue
                rows.extend((tp, cp, pp, dp, ep, mb, v, z, r, g, c, o) for z, r, g, c, o in tail)
        if len(rows) > MAX_ROWS:
            raise SpecError(
                f"more than {MAX_ROWS:,} strategies to evaluate; narrow the space (fewer micro-batch sizes, "
                "a lower vpp_max or max_ep)",
                field="search",
            )
    counts.strategies = len(rows)
    return _columns(rows, _FULL, switches), counts
