"""Every error that scenario validation raises names the field to change (a table of bad scenarios)."""

from __future__ import annotations

from typing import Any

import pytest

from wanka.errors import InfeasibleError, SpecError
from wanka.spec import parse_scenario

CLUSTER = {"accelerator": "H100", "nodes": 4}
JOB = {"model": "llama3-8b", "training": {"tokens": 1e9, "global_batch_seqs": 8}}
MOE = {
    "name": "m",
    "type": "moe",
    "hidden": 1024,
    "n_layers": 4,
    "n_heads": 8,
    "n_kv_heads": 8,
    "ffn_hidden": 2048,
    "vocab": 32000,
    "seq_len": 2048,
}


def _moe(**moe: Any) -> dict[str, Any]:
    block = {"n_experts": 8, "top_k": 2, "expert_ffn_hidden": 512, **moe}
    return {"cluster": CLUSTER, "model": {**MOE, "moe": block}}


# (bad scenario, the field the message must name)
BAD: list[tuple[dict[str, Any], str]] = [
    ({"cluster": CLUSTER, **JOB, "parallel": {"tp": 8, "pp": 8, "dp": 8}}, "parallel"),  # tp·pp·dp·cp = 512
    ({"cluster": CLUSTER, **JOB, "parallel": {"tp": 8, "dp": 2}, "job_gpus": 32}, "job_gpus"),
    ({"cluster": CLUSTER, "job_gpus": 64}, "job_gpus"),
    ({"cluster": CLUSTER, "training": JOB["training"]}, "model"),
    ({"cluster": {**CLUSTER, "scale_up": {"domain_size": 12}}}, "cluster.scale_up.domain_size"),
    ({"cluster": {**CLUSTER, "scale_up": {"domain_size": 3}}}, "cluster.scale_up.domain_size"),
    ({"cluster": {"accelerator": "H100", "nodes": 10_000_000}}, "cluster.nodes"),
    ({"cluster": CLUSTER, **JOB, "parallel": {"tp": 1, "dp": 4, "ep": 3}}, "parallel.ep"),
    ({"cluster": CLUSTER, **JOB, "parallel": {"tp": 8, "vpp": 2}}, "parallel.vpp"),
    ({"cluster": CLUSTER, "model": {**MOE, "n_heads": 6}}, "model.n_heads"),
    ({"cluster": CLUSTER, "model": {**MOE, "n_heads": 2048, "n_kv_heads": 2048}}, "model.n_heads"),
    ({"cluster": CLUSTER, "model": dict(MOE)}, "model.moe"),
    (_moe(top_k=16), "model.moe.top_k"),
    (_moe(n_groups=3), "model.moe.n_groups"),
    (_moe(topk_groups=1), "model.moe.topk_groups"),
    (_moe(max_nodes_per_token=4), "model.moe.max_nodes_per_token"),
    (_moe(n_dense_layers=9), "model.moe.n_dense_layers"),
    ({"cluster": CLUSTER, "model": {**MOE, "type": "dense", "layer_pattern": []}}, "model.layer_pattern"),
    ({"cluster": CLUSTER, "model": {**MOE, "type": "dense", "sliding_window": 512}}, "model.sliding_window"),
    ({"cluster": CLUSTER, "campaign_days": -1}, "campaign_days"),
    ({"cluster": {**CLUSTER, "nodes": 0}}, "cluster.nodes"),
]


@pytest.mark.parametrize(("data", "field"), BAD, ids=[f for _, f in BAD])
def test_every_spec_error_names_its_field(data: dict[str, Any], field: str) -> None:
    with pytest.raises((SpecError, InfeasibleError)) as exc:
        parse_scenario(data)
    e = exc.value
    assert isinstance(e, SpecError), f"an InfeasibleError from validation carries no field: {e}"
    named = [p.field for p in e.problems]
    assert all(named), f"a problem without a field: {e}"
    assert field in named, f"{field!r} not among {named}: {e}"
    for p in e.problems:  # and the printed line starts with it
        assert p.one_line().startswith(str(p.field)), p.one_line()
