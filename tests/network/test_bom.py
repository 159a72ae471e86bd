"""Bill of materials: counts and power by hand from the catalog entries and the cabling rule."""

from __future__ import annotations

import math

import pytest

from wanka.catalog import Optic, optic, switch
from wanka.network.bom import bill_of_materials
from wanka.network.topology import fat_tree
from wanka.spec import ClusterSpec, FabricSpec, load_scenario


def _optic(name: str, gbps: float, reach: float, watts: float, kind: str = "optical") -> Optic:
    return Optic(name, "test", gbps * 1e9 / 8, reach, watts, kind, "test fixture")


def test_two_tier_rail_optimised_by_hand() -> None:
    # 64 DGX A100 (512 GPUs, 200G HDR per GPU) on QM8700 (40 x 200G): rail groups of 16 nodes -> 4 groups
    # x 8 rails = 32 leaves with 16 GPUs and 16 uplinks; 512 uplinks fill 512 / 40 -> 16 spines (divisor of 16)
    c = ClusterSpec(
        accelerator="A100-SXM4-80GB",
        nodes=64,
        fabric=FabricSpec(tiers=2, nic_gbps_per_gpu=200, switch="QM8700", rail_optimized=True),
    )
    mods = [_optic("sr-200", 200, 100, 5.0), _optic("dac-200", 200, 2, 0.1, "dac")]
    b = bill_of_materials(c, optics=mods)
    assert b.switches_per_tier == {"leaf": 32, "spine": 16}
    assert b.links_per_tier == {"endpoint-leaf": 512, "leaf-spine": 512}
    # rail-optimised: optics at NIC and switch end of every GPU link, both ends of every uplink
    assert b.optics_by_type == {"sr-200": 512 + 512 + 2 * 512}
    assert b.optics_power_w == pytest.approx(2048 * 5.0)
    assert b.switch_power_w == pytest.approx(48 * switch("QM8700").power_w)
    assert b.cables == {"fibre": 1024, "copper": 0}
    assert b.network_power_w == pytest.approx(b.switch_power_w + b.optics_power_w)


def test_top_of_rack_uses_copper_and_twin_port_modules() -> None:
    c = ClusterSpec(
        accelerator="H100-SXM5-80GB", nodes=64, fabric=FabricSpec(tiers=2, switch="QM9700", rail_optimized=False)
    )
    mods = [
        _optic("sr-400", 400, 50, 9.0),
        _optic("dac-800-split", 800, 3, 0.1, "dac"),
        _optic("twin-800", 800, 50, 15.0),
    ]
    b = bill_of_materials(c, optics=mods)
    # QM9700 ports are 400G: an 800G module does not fit one port, so 400G modules at the switch;
    # the in-rack links are copper; the 800G splitter cable does not fit the 400G cage either
    assert b.cables["copper"] == 512
    assert b.optics_by_type == {"uncatalogued dac": 512, "sr-400": 2 * 512}
    assert any("copper" in a for a in b.assumptions)


def test_missing_optics_are_counted_not_powered() -> None:
    c = ClusterSpec(accelerator="H100-SXM5-80GB", nodes=4, fabric=FabricSpec(tiers=2, switch="QM9700"))
    b = bill_of_materials(c, optics=[])
    assert b.optics_power_w == 0.0 and b.optics_count == 32 + 32 + 64
    assert any("not powered" in a for a in b.assumptions)


def test_breakout_modules_carry_two_links() -> None:
    t = fat_tree(256, 64, 2, rails=8, port_bandwidth=100e9, endpoint_bandwidth=50e9, switch_name="SN5600")
    c = ClusterSpec(accelerator="H100-SXM5-80GB", nodes=32)
    b = bill_of_materials(c, topology=t, optics=[_optic("sr-400", 400, 50, 9.0), _optic("twin-800", 800, 50, 15.0)])
    lines = {x.where: x for x in b.optics_lines}
    assert lines["endpoint-leaf, NIC end"].name == "sr-400" and lines["endpoint-leaf, NIC end"].count == 256
    assert lines["endpoint-leaf, switch end"].name == "twin-800"  # 7.5 W per 400G link beats 9 W
    assert lines["endpoint-leaf, switch end"].count == 128


def test_to_dict_keys_and_facility_contract() -> None:
    c = ClusterSpec(accelerator="H100-SXM5-80GB", nodes=16, fabric=FabricSpec(tiers=2, switch="QM9700"))
    b = bill_of_materials(c)
    d = b.to_dict()
    for key in (
        "switches",
        "optics",
        "bisection_bytes_per_s",
        "max_accelerators_for_tiers",
        "switch_power_w",
        "optics_power_w",
        "cables",
        "links",
    ):
        assert key in d
    assert d["switches"]["total"] == sum(v for k, v in d["switches"].items() if k != "total")
    assert d["max_accelerators_for_tiers"] == {"1": 64, "2": 2048, "3": 65536}
    # wanka.facility reads these as floats
    assert float(b.switch_power_w) > 0 and float(b.optics_power_w) > 0
    assert not hasattr(b, "switches")  # facility does float(getattr(bom, "switches", switch_count))
    assert b.switch_count == d["switches"]["total"]


def test_meta_vs_traditional() -> None:
    meta = bill_of_materials(load_scenario("meta-24k-h100-roce").cluster)
    trad = bill_of_materials(load_scenario("traditional-512-a100").cluster)
    assert (meta.tiers, trad.tiers) == (3, 2)
    assert meta.switch_count > 20 * trad.switch_count
    assert meta.optics_count > 20 * trad.optics_count
    assert meta.network_power_w > 50 * trad.network_power_w
    # per GPU the 万卡 fabric costs more power too (a third tier of switches and optics)
    assert meta.network_power_w / 24576 > trad.network_power_w / 512
    # as published: pods of 3,072 GPUs with full bisection, 1:7 between pods at the aggregation layer
    assert math.isclose(meta.bisection_bytes_per_s, 24576 / 2 * 50e9 / 7, rel_tol=0.01)
    assert meta.topology.endpoints_per_leaf == 16 and meta.topology.pods == 8
    assert optic("OSFP-400G-SR4").name in meta.optics_by_type
