"""A batch of parallel strategies as numpy arrays (one element per strategy)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from wanka.spec.training import ParallelSpec

__all__ = ["CP_COMM_CODES", "RECOMPUTE_CODES", "Strategies", "software_columns"]

RECOMPUTE_CODES = {"none": 0, "selective": 1, "full": 2}
_NAMES = {v: k for k, v in RECOMPUTE_CODES.items()}
# context-parallel attention exchange (ParallelSpec.cp_comm_type): 0 ring, 1 all-gather, 2 Ulysses
# all-to-all, 3 all-to-all inside groups + ring across them
CP_COMM_CODES = {"p2p": 0, "all_gather": 1, "a2a": 2, "a2a+p2p": 3}
_CP_NAMES = {v: k for k, v in CP_COMM_CODES.items()}


def _codes(v: Any, table: dict[str, int]) -> Any:
    """Names (one or a list) to their integer codes; integers pass through."""
    if isinstance(v, str):
        return table[v]
    if isinstance(v, list | tuple) and v and isinstance(v[0], str):
        return [table[x] for x in v]
    return v


IntArr = npt.NDArray[np.int64]
BoolArr = npt.NDArray[np.bool_]


def software_columns(spec: ParallelSpec) -> dict[str, bool]:
    """The software switches of a parallel spec, as the boolean columns of :class:`Strategies`."""
    return {
        "tp_overlap": spec.tp_comm_overlap,
        "dp_overlap": spec.dp_comm_overlap,
        "pp_overlap": spec.pp_comm_overlap,
        "pp_scatter": spec.pp_scatter_gather,
        "flash": spec.flash_attention,
        "fa2": spec.attention_kernel == "fa2",
        "ep_overlap": spec.ep_comm_overlap,
        "shared_overlap": spec.ep_shared_overlap,
        "cuda_graphs": spec.cuda_graphs,
        "graphs_moe": spec.cuda_graphs_moe,
        "deepep": spec.ep_dispatch in ("deepep", "hybridep"),
        "hybridep": spec.ep_dispatch == "hybridep",
        "einsum": spec.ep_dispatch == "einsum",
        "dualpipe": spec.pp_schedule == "dualpipe",
        "zero_bubble": spec.pp_schedule == "zero_bubble",
        "grad_fp32": spec.grad_reduce_fp32,
        "op_fuser": spec.mlp_op_fuser,
        "gather_fp8": spec.sp_gather_fp8,
        "dispatch_fp8": spec.ep_dispatch_fp8,
        "expandable": spec.expandable_segments,
        "regather": spec.sp_regather,
        "fp8_attn": spec.fp8_attention,
        "fp8_head": spec.fp8_output_proj,
        "fp8_params": spec.fp8_param_gather,
        "fp8_wcache": spec.fp8_weight_cache,
        "offload_ok": spec.activation_offload,
    }


_SWITCHES = tuple(software_columns(ParallelSpec()))  # the boolean columns' names


# activation-offload candidates, in eighths of the layers: what search tries and validate completes an
# unpublished setting with
OFFLOAD_EIGHTHS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7)


def offload_layer_counts(layers: int, eighths: Iterable[int]) -> list[int]:
    """Activation-offload candidates: k/8 of ``layers`` for each ``k`` in ``eighths``, neither none nor all
    (Megatron-Core offloads fewer layers than the model has), sorted; what search and validate try."""
    return sorted({round(layers * k / 8) for k in eighths} - {0, layers})


def memory_saving(recompute: str, offload_layers: int) -> str:
    """How a layout saves activation memory, in one word: its recompute mode, or ``offload N`` (offload
    runs only without recompute)."""
    return f"offload {offload_layers}" if offload_layers else recompute


@dataclass(frozen=True)
class Strategies:
    """Parallel strategies, column-wise. ``recompute``: 0 none, 1 selective, 2 full. ``shard``: the
    ZeRO shard-group size (hybrid sharding), 0 = all dp·cp ranks. ``cp_comm``: the context-parallel
    exchange (:data:`CP_COMM_CODES`); ``cp_a2a``: the inner all-to-all group of ``a2a+p2p``, 0 = the cp
    ranks of one scale-up domain. ``rc_layers``: with full recompute, the layers of each model chunk
    recomputed (Megatron-Core's block method), -1 = every layer."""

    tp: IntArr
    pp: IntArr
    dp: IntArr
    cp: IntArr
    ep: IntArr
    vpp: IntArr
    micro_batch: IntArr
    zero: IntArr
    recompute: IntArr
    sp: BoolArr
    tp_overlap: BoolArr
    dp_overlap: BoolArr
    pp_overlap: BoolArr
    pp_scatter: BoolArr
    flash: BoolArr
    fa2: BoolArr
    ep_overlap: BoolArr
    shared_overlap: BoolArr  # the shared experts' compute hides the dispatch / combine all-to-all
    cuda_graphs: BoolArr
    graphs_moe: BoolArr  # with cuda_graphs: the MoE dispatch, experts and combine captured too
    deepep: BoolArr  # node-deduplicated dispatch (DeepEP, or HybridEP below)
    hybridep: BoolArr  # the deduplicated dispatch is HybridEP's (its own RDMA rate between domains)
    einsum: BoolArr  # GShard one-hot einsum dispatch and combine (DeepSpeed-MoE), capacity-padded experts
    dualpipe: BoolArr
    zero_bubble: BoolArr  # ZB-H1 pipeline schedule (weight gradients deferred into the cool-down)
    grad_fp32: BoolArr  # fp32 gradient buffer and reduction (grad_reduce_in_fp32)
    op_fuser: BoolArr  # FFN clamp and expert bias fused into the MLP op (no eager passes)
    gather_fp8: BoolArr  # FP8 runs: sequence-parallel all-gathers carry the quantized operand
    dispatch_fp8: BoolArr  # FP8 runs: the DeepEP dispatch carries FP8 activations
    expandable: BoolArr  # PyTorch allocator with expandable segments (allocator_fragmentation_expandable)
    regather: BoolArr  # sequence parallel: the backward re-gathers each column-parallel input (else saves it)
    fp8_attn: BoolArr  # FP8 runs: attention in FP8 (its backward runs a sliding layer's whole triangle)
    fp8_head: BoolArr  # MXFP8 runs: the LM-head output projection in MXFP8 (fp8_output_proj)
    fp8_params: BoolArr  # FP8 runs: the layers' weights are FP8 parameters (fp8_param_gather)
    fp8_wcache: BoolArr  # FP8 runs without FP8 parameters: each weight's FP8 copy kept across micro-batches
    offload_ok: BoolArr  # the framework offloads activations to host memory (activation_offload)
    shard: IntArr  # ZeRO shard-group size; 0 = all dp·cp ranks
    cp_comm: IntArr  # CP_COMM_CODES
    cp_a2a: IntArr  # a2a+p2p inner group size; 0 = the cp ranks of one scale-up domain
    offload: IntArr  # layers whose activations are offloaded to host memory
    rc_layers: IntArr  # recompute full: layers per model chunk recomputed (block method); -1 = every layer

    def __len__(self) -> int:
        return int(self.tp.shape[0])

    @classmethod
    def from_specs(cls, specs: Sequence[ParallelSpec], micro_batches: Sequence[int]) -> Strategies:
        def col(f: str) -> IntArr:
            return np.array([getattr(s, f) for s in specs], dtype=np.int64)

        switches = [software_columns(s) for s in specs]

        return cls(
            tp=col("tp"),
            pp=col("pp"),
            dp=col("dp"),
            cp=col("cp"),
            ep=col("ep"),
            vpp=col("vpp"),
            micro_batch=np.array(micro_batches, dtype=np.int64),
            zero=col("zero"),
            recompute=np.array([RECOMPUTE_CODES[s.recompute] for s in specs], dtype=np.int64),
            sp=np.array([s.sp for s in specs], dtype=bool),
            **{k: np.array([sw[k] for sw in switches], dtype=bool) for k in _SWITCHES},
            shard=np.array([s.zero_shard_group or 0 for s in specs], dtype=np.int64),
            cp_comm=np.array([CP_COMM_CODES[s.cp_comm_type] for s in specs], dtype=np.int64),
            cp_a2a=np.array([s.cp_a2a_size or 0 for s in specs], dtype=np.int64),
            offload=col("offload_layers"),
            rc_layers=np.array(
                [-1 if s.recompute_layers is None else s.recompute_layers for s in specs], dtype=np.int64
            ),
        )

    @classmethod
    def from_columns(cls, **cols: Any) -> Strategies:
        """Build from column arrays/lists; missing columns take ParallelSpec defaults."""
        # the strategy count comes from the columns given as arrays (scalars broadcast; an empty
        # space, e.g. a search where no shape passes the rules, gives zero strategies, not one)
        sizes = [int(np.size(v)) for v in cols.values() if np.ndim(v) > 0]
        n = max(sizes) if sizes else 1
        d = ParallelSpec()

        def get(name: str, default: object, dtype: type) -> Any:
            v = cols.get(name, default)
            return np.broadcast_to(np.asarray(v, dtype=dtype), (n,)).copy()

        rec = _codes(cols.get("recompute", d.recompute), RECOMPUTE_CODES)
        cpc = _codes(cols.get("cp_comm", d.cp_comm_type), CP_COMM_CODES)
        return cls(
            tp=get("tp", 1, np.int64),
            pp=get("pp", 1, np.int64),
            dp=get("dp", 1, np.int64),
            cp=get("cp", 1, np.int64),
            ep=get("ep", 1, np.int64),
            vpp=get("vpp", 1, np.int64),
            micro_batch=get("micro_batch", 1, np.int64),
            zero=get("zero", d.zero, np.int64),
            recompute=np.broadcast_to(np.asarray(rec, dtype=np.int64), (n,)).copy(),
            sp=get("sp", d.sp, bool),
            **{k: get(k, v, bool) for k, v in software_columns(d).items()},
            shard=get("shard", 0, np.int64),
            cp_comm=np.broadcast_to(np.asarray(cpc, dtype=np.int64), (n,)).copy(),
            cp_a2a=get("cp_a2a", 0, np.int64),
            offload=get("offload", d.offload_layers, np.int64),
            rc_layers=get("rc_layers", -1, np.int64),
        )

    def scalars(self, i: int = 0) -> Strategies:
        """Strategy ``i`` alone, its columns numpy scalars instead of arrays: the step model runs the
        same code on it, through :mod:`wanka.npx`'s scalar fast paths (one strategy costs
        numpy's per-call overhead on every operation otherwise). ``len()`` and :meth:`row` need arrays."""
        return Strategies(**{f.name: getattr(self, f.name)[i] for f in fields(self)})

    def row(self, i: int) -> dict[str, object]:
        return {
            "tp": int(self.tp[i]),
            "pp": int(self.pp[i]),
            "dp": int(self.dp[i]),
            "cp": int(self.cp[i]),
            "ep": int(self.ep[i]),
            "vpp": int(self.vpp[i]),
            "micro_batch": int(self.micro_batch[i]),
            "zero": int(self.zero[i]),
            "recompute": _NAMES[int(self.recompute[i])],
            "sp": bool(self.sp[i]),
            "zero_shard_group": int(self.shard[i]) or None,
            "cp_comm_type": _CP_NAMES[int(self.cp_comm[i])],
            "cp_a2a_size": int(self.cp_a2a[i]) or None,
            "offload_layers": int(self.offload[i]),
            "recompute_layers": int(self.rc_layers[i]) if self.rc_layers[i] >= 0 else None,
        }
