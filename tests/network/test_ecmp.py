"""Static ECMP hashing in expectation (wanka.network.ecmp): exact balls into bins, NCCL's flows, and
the flow simulator's mean over hash seeds."""

import itertools
import math

import numpy as np
import pytest

from wanka.network.ecmp import (
    collective_ecmp_slowdown,
    double_tree_edges,
    ecmp_slowdown,
    expected_max_load,
    max_load_cdf,
    node_flows,
)
from wanka.network.flow import collective_traffic, simulate
from wanka.network.topology import build_topology
from wanka.spec.cluster import ClusterSpec


def test_expected_max_load_by_hand() -> None:
    assert math.isclose(expected_max_load(2, 2), 1.5)  # both in one bin half the time
    assert math.isclose(expected_max_load(3, 3), 51 / 27)  # 6 ways all apart, 3 all together, 18 a pair
    assert math.isclose(expected_max_load(5, 1), 5.0)
    assert math.isclose(expected_max_load(1, 7), 1.0)
    assert expected_max_load(0, 4) == 0.0


@pytest.mark.parametrize(("balls", "bins"), [(4, 3), (5, 2), (6, 4)])
def test_max_load_law_matches_enumeration(balls: int, bins: int) -> None:
    counts = [max(np.bincount(p, minlength=bins)) for p in itertools.product(range(bins), repeat=balls)]
    for c, p in enumerate(max_load_cdf(balls, bins)):
        assert math.isclose(p, sum(m <= c for m in counts) / bins**balls, abs_tol=1e-12), c


def test_max_over_switches_grows_with_their_number() -> None:
    one, many = expected_max_load(16, 64), expected_max_load(16, 64, groups=8)
    assert 1.0 < one < many < 16.0


def test_a_link_with_room_for_every_flow_is_not_a_slowdown() -> None:
    assert ecmp_slowdown([(2, 64, 1)], flows_per_port=4.0) == 1.0
    assert ecmp_slowdown([], flows_per_port=1.0) == 1.0
    assert ecmp_slowdown([(2, 1, 1)], flows_per_port=1.0) == 2.0  # both flows on the one uplink


def test_nccl_double_binary_tree_on_eight_nodes() -> None:
    a, b = double_tree_edges(8)
    assert dict(a) == {1: 2, 2: 4, 3: 2, 4: 0, 5: 6, 6: 4, 7: 6}  # ncclGetBtree: 0 <- 4 <- {2, 6}
    assert dict(b) == {7 - c: 7 - p for c, p in a}  # the mirror
    inner_a = {p for _, p in a}
    inner_b = {p for _, p in b}
    assert not (inner_a & inner_b) - {0, 7}  # interior in one tree, a leaf in the other


def test_ring_flows_are_channels_times_queue_pairs_per_nic() -> None:
    sn, sr, dn, dr = node_flows("ring", 4, 8, channels=16, qps=2)
    assert sn.size == 4 * 16 * 2 and np.all(sr == dr) and np.all(dn == (sn + 1) % 4)
    assert np.bincount(sn * 8 + sr).max() == 4  # 2 channels x 2 QPs


def _cluster(nodes: int, rail: bool, kind: str = "roce", qps: int = 1) -> ClusterSpec:
    return ClusterSpec(
        accelerator="H100-SXM5-80GB",
        nodes=nodes,
        fabric={"kind": kind, "rail_optimized": rail, "qps_per_connection": qps},
    )


def test_expected_slowdown_agrees_with_the_flow_simulator_over_hash_seeds() -> None:
    # 32 nodes on 8-node top-of-rack leaves, a ring per rail with 2 hashed flows per NIC: the flow
    # model's ECMP draws, averaged over seeds, against the expectation (both leaf ends, no polarisation)
    t = build_topology(_cluster(32, rail=False))
    traffic = collective_traffic(t, "all_gather", 1 << 20, 256, 1, qps=2)
    mean = float(np.mean([simulate(t, traffic, "ecmp", seed).slowdown for seed in range(24)]))
    expected = collective_ecmp_slowdown(t, "ring", 32, channels=8, qps=2)
    assert expected > 1.2
    assert abs(expected / mean - 1.0) < 0.08, (expected, mean)


def test_more_queue_pairs_and_adaptive_routing_remove_the_collisions() -> None:
    t = build_topology(_cluster(32, rail=False))
    one_qp = collective_ecmp_slowdown(t, "ring", 32, channels=16, qps=1)
    assert one_qp > 1.2
    assert collective_ecmp_slowdown(t, "ring", 32, channels=16, qps=4) < one_qp  # Meta's QP scaling
    assert collective_ecmp_slowdown(t, "ring", 32, channels=16, routing="adaptive") == 1.0


def test_trees_spread_over_more_flows_than_rings() -> None:
    t = build_topology(_cluster(32, rail=False))
    ring = collective_ecmp_slowdown(t, "ring", 32, channels=16)
    tree = collective_ecmp_slowdown(t, "nvls_tree", 32, channels=16)
    assert 1.0 <= tree < ring


def test_rail_aligned_traffic_on_one_rail_leaf_is_not_hashed() -> None:
    t = build_topology(_cluster(32, rail=True))
    assert t.nodes_per_leaf >= 32
    assert collective_ecmp_slowdown(t, "ring", 32, channels=16) == 1.0


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="algorithm"):
        node_flows("pat", 4, 8, 16, 1)
    with pytest.raises(ValueError, match="routing"):
        collective_ecmp_slowdown(build_topology(_cluster(32, rail=False)), "ring", 32, channels=16, routing="spray")
    with pytest.raises(ValueError, match="balls"):
        max_load_cdf(-1, 2)


def test_an_oversubscribed_spine_tier_adds_its_own_collisions() -> None:
    # 256 nodes in pods of two 8-node leaves: every ring and tree edge that leaves a pod is hashed again
    # onto the pod's spine-core links; at 1:7 there are 20 of them instead of 128, so the busiest holds more
    base = {"kind": "roce", "rail_optimized": False, "tiers": 3, "gpus_per_leaf": 64, "gpus_per_pod": 128}
    flat = build_topology(ClusterSpec(accelerator="H100-SXM5-80GB", nodes=256, fabric=base))
    tapered = build_topology(
        ClusterSpec(accelerator="H100-SXM5-80GB", nodes=256, fabric={**base, "spine_oversubscription": 7.0})
    )
    assert flat.pods == 16 and tapered.spine_uplinks().sum() < flat.spine_uplinks().sum() / 6
    for algorithm in ("ring", "tree"):
        one = collective_ecmp_slowdown(flat, algorithm, 256, channels=16)
        seven = collective_ecmp_slowdown(tapered, algorithm, 256, channels=16)
        assert seven > 1.2 * one and one > 1.0, (algorithm, one, seven)
        assert collective_ecmp_slowdown(tapered, algorithm, 256, channels=16, qps=16) == 1.0  # enough QPs


def test_the_engine_factor_hashes_nccl_s_two_channels_per_connection() -> None:
    # NCCL duplicates every ring channel (connect.cc), so one QP per connection is two hashed flows
    from wanka.network.flow import NCCL_CHANNELS_PER_CONNECTION, contention_factor

    assert NCCL_CHANNELS_PER_CONNECTION == 2
    c = _cluster(32, rail=False)
    t = build_topology(c)
    two = simulate(t, collective_traffic(t, "all_reduce", 1 << 20, 32, 8, qps=2), "ecmp", 0).slowdown
    one = simulate(t, collective_traffic(t, "all_reduce", 1 << 20, 32, 8, qps=1), "ecmp", 0).slowdown
    assert contention_factor(c, "all_reduce", 32, 8) == pytest.approx(max(1.0, two))
    assert two < one
