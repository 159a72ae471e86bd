"""Supernodes as topologies: scale-up fabrics from the catalog, their timing, and what they buy a job."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from wanka.catalog import accelerator, catalog, default_scale_up_fabric, scale_up_fabric
from wanka.engine import estimate_step
from wanka.errors import SpecError
from wanka.infra import inventory
from wanka.network import collective_time, comm_group
from wanka.network.groups import scale_up_bw, scale_up_path
from wanka.planner.presets import SUPERNODES, shrink_domain, supernode_gain
from wanka.spec import ClusterSpec, list_presets, load_model, load_scenario, parse_scenario


# ---------------------------------------------------------------- catalog
def test_every_fabric_is_sourced_and_built_for_catalog_accelerators() -> None:
    fabs = list(catalog().scale_up_fabrics)
    assert {f.kind for f in fabs} >= {"nvlink", "ub", "hccs", "xgmi", "mtlink"}
    for f in fabs:
        assert len(f.source) >= 40, f.name
        assert f.domain_size % f.first_tier_size == 0, f.name
        for a in f.accelerators:
            assert a in catalog().accelerators, (f.name, a)


def test_supernode_entries_state_their_public_and_assumed_figures() -> None:
    cm = scale_up_fabric("UB-CloudMatrix384")
    assert (cm.domain_size, cm.first_tier_size, cm.bandwidth) == (384, 8, 392e9)
    assert "2506.12708" in cm.source  # the CloudMatrix384 paper
    nvl576 = scale_up_fabric("NVL576")
    assert nvl576.domain_size == 576 and nvl576.first_tier_size == 72
    assert nvl576.assumptions and "not published" in " ".join(nvl576.assumptions)
    # the per-GPU figures agree with the accelerators' own catalog entries (consistency check)
    assert scale_up_fabric("NVL72").bandwidth == accelerator("GB200").scale_up_bandwidth
    assert cm.bandwidth == accelerator("Ascend-910C").scale_up_bandwidth


# ---------------------------------------------------------------- spec
def _cm384(**scale_up: object) -> dict[str, Any]:
    d = load_scenario("cloudmatrix384").model_dump(mode="json", exclude_none=True)
    d["cluster"]["scale_up"] = dict(scale_up)
    return d


def test_fabric_fills_domain_size_and_explicit_fields_win() -> None:
    s = parse_scenario(_cm384(fabric="cm384-ub"))  # alias
    assert s.cluster.scale_up.fabric == "UB-CloudMatrix384" and s.cluster.scale_up.domain_size == 384
    s = parse_scenario(_cm384(fabric="UB-CloudMatrix384", domain_size=8))
    assert s.cluster.scale_up.domain_size == 8
    s = parse_scenario(_cm384(fabric="NVL72", in_switch_reduction=False, domain_size=8))
    assert s.cluster.scale_up.in_switch_reduction is False
    assert parse_scenario(_cm384(fabric="NVL72", domain_size=8)).cluster.scale_up.in_switch_reduction is True


def test_unknown_fabric_names_the_field_and_the_choices() -> None:
    with pytest.raises(SpecError) as e:
        parse_scenario(_cm384(fabric="UB-9000"))
    assert e.value.field == "cluster.scale_up.fabric"
    assert "UB-CloudMatrix384" in str(e.value)


def test_existing_presets_keep_the_legacy_domain() -> None:
    """Backward compatibility: a scenario written without a fabric keeps its one-number domain --
    the accelerator's (or the spec's) bandwidth for every group, no extra latency, no mesh division --
    unless its accelerators are only ever built into a full mesh at that domain size (next test)."""
    legacy = [
        n
        for n in list_presets()
        if load_scenario(n).cluster.scale_up.fabric is None
        and default_scale_up_fabric(load_scenario(n).cluster.accelerator, load_scenario(n).cluster.scale_up.domain_size)
        is None
    ]
    assert len(legacy) >= 7
    for name in legacy:
        c = load_scenario(name).cluster
        g = comm_group(c, np.array([2.0, 8.0, 64.0]), np.array([1.0, 1.0, 8.0]))
        want = (c.scale_up.gbytes_per_s_per_direction or accelerator(c.accelerator).scale_up_bandwidth / 1e9) * 1e9
        assert np.all(np.asarray(g.scale_up_bw) == want), name
        assert np.all(np.asarray(g.up_extra_latency_s) == 0.0), name
        assert scale_up_path(c, 8.0, 1.0) == (1.0, 0.0)


def test_a_one_tier_fabric_with_the_catalog_figures_changes_nothing() -> None:
    """H100 boards described by their fabric (NVLink 4, 8 GPUs, 450 GB/s, one tier) time exactly as the
    legacy domain of 8 does."""
    base = load_scenario("meta-24k-h100-roce")
    d = base.model_dump(mode="json", exclude_none=True)
    d["cluster"]["scale_up"] = {"fabric": "NVLink4-NVSwitch-8", "in_switch_reduction": False}
    described = parse_scenario(d)
    a, b = estimate_step(base), estimate_step(described)
    assert a.step_time_s == b.step_time_s
    assert a.breakdown == b.breakdown


# ---------------------------------------------------------------- network timing inside the domain
def test_crossing_the_upper_tier_pays_its_taper_and_latency() -> None:
    c = load_scenario("cloudmatrix384").cluster
    inside = comm_group(c, 8.0, 1.0)  # one node: the L1 UB switches
    across = comm_group(c, 64.0, 1.0)  # eight nodes: through the L2 UB switches
    out_of_node = comm_group(c, 8.0, 8.0)  # one rank per node, 8 nodes of the same domain
    assert inside.scale_up_bw == 392e9 and inside.up_extra_latency_s == 0.0
    assert across.scale_up_bw == pytest.approx(0.97 * 392e9) and across.up_extra_latency_s == 1e-6
    assert out_of_node.up_extra_latency_s == 1e-6
    # all three stay inside the supernode: no byte on the NICs
    assert across.per_domain == 64.0 and out_of_node.per_domain == 8.0
    small = collective_time("all_to_all", 64e3, across).time_s
    no_tier = collective_time("all_to_all", 64e3, comm_group(_one_tier(c), 64.0, 1.0)).time_s
    assert small > no_tier  # the +1 µs hops show on latency-bound messages


def _one_tier(c: ClusterSpec) -> ClusterSpec:
    """The CloudMatrix384 cluster with 64-NPU domains on a fabric of the same bandwidth and no upper-tier cost."""
    return c.model_copy(update={"scale_up": c.scale_up.model_copy(update={"fabric": "UB-node-8", "domain_size": 64})})


def test_a_full_mesh_divides_a_gpus_bandwidth_between_its_peers() -> None:
    sc = load_scenario("huawei-ascend-16k")
    d = sc.model_dump(mode="json", exclude_none=True)
    d["cluster"]["scale_up"] = {"fabric": "HCCS-910B-mesh-8"}
    mesh = parse_scenario(d).cluster
    assert scale_up_bw(mesh) == 196e9
    pair = comm_group(mesh, 2.0, 1.0)
    board = comm_group(mesh, 8.0, 1.0)
    assert pair.scale_up_bw == pytest.approx(196e9 / 7) and board.scale_up_bw == 196e9
    t_pair = collective_time("all_reduce", 1 << 30, pair).time_s
    t_board = collective_time("all_reduce", 1 << 30, board).time_s
    # bandwidth-bound: a pair moves 2 x 1/2 of the buffer over one link of seven, the board 2 x 7/8 over seven
    assert t_pair / t_board == pytest.approx(7.0 * (1 / 2) / (7 / 8), rel=0.05)


def test_a_domain_without_a_fabric_is_the_full_mesh_its_accelerators_are_built_into() -> None:
    """An 8-NPU Ascend 910B board or 8-GPU MI300X / MI355X board has no switch: a scenario that names no
    fabric gets the catalog's mesh for it (a 2-rank group one link of seven), where it used to get a
    switched domain (all seven). Bekman's 2 of 8 MI300X at 4 GiB measure 47.7 GB/s busbw, 1/6.6 of the 8-GPU
    312.9 (benchmarks/nccl_tests_published.yaml mi300x-2gpu-allreduce-4g, -4.4 %; +568 % before)."""
    meshed = [
        n
        for n in list_presets()
        if load_scenario(n).cluster.scale_up.fabric is None
        and default_scale_up_fabric(load_scenario(n).cluster.accelerator, 8) is not None
    ]
    assert sorted(meshed) == ["china-mobile-wanka", "huawei-ascend-16k", "moore-threads-kuae-10k"]
    named = load_scenario("huawei-ascend-16k")
    d = named.model_dump(mode="json", exclude_none=True)
    d["cluster"]["scale_up"] = {"fabric": "HCCS-910B-mesh-8"}
    explicit = parse_scenario(d).cluster
    assert named.cluster.scale_up.fabric is None
    for n in (2.0, 4.0, 8.0):
        assert comm_group(named.cluster, n, 1.0).scale_up_bw == comm_group(explicit, n, 1.0).scale_up_bw
    for acc, fab in (("MI300X", "xGMI-MI300X-mesh-8"), ("MI355X", "xGMI-MI355X-mesh-8"), ("H100", None)):
        c = parse_scenario({"name": "x", "cluster": {"accelerator": acc, "nodes": 1}}).cluster
        got = default_scale_up_fabric(c.accelerator, c.scale_up.domain_size)
        assert (got.name if got else None) == fab
        pair, board = comm_group(c, 2.0, 1.0), comm_group(c, 8.0, 1.0)
        assert pair.scale_up_bw == pytest.approx(board.scale_up_bw / (7.0 if fab else 1.0))


# ---------------------------------------------------------------- what the supernode buys
def test_cloudmatrix384_cuts_the_exposed_ep_time_and_the_domain_is_why() -> None:
    sup, base = SUPERNODES["cloudmatrix384"].scenarios()
    g = supernode_gain(sup, base, best=False)
    s, b = g.same
    assert s.strategy == b.strategy and s.strategy["ep"] > 8
    assert g.ep_fall is not None and g.ep_fall > 0.5  # the all-to-all leaves RDMA for the UB fabric
    assert s.step_time_s < b.step_time_s
    # the mechanism is the domain: the supernode cut back to 8-NPU domains loses the gain exactly ...
    cut = estimate_step(shrink_domain(sup, 8))
    assert cut.breakdown["ep_comm"] == pytest.approx(b.ep_exposed_s, rel=1e-12)
    # ... and an EP group that fits one node gains nothing from the supernode
    small = sup.model_copy(update={"parallel": sup.parallel.model_copy(update={"ep": 8})})  # type: ignore[union-attr]
    assert estimate_step(small).breakdown["ep_comm"] == pytest.approx(
        estimate_step(shrink_domain(small, 8)).breakdown["ep_comm"], rel=1e-12
    )


def test_the_planner_uses_the_supernode_and_is_never_slower_there() -> None:
    sup, base = SUPERNODES["cloudmatrix384"].scenarios()
    g = supernode_gain(sup, base, best=True)
    assert g.best is not None and g.best_step_fall is not None
    assert g.best[0].step_time_s <= g.best[1].step_time_s
    # at its best layout the baseline keeps expert parallelism inside a node; the supernode spreads it wider
    assert g.best[1].strategy["ep"] <= 8 < g.best[0].strategy["ep"]
    d = g.to_dict()
    assert d["ep_exposed_fall"] == g.ep_fall and len(d["best_layout"]) == 2
    assert any("less" in line for line in g.lines("en")) and any("下降" in line for line in g.lines("zh"))


def test_a_dense_job_has_no_ep_and_gains_little_but_never_loses() -> None:
    sup, base = SUPERNODES["cloudmatrix384"].scenarios()
    m = load_model("llama3-70b")
    g = supernode_gain(
        sup.model_copy(update={"model": m, "parallel": None}),
        base.model_copy(update={"model": m, "parallel": None}),
        best=False,
    )
    assert g.ep_fall is None and g.same[0].ep_exposed_s == 0.0
    assert 0.0 <= g.step_fall < 0.2


def test_supernode_inventory_describes_the_topology() -> None:
    inv = inventory(load_scenario("cloudmatrix384").cluster)
    su = inv.scale_up
    assert su is not None and su.fabric == "UB-CloudMatrix384" and su.kind == "ub"
    assert su.first_tier_size == 8 and su.domain_bandwidth == pytest.approx(384 * 392e9)
    assert inv.scale_up_domains == 1 and not inv.notes
    mesh = inventory(parse_scenario(_cm384(fabric="HCCS-910B-mesh-8")).cluster)
    assert mesh.scale_up is not None and mesh.scale_up.per_peer_bandwidth == pytest.approx(196e9 / 7)
    assert any("built for" in n for n in mesh.notes)  # an HCCS mesh of 910B around 910C NPUs
    # a 910B cluster that names no fabric is its board's HCCS mesh, and the inventory says it assumed so
    board = inventory(load_scenario("huawei-ascend-16k").cluster)
    assert board.scale_up is not None and board.scale_up.fabric == "HCCS-910B-mesh-8"
    assert board.scale_up.topology == "full_mesh" and any("not given" in a for a in board.scale_up.assumptions)
    assert board.scale_up_bandwidth_per_gpu == accelerator("Ascend-910B").scale_up_bandwidth
    legacy = inventory(load_scenario("meta-24k-h100-roce").cluster)
    assert legacy.scale_up is not None and legacy.scale_up.fabric is None
