"""Training-data read demand against what the file system can supply.

Pre-training reads pre-tokenised shards: ``demand = tokens/s × bytes per token``, with token ids
stored as uint16 below a 65,536-token vocabulary and int32 above it (Megatron-Core indexed datasets;
figures in ``storage_defaults.yaml``). Supply is the file system's read bandwidth with every job
node reading (:meth:`StorageSystem.bandwidth`). Text LLM demand is tiny (1 M tokens/s × 4 B = 4 MB/s);
the check matters for small file systems, shared clusters and multimodal data.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from wanka.errors import SpecError
from wanka.spec import Scenario
from wanka.storage.system import StorageSystem, defaults, storage_system

__all__ = ["DataReadDemand", "data_read_demand"]


@dataclass(frozen=True)
class DataReadDemand:
    tokens_per_s: float
    bytes_per_token: float
    demand: float  # B/s
    supply: float  # B/s
    headroom: float  # supply / demand (inf when nothing is read)

    @property
    def ok(self) -> bool:
        return self.supply >= self.demand

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ok"] = self.ok
        d["headroom"] = None if math.isinf(self.headroom) else self.headroom
        return d


def data_read_demand(
    scenario: Scenario,
    tokens_per_s: float,
    *,
    bytes_per_token: float | None = None,
    system: StorageSystem | None = None,
) -> DataReadDemand:
    """Bytes/s the job reads at ``tokens_per_s`` against the file system's read supply."""
    if not (tokens_per_s >= 0 and math.isfinite(tokens_per_s)):
        raise SpecError(f"= {tokens_per_s!r}: must be a finite number ≥ 0", field="tokens_per_s")
    if bytes_per_token is None:
        d = defaults()
        vocab = scenario.model.vocab if scenario.model is not None else d["small_vocab_limit"]
        small = vocab < d["small_vocab_limit"]
        bytes_per_token = float(d["token_bytes_small_vocab"] if small else d["token_bytes_large_vocab"])
    sys_ = storage_system(scenario.cluster) if system is None else system
    nodes = math.ceil(scenario.gpus / scenario.cluster.gpus_per_node)
    supply, _ = sys_.bandwidth(nodes, min(scenario.cluster.gpus_per_node, scenario.gpus), write=False)
    demand = tokens_per_s * bytes_per_token
    headroom = supply / demand if demand > 0 else math.inf
    return DataReadDemand(tokens_per_s, bytes_per_token, demand, supply, headroom)
