"""Small scenarios and files shared by the planner tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wanka.spec import Scenario, parse_scenario


def small_dict(nodes: int = 4, model: str = "llama3-8b", batch: int = 64) -> dict[str, Any]:
    return {
        "name": f"small-{model}-{nodes}",
        "cluster": {"accelerator": "H100-SXM5-80GB", "nodes": nodes, "gpus_per_node": 8},
        "model": model,
        "training": {"tokens": 1e11, "global_batch_seqs": batch, "seq_len": 8192},
        "campaign_days": 7,
    }


def small(nodes: int = 4, model: str = "llama3-8b", batch: int = 64, **extra: Any) -> Scenario:
    d = small_dict(nodes, model, batch)
    d.update(extra)
    return parse_scenario(d)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
