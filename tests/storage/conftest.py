"""Shared scenario builders for the storage tests (inline scenarios, no presets)."""

from __future__ import annotations

from typing import Any

from wanka.spec import Scenario, parse_scenario

# BLOOM-176B (BigScience 2022, model card and Scao et al. 2022 §3): 70 layers, hidden 14336, 112 heads,
# vocab 250,880 (padded), tied embeddings, GeLU 4h FFN; tp 4 · pp 12 · dp 8 on 48 nodes × 8 A100-80GB.
BLOOM_MODEL: dict[str, Any] = {
    "name": "bloom-176b",
    "n_layers": 70,
    "hidden": 14336,
    "n_heads": 112,
    "n_kv_heads": 112,
    "ffn_hidden": 57344,
    "ffn_act": "gelu",
    "vocab": 250880,
    "seq_len": 2048,
    "tied_embeddings": True,
}


def bloom(**over: Any) -> Scenario:
    data: dict[str, Any] = {
        "cluster": {
            "accelerator": "A100-SXM4-80GB",
            "nodes": 48,
            "gpus_per_node": 8,
            "fabric": {"nic_gbps_per_gpu": 50.0},
            "storage": {
                "servers": 10,
                "read_gbytes_per_s_per_server": 20.0,
                "write_gbytes_per_s_per_server": 10.0,
            },
        },
        "model": BLOOM_MODEL,
        "training": {"tokens": 366e9, "global_batch_seqs": 2048, "precision": "bf16"},
        "parallel": {"tp": 4, "pp": 12, "dp": 8, "zero": 1},
    }
    for k, v in over.items():
        data[k] = {**data.get(k, {}), **v} if isinstance(v, dict) else v
    return parse_scenario(data)
