"""A MoE validation case may carry the switches its framework's per-model preset sets (Megatron-Bridge
perf configs: moe_a2a_overlap, cuda_graph_impl, flex dispatcher); they override the software table,
reach the estimate, and a bad value is a clear error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from wanka.engine import estimate_step
from wanka.errors import SpecError
from wanka.spec import Scenario
from wanka.validate.cases import load_cases

_CASE = """schema: wanka-validation/1
cases:
- id: moe_sw_case
  kind: steady_state
  model:
    type: moe
    n_layers: 8
    hidden: 2048
    n_heads: 16
    n_kv_heads: 4
    ffn_hidden: 6144
    vocab: 32000
    seq_len: 4096
    moe: {{n_experts: 64, top_k: 8, expert_ffn_hidden: 768, dispatch: dropless, balanced_routing: true}}
  hardware: {{gpu: H100-SXM5-80GB, count: 16, gpus_per_node: 8, scale_up_domain: 8, nic_gbps_per_gpu: 400}}
  parallelism: {{tp: 1, pp: 1, dp: 16, ep: 16}}
  batch: {{global_batch_seqs: 256, micro_batch: 1}}
  precision: bf16
  truth: {{tokens_per_s_per_gpu: 1000}}
  software: {{framework: NeMo / Megatron-Bridge, release: "26.02"{extra}}}
"""


Build = Callable[[str], Scenario]  # the scenario_of_case fixture (tests/conftest.py)


def _scenario(build: Build, extra: str) -> Scenario:
    return build(_CASE.format(extra=extra))


def test_preset_switches_override_the_table(scenario_of_case: Build) -> None:
    table = _scenario(scenario_of_case, "").software.switches()
    sc = _scenario(
        scenario_of_case,
        ", ep_comm_overlap: true, cuda_graphs: false, ep_dispatch: deepep, switches_source: 'preset X @v0'",
    )
    sw = sc.software.switches()
    assert (sw["ep_comm_overlap"], sw["cuda_graphs"], sw["ep_dispatch"]) == (True, False, "deepep")
    assert table["cuda_graphs"] is True and table["ep_comm_overlap"] is False  # what the table alone says
    assert any("preset X @v0" in a for a in sc.assumptions)


def test_switches_reach_the_estimate(scenario_of_case: Build) -> None:
    """EP across two nodes: overlapping the all-to-all shows less of it; eager MoE layers pay their
    launch and host cost that CUDA graphs remove."""
    plain = estimate_step(_scenario(scenario_of_case, ", ep_comm_overlap: false, cuda_graphs: true"), require_fit=False)
    hidden = estimate_step(_scenario(scenario_of_case, ", ep_comm_overlap: true, cuda_graphs: true"), require_fit=False)
    eager = estimate_step(
        _scenario(scenario_of_case, ", ep_comm_overlap: false, cuda_graphs: false"), require_fit=False
    )
    assert hidden.breakdown["ep_comm"] < plain.breakdown["ep_comm"]
    assert eager.breakdown["compute"] > plain.breakdown["compute"]


def test_bad_switch_value_is_a_clear_error(scenario_of_case: Build) -> None:
    with pytest.raises(SpecError, match="ep_dispatch"):
        _scenario(scenario_of_case, ", ep_dispatch: hybrid")


def test_nemo_rows_switches_are_consistent_with_their_source() -> None:
    """Consistency check of the NeMo extra-run rows against their own provenance: every row that states
    MoE switches names the preset it read them from, states all three, and claims CUDA graphs only
    where that preset captures the whole iteration, each whole layer (Megatron-Core ``cuda_graph_scope`` full,
    the 25.09 token-drop recipes) or a partial scope (``cuda_graphs_moe: false``)."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "extra_runs" / "nemo_perf_tables.yaml"
    cases, _ = load_cases(path)
    stated = [
        c for c in cases if c.raw.get("software", {}).get("switches_source") and c.raw["model"].get("moe") is not None
    ]  # dense rows state only CUDA graphs (tests/engine/test_nemo_dense_rows.py)
    assert len(stated) >= 120  # 124 rows state them
    for c in stated:
        sw = c.raw["software"]
        assert {"ep_comm_overlap", "cuda_graphs", "ep_dispatch"} <= set(sw), c.id
        # a partial scope that captures attention (the MoE block eager) is cuda_graphs with cuda_graphs_moe false
        attn_partial = "CUDA graphs partial (transformer_engine, scope ['attn'" in sw["switches_source"]
        assert (sw.get("cuda_graphs_moe") is False) == attn_partial, c.id
        if attn_partial:
            assert sw["cuda_graphs"], c.id
        else:
            whole = "full_iteration" in sw["switches_source"] or "cuda_graph_scope full" in sw["switches_source"]
            assert sw["cuda_graphs"] == whole, c.id
        assert ("moe_a2a_overlap True" in sw["switches_source"] or "full_iter" in sw["switches_source"]) == sw[
            "ep_comm_overlap"
        ], c.id
