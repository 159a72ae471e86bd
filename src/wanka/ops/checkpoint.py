"""Checkpoint costs as the campaign sees them, and the Young/Daly optimal interval.

Save and load times come from ``wanka.storage.checkpoint_io`` (the one source of checkpoint I/O).

Per mode (``checkpoint.mode``):

* ``sync`` — training stalls for the whole write (``blocking = save``); a restart reads storage.
* ``async`` — training stalls only to stage the state to host memory (``blocking``); the write drains
  in the background, so the newest checkpoint is safe ``persist_lag = save − blocking`` later.
* ``in_memory`` — Gemini (Wang et al., SOSP'23): every interval each node copies its state to a
  peer's host memory (``blocking``), and a restart reads the peer copy (``load``), unless the peer
  also failed — then it reads the last persistent (async) checkpoint on storage.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from wanka.errors import SpecError
from wanka.spec import Scenario
from wanka.storage import checkpoint_io

__all__ = ["CheckpointCost", "checkpoint_cost", "optimal_checkpoint_interval"]


@dataclass(frozen=True)
class CheckpointCost:
    """What one checkpoint costs the job (s) in its mode; ``memory_*`` only for ``in_memory``."""

    mode: str
    size_bytes: float
    blocking_s: float  # training stalled per checkpoint (storage tier, or memory tier for in_memory)
    persist_lag_s: float  # after the stall, until the checkpoint survives a failure
    load_s: float  # restart: read the checkpoint
    storage_blocking_s: float  # persistent tier (in_memory: its async checkpoints to storage)
    storage_persist_lag_s: float
    storage_load_s: float
    flush_s: float  # a planned stop waits until a checkpoint is persisted
    source: str  # "wanka.storage" or "fallback"
    assumptions: tuple[str, ...] = ()
    coordination_s: float = 0.0  # planning, barriers, metadata inside blocking_s

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["assumptions"] = list(self.assumptions)
        return d


def optimal_checkpoint_interval(blocking_s: float, mtbf_s: float) -> float:
    """Compute time between checkpoints that maximises progress (Daly 2006, FGCS 22(3), Eq. 37).

    ``sqrt(2δM)·[1 + ⅓·sqrt(δ/2M) + (δ/2M)/9] − δ`` for δ < 2M, else M; the leading term is Young's
    (1974) ``sqrt(2δM)``. δ = the checkpoint's stall, M = job MTBF.

    >>> round(optimal_checkpoint_interval(10.0, 3600.0), 1)
    261.7
    """
    if blocking_s < 0 or mtbf_s <= 0:
        raise SpecError(f"checkpoint stall {blocking_s} s and MTBF {mtbf_s} s must be ≥ 0 and > 0")
    if math.isinf(mtbf_s):
        return math.inf
    d, m = blocking_s, mtbf_s
    if d >= 2 * m:
        return m
    r = d / (2 * m)
    return max(0.0, math.sqrt(2 * d * m) * (1 + math.sqrt(r) / 3 + r / 9) - d)


def checkpoint_cost(
    scenario: Scenario, *, mode: str | None = None, data_read_bytes_per_s: float = 0.0
) -> CheckpointCost:
    """Stall, persistence lag and load time of one checkpoint of ``scenario`` in ``mode``.

    ``data_read_bytes_per_s``: the training-data read the file system keeps serving while saves drain.
    """
    m = scenario.checkpoint.mode if mode is None else mode
    if m not in ("sync", "async", "in_memory"):
        raise SpecError(f"= {m!r}: must be sync, async or in_memory", field="checkpoint.mode")
    if scenario.model is None:
        raise SpecError("a checkpoint needs a model; add a model block", field="model")
    persist = checkpoint_io(
        scenario, mode="sync" if m == "sync" else "async", data_read_bytes_per_s=data_read_bytes_per_s
    )
    notes = tuple(persist.assumptions)
    p_block = persist.blocking_s
    p_lag = max(0.0, persist.save_s - persist.blocking_s)
    if m != "in_memory":
        return CheckpointCost(
            m,
            persist.size_bytes,
            p_block,
            p_lag,
            persist.load_s,
            p_block,
            p_lag,
            persist.load_s,
            persist.save_s,
            "wanka.storage",
            notes,
            persist.coordination_s,
        )
    mem = checkpoint_io(scenario, mode="in_memory")
    mem_lag = max(0.0, mem.save_s - mem.blocking_s)
    return CheckpointCost(
        m,
        mem.size_bytes,
        mem.blocking_s,
        mem_lag,
        mem.load_s,
        p_block,
        p_lag,
        persist.load_s,
        persist.save_s,
        "wanka.storage",
        tuple(dict.fromkeys(notes + tuple(mem.assumptions))),
        mem.coordination_s,
    )
