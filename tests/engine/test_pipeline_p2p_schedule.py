"""Pipeline p2p as each framework's schedule runs it: Megatron-Core overlaps p2p only when it
interleaves (its non-interleaved 1F1B refuses overlap_p2p_comm and waits on every send/recv);
a framework with its own pipeline code keeps the switch's asynchronous p2p at vpp 1."""

import pytest

from wanka.engine import estimate_step, make_context
from wanka.spec import Scenario, parse_scenario


def _scenario(vpp: int, overlap: bool, framework: str | None) -> Scenario:
    raw: dict[str, object] = {
        "name": "p2p",
        "cluster": {"accelerator": "H100", "nodes": 16, "fabric": {"nic_gbps_per_gpu": 400}},
        "model": "llama3-8b",
        "training": {"global_batch_seqs": 128, "micro_batch": 1, "tokens": 1e11},
        "parallel": {"tp": 2, "pp": 8, "dp": 8, "vpp": vpp, "pp_comm_overlap": overlap},
    }
    if framework is not None:
        raw["software"] = {"framework": framework}
    return parse_scenario(raw)


def test_megatron_core_1f1b_blocks_on_p2p_whatever_the_overlap_switch_says() -> None:
    sc = _scenario(1, True, None)
    assert make_context(sc).splits.megatron  # the current release builds on Megatron-Core
    on = estimate_step(sc, require_fit=False)
    off = estimate_step(_scenario(1, False, None), require_fit=False)
    # schedules.py forward_backward_pipelining_without_interleaving raises on overlap_p2p_comm and
    # waits on every transfer: the switch changes nothing at vpp 1
    assert on.breakdown["pp_comm"] == pytest.approx(off.breakdown["pp_comm"], rel=1e-12)
    assert on.step_time_s == pytest.approx(off.step_time_s, rel=1e-12)


def test_megatron_core_interleaved_schedule_still_overlaps_p2p() -> None:
    on = estimate_step(_scenario(2, True, None), require_fit=False)
    off = estimate_step(_scenario(2, False, None), require_fit=False)
    assert on.breakdown["pp_comm"] < 0.5 * off.breakdown["pp_comm"]


def test_a_framework_with_its_own_pipeline_keeps_asynchronous_p2p_at_vpp_1() -> None:
    sc = _scenario(1, True, "torchtitan")
    assert not make_context(sc).splits.megatron
    on = estimate_step(sc, require_fit=False)
    off = estimate_step(_scenario(1, False, "torchtitan"), require_fit=False)
    assert on.breakdown["pp_comm"] < 0.5 * off.breakdown["pp_comm"]
    # and Megatron-Core at vpp 1 exposes what that framework's blocking p2p exposes
    mc = estimate_step(_scenario(1, True, None), require_fit=False)
    assert mc.breakdown["pp_comm"] > 2.0 * on.breakdown["pp_comm"]
