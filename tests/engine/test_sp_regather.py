"""Sequence parallelism's backward re-gather (Korthikanti et al. 2022 Sec. 4.2.2; Megatron-Core
LinearWithGradAccumulationAndAsyncCommunication; Transformer Engine ln_out_needs_gather): Megatron
gathers each column-parallel input again in the backward, DTensor keeps the gathered input instead.
One choice costs traffic, the other memory; neither makes both vanish."""

from __future__ import annotations

from wanka.catalog.software import software_switches
from wanka.engine import estimate_step
from wanka.spec import Scenario, parse_scenario


def _sc(regather: bool, overlap: bool = False, tp: int = 8) -> Scenario:
    return parse_scenario(
        {
            "name": "sp-regather",
            "cluster": {"accelerator": "H100", "nodes": 16},
            "model": "llama3-70b",
            "training": {"global_batch_seqs": 256, "micro_batch": 1, "seq_len": 8192},
            "parallel": {
                "tp": tp,
                "pp": 4,
                "dp": 32 // tp,
                "vpp": 5,
                "sp": True,
                "tp_comm_overlap": overlap,
                "sp_regather": regather,
            },
        }
    )


def test_the_regather_adds_two_gathers_per_layer_to_the_backward() -> None:
    on = estimate_step(_sc(True), require_fit=False)
    off = estimate_step(_sc(False), require_fit=False)
    # without overlap every collective is exposed: forward 2 AG + 2 RS, backward the same plus 2 AG;
    # in BF16 an AG and an RS of the same bytes take the same time, so the ratio is (4 + 6) / (4 + 4)
    ratio = on.breakdown["tp_comm"] / off.breakdown["tp_comm"]
    assert abs(ratio - 10.0 / 8.0) < 1e-6
    assert on.step_time_s > off.step_time_s


def test_keeping_the_gathered_input_costs_memory_instead() -> None:
    on = estimate_step(_sc(True), require_fit=False)
    off = estimate_step(_sc(False), require_fit=False)
    assert off.memory.activations > on.memory.activations
    # the same with tp 1: no sequence parallelism, nothing gathered, nothing kept
    one_on = estimate_step(_sc(True, tp=1), require_fit=False)
    one_off = estimate_step(_sc(False, tp=1), require_fit=False)
    assert one_on.memory.activations == one_off.memory.activations
    assert one_on.step_time_s == one_off.step_time_s


def test_overlap_hides_part_of_the_regather_but_not_all() -> None:
    on = estimate_step(_sc(True, overlap=True), require_fit=False)
    off = estimate_step(_sc(False, overlap=True), require_fit=False)
    assert on.breakdown["tp_comm"] > off.breakdown["tp_comm"]
    bare = (
        estimate_step(_sc(True), require_fit=False).breakdown["tp_comm"]
        - estimate_step(_sc(False), require_fit=False).breakdown["tp_comm"]
    )
    assert on.breakdown["tp_comm"] - off.breakdown["tp_comm"] < bare


def test_software_table_regathers_in_megatron_and_keeps_the_input_in_torchtitan() -> None:
    assert software_switches("nemo", "25.09").switches["sp_regather"] is True
    assert software_switches("megatron-lm", None).switches["sp_regather"] is True
    assert software_switches("torchtitan", None).switches["sp_regather"] is False
