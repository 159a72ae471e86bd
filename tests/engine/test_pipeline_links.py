"""Where pipeline p2p traffic goes: a stage boundary whose ranks share a scale-up domain stays on
NVLink; one between domains crosses the NIC whole, and more stages mean more boundaries."""

from __future__ import annotations

import pytest

from wanka.engine import estimate_step
from wanka.spec import Scenario, parse_scenario


def _job(**par: object) -> Scenario:
    return parse_scenario(
        {
            "name": "pp-links",
            "cluster": {"accelerator": "H100", "nodes": 8, "fabric": {"nic_gbps_per_gpu": 400}},
            "model": "llama3-70b",
            "training": {"global_batch_seqs": 128, "micro_batch": 1, "tokens": 1e11},
            "parallel": {"sp": True, **par},
        }
    )


def test_pipeline_sends_inside_a_domain_stay_on_scale_up_and_between_domains_use_the_nic() -> None:
    # Megatron rank order tp-cp-dp-pp: pp neighbours sit tp·cp·dp ranks apart; with tp·dp = 2 on
    # 8-GPU domains (pp 32, dp 1) each boundary hop is 2 ranks: inside the domain
    near = estimate_step(_job(tp=2, pp=32, dp=1, vpp=1), require_fit=False)
    # tp 8: every pipeline neighbour is in the next domain
    far = estimate_step(_job(tp=8, pp=8, dp=1, vpp=1), require_fit=False)
    assert near.link_busy_s["scale_up"]["pp"] > 0.0
    assert near.link_busy_s["nic"]["pp"] == 0.0
    assert far.link_busy_s["nic"]["pp"] > 0.0
    assert far.link_busy_s["scale_up"]["pp"] == 0.0
    # traffic: one s·b·h/tp activation forward and one gradient backward per micro-batch and chunk
    # boundary, 2·v·m sends per rank (here v = 1, m = 128)
    act = 8192 * 8192 * 2.0  # seq x hidden x bf16
    assert far.traffic_bytes["pp"] == pytest.approx(2 * 128 * act / 8)
    assert near.traffic_bytes["pp"] == pytest.approx(2 * 128 * act / 2)


def test_interleaving_multiplies_the_boundaries_a_rank_sends_across() -> None:
    one = estimate_step(_job(tp=8, pp=8, dp=1, vpp=1), require_fit=False)
    two = estimate_step(_job(tp=8, pp=8, dp=1, vpp=2), require_fit=False)
    # v chunks per rank: v times the sends on the NIC, each the same size
    assert two.traffic_bytes["pp"] == pytest.approx(2.0 * one.traffic_bytes["pp"])
    assert two.link_busy_s["nic"]["pp"] == pytest.approx(2.0 * one.link_busy_s["nic"]["pp"])
