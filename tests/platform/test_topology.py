from __future__ import annotations

from wanka.platform import Cluster, placement_domains
from wanka.spec import ClusterSpec


def test_infiniband_rail_optimised_default() -> None:
    # the network's fabric: 16,384 GPUs on 64-port 400G switches need 3 tiers; half of a leaf's ports
    # face down = 32 nodes per rail-leaf group; a pod is the 32 leaves under half a spine's ports = 4 groups
    spec = ClusterSpec(accelerator="H100", nodes=2048)
    d = placement_domains(spec)
    assert (d.radix, d.downlinks, d.nodes_per_leaf, d.leaves_per_pod) == (64, 32, 32, 4)
    from wanka.network.topology import build_topology

    t = build_topology(spec)  # one topology: the scheduler's groups are the network's leaves and pods
    assert d.nodes_per_leaf * d.leaves_per_pod * spec.gpus_per_node == t.endpoints_per_leaf * t.leaves_per_pod
    assert d.nodes_per_domain == 1


def test_oversubscription_and_non_rail() -> None:
    d = placement_domains(ClusterSpec(accelerator="H100", nodes=100, fabric={"oversubscription": 3.0}))
    assert d.downlinks == 34  # 48 of 64 ports face down (3:1); 100 nodes spread over 3 leaf groups
    d = placement_domains(ClusterSpec(accelerator="H100", nodes=100, fabric={"rail_optimized": False}))
    assert d.nodes_per_leaf == 4  # 32 downlinks / 8 NICs


def test_ethernet_breakout_and_three_tiers() -> None:
    # 128 x 400G: 64 down; 3 tiers -> 64 rail leaves per pod = 8 leaf groups of 64 nodes
    d = placement_domains(ClusterSpec(accelerator="H100", nodes=3072, fabric={"kind": "roce", "tiers": 3}))
    assert (d.radix, d.nodes_per_leaf, d.leaves_per_pod) == (128, 64, 8)


def test_unknown_switch_falls_back_with_note() -> None:
    d = placement_domains(ClusterSpec(accelerator="H100", nodes=8, fabric={"switch": "no-such-switch"}))
    assert d.radix == 64
    assert any("no-such-switch" in a for a in d.assumptions)


def test_scale_up_domain_spans_nodes() -> None:
    spec = ClusterSpec(accelerator="GB200", nodes=72, gpus_per_node=4, scale_up={"domain_size": 72})
    c = Cluster.from_spec(spec)
    assert c.nodes_per_domain == 18
    assert c.n_domains == 4


def test_cluster_layout_is_contiguous() -> None:
    c = Cluster.from_spec(ClusterSpec(accelerator="H100", nodes=100, fabric={"tiers": 3}))
    assert c.n_leaves == 4  # ceil(100 / 32) leaf groups, the nodes spread evenly: 25 each
    assert c.leaf[24] == 0 and c.leaf[25] == 1
    assert c.total_gpus == 800
