"""The gradient reduction dtype a published run's config sets reaches the DP traffic it is charged.

Composer's FSDP ``mixed_precision: PURE`` reduce-scatters gradients in bf16, ``DEFAULT`` in fp32
(MosaicML llm-foundry benchmark tables, column "MP Mode"); a validation case states it as
``software: grad_reduce_fp32``.
"""

from __future__ import annotations

import copy

import pytest

from wanka.engine import estimate_step
from wanka.validate.cases import Case, case_scenario

_ROW = {
    "id": "fsdp_reduce_dtype",
    "source": "test row",
    "kind": "steady_state",
    "quality": "exact",
    "model": {
        "type": "dense",
        "n_layers": 32,
        "hidden": 4096,
        "n_heads": 32,
        "n_kv_heads": 32,
        "ffn_hidden": 16384,
        "ffn_act": "gelu",
        "vocab": 50368,
        "seq_len": 2048,
        "tied_embeddings": True,
        "moe": None,
        "attention": None,
    },
    "hardware": {"gpu": "A100-SXM4-40GB", "count": 128, "gpus_per_node": 8, "nic_gbps_per_gpu": 200},
    "parallelism": {"tp": 1, "pp": 1, "dp": 128, "recompute": "full", "zero": 3},
    "batch": {"global_batch_seqs": 2304, "micro_batch": 18},
    "precision": "bf16",
    "truth": {"tokens_per_s_per_gpu": 3623.0},
    "software": {"framework": "Composer/llm-foundry", "release": "2023"},
}


def _case(grad_reduce_fp32: bool | None) -> Case:
    raw = copy.deepcopy(_ROW)
    if grad_reduce_fp32 is not None:
        raw["software"]["grad_reduce_fp32"] = grad_reduce_fp32
    return Case(id=str(raw["id"]), kind="steady_state", raw=raw)


def test_a_case_that_reduces_in_bf16_moves_half_the_reduce_scatter_bytes() -> None:
    default = estimate_step(case_scenario(_case(None))[0], require_fit=False)
    fp32 = estimate_step(case_scenario(_case(True))[0], require_fit=False)
    bf16 = estimate_step(case_scenario(_case(False))[0], require_fit=False)
    # the software table's default for this framework is an fp32 reduction
    assert default.traffic_bytes["dp"] == pytest.approx(fp32.traffic_bytes["dp"], rel=1e-12)
    # ZeRO-3 per micro-batch: two 2-byte all-gathers (forward, backward; a third for the recompute)
    # and one reduce-scatter of 4 bytes in fp32 or 2 in bf16 per parameter
    m = fp32.micro_batches
    assert bf16.traffic_bytes["dp"] == pytest.approx(fp32.traffic_bytes["dp"] * (6 * m + 2 * m) / (6 * m + 4 * m))
    assert bf16.step_time_s <= fp32.step_time_s
