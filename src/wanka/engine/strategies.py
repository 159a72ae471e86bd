"""A batch of parallel strategies as numpy arrays (one element per strategy)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from wanka.spec.training import ParallelSpec

__all__ = ["RECOMPUTE_CODES", "Strategies", "software_columns"]

RECOMPUTE_CODES = {"none": 0, "selective": 1, "full": 2}
_NAMES = {v: k for k, v in RECOMPUTE_CODES.items()}

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
        "cuda_graphs": spec.cuda_graphs,
        "deepep": spec.ep_dispatch == "deepep",
        "dualpipe": spec.pp_schedule == "dualpipe",
    }


@dataclass(frozen=True)
class Strategies:
    """Parallel strategies, column-wise. ``recompute``: 0 none, 1 selective, 2 full. ``shard``: the
    ZeRO shard-group size (hybrid sharding), 0 = all dp·cp ranks."""

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
    cuda_graphs: BoolArr
    deepep: BoolArr
    dualpipe: BoolArr
    shard: IntArr  # ZeRO shard-group size; 0 = all dp·cp ranks

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
            **{k: np.array([sw[k] for sw in switches], dtype=bool) for k in software_columns(ParallelSpec())},
            shard=np.array([s.zero_shard_group or 0 for s in specs], dtype=np.int64),
        )

    @classmethod
    def from_columns(cls, **cols: Any) -> Strategies:
        """Build from column arrays/lists; missing columns take ParallelSpec defaults."""
        n = max(int(np.size(v)) for v in cols.values())
        d = ParallelSpec()

        def get(name: str, default: object, dtype: type) -> Any:
            v = cols.get(name, default)
            return np.broadcast_to(np.asarray(v, dtype=dtype), (n,)).copy()

        rec = cols.get("recompute", d.recompute)
        if isinstance(rec, str):
            rec = RECOMPUTE_CODES[rec]
        elif isinstance(rec, list | tuple) and rec and isinstance(rec[0], str):
            rec = [RECOMPUTE_CODES[r] for r in rec]
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
        )

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
        }
