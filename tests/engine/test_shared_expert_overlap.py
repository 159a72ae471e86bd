"""Shared-expert overlap (Megatron-Core --moe-shared-expert-overlap; DeepSeek-V2 report Sec. 3.1.3): the
shared experts run on a side stream beside the dispatch and combine all-to-alls, so the all-to-all shows
only where it outlasts their compute."""

from __future__ import annotations

from typing import Any

import pytest

from wanka.engine import estimate_step
from wanka.errors import SpecError
from wanka.planner.export import launch_args
from wanka.spec import Scenario, parse_scenario


def _sc(model: str = "deepseek-v3", **parallel: Any) -> Scenario:
    base = {"tp": 1, "pp": 8, "dp": 64, "ep": 64, "zero": 1, "recompute": "selective", "ep_dispatch": "alltoall"}
    return parse_scenario(
        {
            "name": "shared",
            "cluster": {"accelerator": "H800", "nodes": 64},
            "model": model,
            "training": {"global_batch_seqs": 1024, "seq_len": 4096},
            "parallel": {**base, **parallel},
        }
    )


def test_the_shared_experts_hide_at_most_their_own_compute_of_the_all_to_all() -> None:
    off = estimate_step(_sc(), require_fit=False)
    on = estimate_step(_sc(ep_shared_overlap=True), require_fit=False)
    assert 0.0 <= on.breakdown["ep_comm"] < off.breakdown["ep_comm"]
    # DeepSeek-V3's one shared expert is an MLP of 2,048: 3 x 2 x 2 x 7,168 x 2,048 FLOPs per token and layer
    # forward and backward; what it hides is bounded by that work at the GPU's dense BF16 peak
    sc = _sc()
    assert sc.model is not None and sc.model.moe is not None and sc.training is not None
    m = sc.model.moe
    tokens = sc.training.global_batch_seqs * sc.seq_len / 64  # per dp rank and step (tp 1, cp 1)
    moe_layers = (sc.model.n_layers - m.n_dense_layers) / 8 + 1  # the busiest stage, at most one more
    shared_flops = 3 * 2 * 3 * sc.model.hidden * m.expert_ffn_hidden * m.n_shared_experts * tokens * moe_layers
    bound = shared_flops / 989e12
    assert off.breakdown["ep_comm"] - on.breakdown["ep_comm"] <= bound * 1.5
    # the same bytes cross the same links; compute is untouched
    assert on.traffic_bytes == pytest.approx(off.traffic_bytes)
    assert on.breakdown["compute"] == pytest.approx(off.breakdown["compute"])


def test_no_shared_experts_no_effect() -> None:
    par = {"tp": 1, "pp": 1, "dp": 512, "ep": 8, "zero": 1, "recompute": "none"}
    off = estimate_step(_sc("mixtral-8x7b", **par), require_fit=False)
    on = estimate_step(_sc("mixtral-8x7b", **par, ep_shared_overlap=True), require_fit=False)
    assert on.step_time_s == off.step_time_s


def test_megatron_rules_and_the_export() -> None:
    with pytest.raises(SpecError, match="ep_shared_overlap"):
        _sc(ep_shared_overlap=True, ep_comm_overlap=True)
    with pytest.raises(SpecError, match="ep_shared_overlap"):
        _sc(ep_shared_overlap=True, ep_dispatch="einsum")
    args = launch_args(_sc(ep_shared_overlap=True), "megatron")
    assert "--moe-shared-expert-overlap" in args and "--moe-token-dispatcher-type alltoall" in args
    assert "model.config.moe_shared_expert_overlap=true" in launch_args(_sc(ep_shared_overlap=True), "nemo")
    assert "--moe-shared-expert-overlap" not in launch_args(_sc(), "megatron")


def test_the_export_names_the_dispatch_backend() -> None:
    assert "--moe-enable-deepep" in launch_args(_sc(ep_dispatch="deepep"), "megatron")
    args = launch_args(_sc(ep_dispatch="hybridep"), "megatron")
    assert "--moe-token-dispatcher-type flex" in args and "--moe-flex-dispatcher-backend hybridep" in args
    assert "--moe-enable-deepep" not in args
