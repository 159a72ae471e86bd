"""Two mechanisms from their sources: TP-comm overlap bounded by the GEMMs it hides behind (Transformer
Engine userbuffers), and fused attention that loses efficiency on short key blocks (FlashAttention-3
sweep), which is what makes many-way ring context parallelism cost more than its traffic."""

from __future__ import annotations

from dataclasses import replace

import pytest

from wanka.calibration import default_calibration
from wanka.engine import estimate_step
from wanka.spec import Scenario, parse_scenario


def _tp_scenario(overlap: bool, nvlink_gbs: float | None = None, seq: int = 8192) -> Scenario:
    cluster: dict[str, object] = {"accelerator": "H100", "nodes": 16}
    if nvlink_gbs is not None:
        cluster["scale_up"] = {"gbytes_per_s_per_direction": nvlink_gbs}
    return parse_scenario(
        {
            "name": "tp-overlap",
            "cluster": cluster,
            "model": "llama3-70b",
            "training": {"global_batch_seqs": 256, "micro_batch": 1, "seq_len": seq},
            "parallel": {"tp": 8, "pp": 4, "dp": 4, "vpp": 5, "sp": True, "tp_comm_overlap": overlap},
        }
    )


def test_tp_overlap_leaves_one_chunk_of_every_collective_exposed() -> None:
    off = estimate_step(_tp_scenario(False), require_fit=False)
    on = estimate_step(_tp_scenario(True), require_fit=False)
    assert on.breakdown["tp_comm"] < off.breakdown["tp_comm"]
    # even a perfect overlap (efficiency 1) leaves the first (last) of each collective's tp chunks
    perfect = replace(default_calibration(), tp_overlap_efficiency=1.0)
    best = estimate_step(_tp_scenario(True), require_fit=False, cal=perfect)
    assert best.breakdown["tp_comm"] < 0.6 * off.breakdown["tp_comm"]
    assert best.breakdown["tp_comm"] >= off.breakdown["tp_comm"] / 8 - 1e-9


def test_tp_overlap_cannot_hide_more_than_the_gemms_beside_it() -> None:
    # on a 10x slower scale-up link the collectives outgrow their GEMMs: the excess shows
    slow_off = estimate_step(_tp_scenario(False, nvlink_gbs=45.0), require_fit=False)
    slow_on = estimate_step(_tp_scenario(True, nvlink_gbs=45.0), require_fit=False)
    fast_off = estimate_step(_tp_scenario(False), require_fit=False)
    fast_on = estimate_step(_tp_scenario(True), require_fit=False)
    compute = slow_on.breakdown["compute"] + slow_on.breakdown["recompute"]
    hidden_slow = slow_off.breakdown["tp_comm"] - slow_on.breakdown["tp_comm"]
    assert hidden_slow <= compute
    # the share hidden falls when the communication outgrows the compute
    share_fast = 1 - fast_on.breakdown["tp_comm"] / fast_off.breakdown["tp_comm"]
    share_slow = 1 - slow_on.breakdown["tp_comm"] / slow_off.breakdown["tp_comm"]
    assert share_slow < share_fast - 0.1


def _cp_scenario(cp: int) -> Scenario:
    return parse_scenario(
        {
            "name": "cp-attn",
            "cluster": {"accelerator": "H100", "nodes": 16},
            "model": "llama3-8b",
            "training": {"global_batch_seqs": 128, "micro_batch": 1, "seq_len": 32768},
            "parallel": {"tp": 1, "pp": 1, "cp": cp, "dp": 128 // cp, "recompute": "full"},
        }
    )


@pytest.mark.parametrize("cp", [4, 16])
def test_ring_attention_on_short_blocks_runs_below_the_long_sequence_ceiling(cp: int) -> None:
    # the attention FLOPs per GPU are the same whatever cp is; with the length factor the kernel on
    # s/cp keys is slower per FLOP than on s keys, on top of what else cp changes
    cal = default_calibration()
    flat = replace(cal, attn_half_len_tokens=0.0)

    def compute(c: int, calib: object) -> float:
        r = estimate_step(_cp_scenario(c), require_fit=False, cal=calib)  # type: ignore[arg-type]
        return r.breakdown["compute"] + r.breakdown["recompute"]

    with_len = compute(cp, cal) / compute(1, cal)
    without = compute(cp, flat) / compute(1, flat)
    # FlashAttention-3: 2,048-key blocks run at ~0.91 of 16k-key ones, 8,192 at ~0.98
    assert with_len > without * (1.0 + 0.01 * (cp / 4))
