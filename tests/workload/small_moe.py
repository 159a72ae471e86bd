"""A small MoE model spec the workload tests vary one field at a time."""

from __future__ import annotations

from typing import Any

from wanka.spec import parse_model

BASE: dict[str, Any] = {
    "type": "moe",
    "n_layers": 4,
    "hidden": 1024,
    "n_heads": 16,
    "n_kv_heads": 4,
    "ffn_hidden": 1024,
    "vocab": 32000,
    "seq_len": 4096,
    "moe": {"n_experts": 16, "top_k": 4, "expert_ffn_hidden": 512},
}


def small_moe(**kw: Any) -> Any:
    """The base spec with ``kw`` replacing its top-level fields."""
    return parse_model({**BASE, **kw})
