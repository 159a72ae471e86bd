"""Fat-tree builder: counts derived by hand from the k-ary fat-tree (Al-Fares et al., SIGCOMM 2008)."""

from __future__ import annotations

import numpy as np
import pytest

from wanka.errors import SpecError
from wanka.network.topology import build_topology, fat_tree, max_endpoints
from wanka.spec import ClusterSpec, FabricSpec, ScaleUpSpec, load_scenario

NDR = 400e9 / 8  # 400 Gb/s port in B/s


def test_tier_reach_of_64_port_switches() -> None:
    # issue 4: 2-tier non-blocking k²/2 = 2,048 endpoints; 3-tier k³/4 = 65,536
    assert max_endpoints(64, 1) == 64
    assert max_endpoints(64, 2) == 2048
    assert max_endpoints(64, 3) == 65536
    fat_tree(2048, 64, 2, port_bandwidth=NDR)
    fat_tree(65536, 64, 3, port_bandwidth=NDR)
    with pytest.raises(SpecError, match="2,048"):
        fat_tree(2049, 64, 2, port_bandwidth=NDR)
    with pytest.raises(SpecError, match="65,536"):
        fat_tree(65537, 64, 3, port_bandwidth=NDR)


def test_full_three_tier_counts_match_k_ary_fat_tree() -> None:
    k = 16  # k pods of k/2 leaves and k/2 spines, (k/2)² cores, k³/4 hosts
    t = fat_tree(k**3 // 4, k, 3, port_bandwidth=NDR)
    assert t.switches_per_tier == {"leaf": k * k // 2, "spine": k * k // 2, "core": (k // 2) ** 2}
    assert t.pods == k and t.leaves_per_pod == k // 2
    assert t.links_per_tier == {"endpoint-leaf": k**3 // 4, "leaf-spine": k**3 // 4, "spine-core": k**3 // 4}
    # non-blocking: bisection = half the hosts at line rate
    assert t.bisection_bytes_per_s == pytest.approx(k**3 / 8 * NDR)


def test_graph_is_consistent_with_counts() -> None:
    k = 8
    t = fat_tree(k**3 // 4, k, 3, port_bandwidth=NDR)
    g = t.graph()
    assert g.num_links == sum(t.links_per_tier.values())
    deg = g.degree()
    assert np.all(deg[: t.endpoints] == 1)
    assert np.all(deg[t.endpoints :] == k)  # every switch port used
    # CSR is symmetric: b in N(a) iff a in N(b)
    for node in (0, t.endpoints, t.endpoints + t.leaves, g.num_nodes - 1):
        for nb in g.neighbours(node):
            assert node in g.neighbours(int(nb))
    assert np.all(g.link_capacity == NDR)


def test_two_tier_partial_and_oversubscribed() -> None:
    t = fat_tree(256, 64, 2, port_bandwidth=NDR)
    assert t.leaves == 8 and t.endpoints_per_leaf == 32 and t.uplinks_per_leaf == 32
    assert t.spines_per_pod == 4  # 8 leaves x 32 uplinks fill 4 spines of 64 ports, 8 links per pair
    o = fat_tree(2048, 64, 2, oversubscription=3.0, port_bandwidth=NDR)
    assert o.endpoints_per_leaf == 48 and o.uplinks_per_leaf == 16  # 48:16 = 3:1 of 64 ports
    assert max_endpoints(64, 2, 3.0) == 64 * 48
    assert o.bisection_bytes_per_s == pytest.approx(o.leaves * 16 * NDR / 2)


def test_breakout_and_wide_nics() -> None:
    # 400G NICs on a 64 x 800G switch: each port splits 2 x 400G, radix 128, 2-tier 8,192
    t = fat_tree(8192, 64, 2, port_bandwidth=2 * NDR, endpoint_bandwidth=NDR)
    assert t.radix == 128 and t.split == 2 and t.link_bandwidth == NDR
    # 800G NICs on 400G ports take two ports each: half the endpoints per leaf
    w = fat_tree(1024, 64, 2, port_bandwidth=NDR, endpoint_bandwidth=2 * NDR)
    assert w.ports_per_endpoint == 2 and w.max_endpoints_for_tiers()[2] == 64 * 16


def test_rail_optimised_vs_top_of_rack_placement() -> None:
    rail = fat_tree(1024, 64, 2, rails=8, port_bandwidth=NDR)
    tor = fat_tree(1024, 64, 2, rails=1, gpus_per_node=8, port_bandwidth=NDR)
    node0 = np.arange(8)
    assert np.unique(rail.leaf_of(node0)).size == 8  # one leaf per rail
    assert np.unique(tor.leaf_of(node0)).size == 1  # the rack's leaf
    assert rail.nodes_per_leaf == 32 and tor.nodes_per_leaf == 4
    # GPU r of nodes 0..31 share the rail-r leaf
    assert np.unique(rail.leaf_of(np.arange(32) * 8 + 3)).size == 1
    assert rail.endpoints_on_leaf().sum() == 1024


def test_planes_multiply_switches_not_reach() -> None:
    one = fat_tree(2048, 64, 2, port_bandwidth=NDR)
    two = fat_tree(2048, 64, 2, planes=2, port_bandwidth=NDR / 2, endpoint_bandwidth=NDR / 2)
    assert two.switches == 2 * one.switches
    assert two.bisection_bytes_per_s == pytest.approx(one.bisection_bytes_per_s)


def test_large_graph_builds() -> None:
    t = fat_tree(131072, 128, 3, rails=8, port_bandwidth=NDR)
    g = t.graph()
    assert g.num_links == 3 * 131072 and g.indptr[-1] == 2 * g.num_links


def test_bad_tiers() -> None:
    with pytest.raises(SpecError):
        fat_tree(65, 64, 1, port_bandwidth=NDR)
    with pytest.raises(SpecError):
        fat_tree(10, 64, 4, port_bandwidth=NDR)


def test_build_topology_from_cluster() -> None:
    c = ClusterSpec(
        accelerator="GB200",
        nodes=18 * 8,
        gpus_per_node=4,
        scale_up=ScaleUpSpec(domain_size=72),
        fabric=FabricSpec(kind="infiniband", tiers=2, switch="QM9700", nic_gbps_per_gpu=800),
    )
    t = build_topology(c)
    assert t.ports_per_endpoint == 2 and t.endpoints == 576
    assert t.scale_up is not None and t.scale_up.supernode and t.scale_up.count == 8
    small = c.model_copy(update={"fabric": c.fabric.model_copy(update={"tiers": 1})})
    with pytest.raises(SpecError, match=r"cluster\.fabric\.tiers"):
        build_topology(small)


def test_presets_differ_in_tiers() -> None:
    meta = build_topology(load_scenario("meta-24k-h100-roce").cluster)
    trad = build_topology(load_scenario("traditional-512-a100").cluster)
    assert meta.tiers == 3 and trad.tiers == 2
    assert meta.switches > 20 * trad.switches


def test_fabric_that_cannot_be_built_names_the_limit_and_the_fix() -> None:
    from wanka.errors import SpecError
    from wanka.network.groups import fabric_slowdowns
    from wanka.spec import ClusterSpec

    # 131,072 H100 on 64-port NDR switches: three tiers reach 65,536; the error names a switch that fits
    big = ClusterSpec.model_validate({"accelerator": "H100", "nodes": 16_384, "fabric": {"kind": "infiniband"}})
    with pytest.raises(SpecError, match=r"65,536 .*131,072.*Q3400") as e:
        build_topology(big)
    assert e.value.field == "cluster.fabric.switch"
    with pytest.raises(SpecError, match="larger switch"):
        fabric_slowdowns(big)  # the engine's contention is an error too, never a neutral 1.0
    # tiers set by the scenario and too few: the error names the tier limit and the way out
    two = ClusterSpec.model_validate({"accelerator": "H100", "nodes": 1024, "fabric": {"tiers": 2}})
    with pytest.raises(SpecError, match=r"= 2 reaches at most 2,048 .*use 3 tiers"):
        build_topology(two)


def test_tiers_left_unset_take_the_fewest_that_reach() -> None:
    from wanka.spec import ClusterSpec

    for nodes, tiers in ((4, 1), (64, 2), (1024, 3)):
        c = ClusterSpec.model_validate({"accelerator": "H100", "nodes": nodes})
        assert build_topology(c).tiers == tiers
    c = ClusterSpec.model_validate({"accelerator": "H100", "nodes": 16_384, "fabric": {"switch": "Q3400"}})
    assert build_topology(c).endpoints == 131_072


def test_meta_roce_fabric_as_published() -> None:
    # Llama 3 paper Sec. 3.3.1: 16 GPUs per ToR, 3,072-GPU pods with full bisection, 1:7 at aggregation
    from wanka.network.flow import collective_traffic, simulate

    t = build_topology(load_scenario("meta-24k-h100-roce").cluster)
    tiers = {r["tier"]: r for r in t.per_tier()}
    assert t.endpoints_per_leaf == 16 and t.endpoints_per_leaf * t.leaves_per_pod == 3072 and t.pods == 8
    assert tiers["leaf"]["oversubscription"] == 1.0
    assert tiers["spine"]["oversubscription"] == pytest.approx(7.0, rel=0.01)
    assert tiers["spine"]["switch"] == "Arista-7800R3" and tiers["leaf"]["switch"] == "Minipack2"
    # inside a pod nothing is oversubscribed; all-to-all across the 8 pods runs at about 1/7 of line rate
    # on the cross-pod share (7/8 of the bytes): slowdown ~ 7 x 7/8
    one_pod = simulate(t, collective_traffic(t, "all_to_all", 2**26, size=3072), "adaptive")
    whole = simulate(t, collective_traffic(t, "all_to_all", 2**26), "adaptive")
    assert one_pod.slowdown == pytest.approx(1.0, rel=0.02)
    assert whole.slowdown == pytest.approx(7 * 7 / 8, rel=0.05)


def test_spine_oversubscription_cannot_exceed_its_switch() -> None:
    c = ClusterSpec.model_validate(
        {"accelerator": "H100", "nodes": 3072, "fabric": {"gpus_per_leaf": 16, "gpus_per_pod": 24576, "tiers": 3}}
    )
    with pytest.raises(SpecError, match="gpus_per_pod"):
        build_topology(c)
