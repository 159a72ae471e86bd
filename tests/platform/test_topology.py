from __future__ import annotations

from wanka.platform import Cluster, placement_domains
from wanka.spec import ClusterSpec


def test_infiniband_rail_optimised_default() -> None:
    # 64-port 400G leaf, half down = 32 ports; rail-optimised leaf group serves 32 nodes;
    # two tiers: 64 leaves under the spines.
    d = placement_domains(ClusterSpec(accelerator="H100", nodes=2048))
    assert (d.radix, d.downlinks, d.nodes_per_leaf, d.leaves_per_pod) == (64, 32, 32, 64)
    assert d.nodes_per_domain == 1


def test_oversubscription_and_non_rail() -> None:
    d = placement_domains(ClusterSpec(accelerator="H100", nodes=100, fabric={"oversubscription": 3.0}))
    assert d.downlinks == 48  # 64 × 3/4
    d = placement_domains(ClusterSpec(accelerator="H100", nodes=100, fabric={"rail_optimized": False}))
    assert d.nodes_per_leaf == 4  # 32 downlinks / 8 NICs


def test_ethernet_breakout_and_three_tiers() -> None:
    # 64 × 800G at 400G NIC speed = 128 ports; 64 down; 3 tiers → 128 // 2 = 64 leaves per pod
    d = placement_domains(ClusterSpec(accelerator="H100", nodes=3072, fabric={"kind": "roce", "tiers": 3}))
    assert (d.radix, d.nodes_per_leaf, d.leaves_per_pod) == (128, 64, 64)


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
    assert c.n_leaves == 4  # ceil(100 / 32)
    assert c.leaf[31] == 0 and c.leaf[32] == 1
    assert c.total_gpus == 800
