"""Inventory arithmetic against hand-computed figures, and catalog-name errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wanka.errors import CatalogError
from wanka.infra import TYPICAL_RACK_POWER_W, inventory
from wanka.spec import (
    ClusterSpec,
    FabricSpec,
    FacilitySpec,
    ScaleUpSpec,
    StorageSpec,
    list_presets,
    load_scenario,
)
from wanka.units import GIB


def test_meta_roce_inventory_by_hand() -> None:
    s = load_scenario("meta-24k-h100-roce")
    inv = inventory(s.cluster, s.facility)
    assert inv.accelerators == 24_576 and inv.nodes == 3_072
    assert inv.peak_flops["bf16"] == pytest.approx(24_576 * 989.4e12)  # H100 datasheet, dense BF16
    assert inv.hbm_bytes == pytest.approx(24_576 * 80 * GIB)
    assert inv.scale_up_domains == 3_072 and inv.scale_up_remainder == 0
    assert inv.racks.gpus_per_rack == 16 and inv.racks.racks == 1_536  # Llama 3 paper: 16 GPUs per rack
    assert inv.fabric.injection_bandwidth == pytest.approx(24_576 * 50e9)  # 400 Gb/s per GPU
    assert inv.fabric.rails == 1 and inv.fabric.switch == "Minipack2"
    assert inv.storage.read_bandwidth == pytest.approx(7e12, rel=1e-3)  # Tectonic 7 TB/s peak
    assert inv.notes == []


def test_rail_optimised_fabric_has_a_rail_per_gpu() -> None:
    inv = inventory(load_scenario("meta-24k-h100-ib").cluster)
    assert inv.fabric.rails == 8 and inv.fabric.switch_radix == 64 and inv.fabric.switch_port_gbps == 400


def test_nvl72_racks_hold_whole_domains() -> None:
    c = ClusterSpec(accelerator="GB200", nodes=72, gpus_per_node=4, scale_up=ScaleUpSpec(domain_size=72))
    inv = inventory(c, FacilitySpec(cooling="liquid"))
    assert inv.node == "GB200-NVL72-tray"
    assert inv.scale_up_domains == 4 and inv.racks.gpus_per_rack == 72 and inv.racks.racks == 4


def test_rack_budget_rule() -> None:
    # air budget / DGX H100 10.2 kW -> 4 nodes; an explicit 25 kW budget -> 2 nodes
    c = ClusterSpec(accelerator="H100", nodes=10)
    assert inventory(c).racks.nodes_per_rack == int(TYPICAL_RACK_POWER_W["air"] // 10_200)
    r = inventory(c, FacilitySpec(rack_power_kw=25)).racks
    assert (r.nodes_per_rack, r.racks) == (2, 5)


def test_typical_switch_and_nic_follow_speed_and_protocol() -> None:
    c = ClusterSpec(accelerator="H100", nodes=4, fabric=FabricSpec(kind="infiniband", nic_gbps_per_gpu=800))
    f = inventory(c).fabric
    assert f.switch == "Q3400" and f.nic == "ConnectX-8-800G"
    c = ClusterSpec(accelerator="A100", nodes=4, fabric=FabricSpec(kind="infiniband", nic_gbps_per_gpu=200))
    assert inventory(c).fabric.switch == "QM8700"


def test_notes_flag_mismatches() -> None:
    c = ClusterSpec(accelerator="H100", nodes=2, node="DGX-A100", scale_up=ScaleUpSpec(domain_size=4))
    notes = " ".join(inventory(c).notes)
    assert "built for A100-SXM4-80GB" in notes and "domain_size = 4" in notes


@pytest.mark.parametrize(
    ("cluster", "field"),
    [
        (ClusterSpec(accelerator="TPU-v9", nodes=2), "cluster.accelerator"),
        (ClusterSpec(accelerator="H100", nodes=2, node="DGX-Z"), "cluster.node"),
        (ClusterSpec(accelerator="H100", nodes=2, fabric=FabricSpec(switch="QM1")), "cluster.fabric"),
        (ClusterSpec(accelerator="H100", nodes=2, storage=StorageSpec(server="tape")), "cluster.storage"),
    ],
)
def test_unknown_catalog_names(cluster: ClusterSpec, field: str) -> None:
    with pytest.raises(CatalogError) as e:
        inventory(cluster)
    assert str(e.value).startswith(field)


@pytest.mark.parametrize("name", list_presets())
def test_every_preset_inventories_cleanly(name: str) -> None:
    s = load_scenario(name)
    inv = inventory(s.cluster, s.facility)
    assert inv.accelerators == s.cluster.accelerators
    assert inv.racks.racks * inv.racks.nodes_per_rack >= inv.nodes
    assert inv.notes == [], inv.notes
    d = inv.to_dict()
    assert isinstance(d["accelerators"], int) and isinstance(d["peak_flops"], dict)


@settings(max_examples=60, deadline=None)
@given(nodes=st.integers(1, 5000), gpn=st.sampled_from([1, 2, 4, 8]), kw=st.floats(5, 200))
def test_inventory_invariants(nodes: int, gpn: int, kw: float) -> None:
    c = ClusterSpec(accelerator="H100", nodes=nodes, gpus_per_node=gpn, scale_up=ScaleUpSpec(domain_size=gpn))
    inv = inventory(c, FacilitySpec(rack_power_kw=kw))
    assert inv.accelerators == nodes * gpn
    assert inv.scale_up_domains * gpn + inv.scale_up_remainder == inv.accelerators
    r = inv.racks
    assert (r.racks - 1) * r.nodes_per_rack < nodes <= r.racks * r.nodes_per_rack
    assert inv.peak_flops["fp8"] == pytest.approx(2 * inv.peak_flops["bf16"], rel=1e-3)
