"""Flow-level simulator: max-min rates, event loop, traffic of collectives, ECMP vs adaptive routing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wanka.errors import SpecError
from wanka.network.flow import collective_traffic, contention_factor, max_min_rates, rank_layout, simulate
from wanka.network.routing import Traffic, route
from wanka.network.topology import ScaleUpDomains, Topology, fat_tree
from wanka.spec import ClusterSpec, FabricSpec

BW = 50e9


def _tree(
    n: int, tiers: int = 2, radix: int = 16, gpn: int = 1, rails: int = 1, o: float = 1.0, h: int | None = None
) -> Topology:
    su = ScaleUpDomains(gpn, n // gpn, 450e9, 1.0, False)
    return fat_tree(
        n, radix, tiers, o, rails=rails, gpus_per_node=gpn, port_bandwidth=BW, endpoints_per_leaf=h, scale_up=su
    )


def test_max_min_textbook_example() -> None:
    # links A (cap 1), B (cap 2); f0 uses A, f1 uses A and B, f2 uses B -> f0 = f1 = 0.5, f2 = 1.5
    link = np.array([0, 0, 1, 1])
    flow = np.array([0, 1, 1, 2])
    r, _ = max_min_rates(link, flow, np.ones(4), np.array([1.0, 2.0]), 3, precision=0.0)
    assert r.tolist() == pytest.approx([0.5, 0.5, 1.5])
    # a flow of weight 2 (two sub-flows) on a shared link gets half the per-sub-flow rate of the total
    r, _ = max_min_rates(np.array([0, 0]), np.array([0, 1]), np.array([2.0, 1.0]), np.array([3.0]), 2, 0.0)
    assert r.tolist() == pytest.approx([1.0, 1.0])


def test_all_to_all_oversubscribed_slowdown_by_hand() -> None:
    # 64 single-GPU nodes, 16 per leaf, 8 uplinks (2:1). A leaf sends 16 x 48/64 S over 8 uplinks while a
    # NIC sends 63/64 S: slowdown = (16 x 48/64) / 8 / (63/64) = 2 x 48/63
    t = _tree(64, radix=32, h=16, o=2.0)
    assert t.uplinks_per_leaf == 8
    r = simulate(t, collective_traffic(t, "all_to_all", 1e9), "adaptive", precision=1e-4)
    assert r.slowdown == pytest.approx(2 * 48 / 63, rel=2e-3)
    assert r.bytes_delivered == pytest.approx(r.bytes_sent, rel=1e-12)


def test_non_blocking_all_to_all_and_ring_run_at_line_rate() -> None:
    t = _tree(256, tiers=3, radix=16, gpn=8, rails=8)
    for op in ("all_to_all", "all_reduce", "all_gather"):
        r = simulate(t, collective_traffic(t, op, 1e8), "adaptive")
        assert r.slowdown == pytest.approx(1.0, rel=1e-2), op
    ring = collective_traffic(t, "all_reduce", 1e8)
    # ring all-reduce: each rail flow carries 2(n-1)/n x S / 8
    assert ring.nbytes[0] == pytest.approx(2 * 255 / 256 * 1e8 / 8)


def test_ecmp_collisions_slow_fragmented_rings() -> None:
    t = _tree(1024, tiers=3, radix=32, gpn=8, rails=8)
    tr = collective_traffic(t, "all_reduce", 1e8, placement="random", seed=3)
    e, a = simulate(t, tr, "ecmp", seed=1), simulate(t, tr, "adaptive")
    assert a.slowdown == pytest.approx(1.0, rel=1e-2)
    assert e.slowdown > 1.5 and e.ecmp_imbalance > 1.5
    assert e.hottest and e.hottest[0].utilization == pytest.approx(1.0, rel=2e-2)
    # more hashed sub-flows per connection spread the load (law of large numbers)
    many = simulate(t, collective_traffic(t, "all_reduce", 1e8, placement="random", seed=3, qps=64), "ecmp")
    assert many.slowdown < e.slowdown


def test_class_aggregation_matches_gpu_level() -> None:
    import wanka.network.flow as fl

    t = _tree(128, tiers=2, radix=16, gpn=8, rails=8, o=2.0)
    big = collective_traffic(t, "all_to_all", 1e8)
    old = fl._GPU_LEVEL_PAIRS
    try:
        fl._GPU_LEVEL_PAIRS = 0
        agg = collective_traffic(t, "all_to_all", 1e8)
    finally:
        fl._GPU_LEVEL_PAIRS = old
    assert big.level == "gpu" and agg.level == "class" and agg.flows < big.flows
    assert agg.subflows == big.subflows and agg.total_bytes == pytest.approx(big.total_bytes)
    ra, rb = simulate(t, agg, "adaptive"), simulate(t, big, "adaptive")
    assert ra.completion_time_s == pytest.approx(rb.completion_time_s, rel=2e-2)


@pytest.mark.parametrize("rails", [8, 1])
@pytest.mark.parametrize("size", [None, 64, 256])
@pytest.mark.parametrize("routing", ["adaptive", "ecmp"])
def test_equivalence_classes_give_the_leaf_pair_solvers_answer(rails: int, size: int | None, routing: str) -> None:
    # the leaf-pair aggregation was the solver before equivalence classes; both run up to a few thousand
    # GPUs, and on the symmetric fat-tree they must agree (ECMP draws the same member loads)
    t = _tree(4096, tiers=3, radix=32, gpn=8, rails=rails)
    leaf = collective_traffic(t, "all_to_all", 2**28, size=size, aggregate="leaf")
    cls = collective_traffic(t, "all_to_all", 2**28, size=size, aggregate="class")
    assert cls.level == "class" and cls.flows <= leaf.flows
    assert cls.subflows == pytest.approx(leaf.subflows) and cls.total_bytes == pytest.approx(leaf.total_bytes)
    a, b = simulate(t, leaf, routing, seed=3), simulate(t, cls, routing, seed=3)
    assert b.completion_time_s == pytest.approx(a.completion_time_s, rel=1e-3)
    assert b.ideal_time_s == pytest.approx(a.ideal_time_s, rel=1e-9)


@pytest.mark.parametrize("rails", [8, 1])
@pytest.mark.parametrize("size", [None, 64])
def test_leaf_to_pod_matrix_same_by_product_and_by_join(rails: int, size: int | None) -> None:
    # few columns take a dense product for the leaf-to-pod sub-flow matrix, many the sort-merge join:
    # the two must give the same traffic (whole-number counts: exactly)
    import numpy as np

    import wanka.network.flow as fl

    t = _tree(4096, tiers=3, radix=32, gpn=8, rails=rails)
    dense = collective_traffic(t, "all_to_all", 2**28, size=size, aggregate="class")
    old = fl._DENSE_CELLS
    try:
        fl._DENSE_CELLS = 0
        join = collective_traffic(t, "all_to_all", 2**28, size=size, aggregate="class")
    finally:
        fl._DENSE_CELLS = old
    for name in ("src", "dst", "count"):
        assert np.array_equal(getattr(dense, name), getattr(join, name)), name
    for side in ("src_spread", "dst_spread"):
        for x, y in zip(getattr(dense, side), getattr(join, side), strict=True):
            assert np.array_equal(x, y), side


def test_class_aggregation_keeps_131k_gpus_small() -> None:
    t = _tree(131_072, tiers=3, radix=128, gpn=8, rails=8)
    tr = collective_traffic(t, "all_to_all", 2**28)
    # leaf-pair flows would be ~ leaves^2 = 4 million; classes are leaves + pods + pods^2
    assert tr.level == "class" and tr.flows <= t.leaves + t.pods + t.pods**2


def test_rank_layout() -> None:
    t = _tree(64, gpn=8, rails=8)
    lay = rank_layout(t, size=8, stride=8)  # DP groups across nodes: one rank per domain
    assert lay.shape == (8, 8, 1)
    assert rank_layout(t).shape == (1, 8, 8)
    with pytest.raises(SpecError):
        rank_layout(t, size=65)
    single = collective_traffic(t, "all_reduce", 1e6, size=8)  # inside one NVLink domain
    assert single.flows == 0 and simulate(t, single).completion_time_s == 0.0


def test_explicit_traffic_and_stage_labels() -> None:
    t = _tree(32, tiers=2, radix=8)
    tr = Traffic(np.array([0, 1, 2]), np.array([31, 31, 30]), np.array([1e9, 1e9, 2e9]), np.ones(3))
    r = simulate(t, tr, "adaptive")
    # GPU 31 receives 2 GB at 50 GB/s; GPU 30 receives 2 GB: ideal = 40 ms, nothing else binds
    assert r.ideal_time_s == pytest.approx(0.04)
    assert r.completion_time_s == pytest.approx(0.04, rel=1e-2)
    assert "NIC" in r.hottest[0].name
    routed = route(t, tr, "ecmp", seed=0)
    assert routed.member_load.sum() == pytest.approx(routed.load.sum())


def test_contention_factor_for_the_engine() -> None:
    c = ClusterSpec(accelerator="H100-SXM5-80GB", nodes=64, fabric=FabricSpec(tiers=2, switch="QM9700"))
    assert contention_factor(c, "all_to_all") == pytest.approx(1.0, rel=2e-2)  # IB default: adaptive
    assert contention_factor(c, "all_reduce", routing="ecmp", placement="random", seed=1) >= 1.0
    o = c.model_copy(update={"fabric": c.fabric.model_copy(update={"oversubscription": 4.0})})
    assert contention_factor(o, "all_to_all") > 2.0
    one = ClusterSpec(accelerator="H100-SXM5-80GB", nodes=1, fabric=FabricSpec(tiers=1, switch="QM9700"))
    assert contention_factor(one, "all_reduce") == 1.0


_topos = st.builds(
    dict,
    tiers=st.sampled_from([2, 3]),
    radix=st.sampled_from([8, 16]),
    gpn=st.sampled_from([1, 4, 8]),
    rail=st.booleans(),
    o=st.sampled_from([1.0, 1.5, 2.0, 4.0]),
    nodes=st.integers(4, 48),
)


def _from(p: dict[str, object]) -> Topology:
    gpn = int(p["gpn"])  # type: ignore[call-overload]
    n = int(p["nodes"]) * gpn  # type: ignore[call-overload]
    try:
        return _tree(
            n,
            int(p["tiers"]),
            int(p["radix"]),
            gpn,
            gpn if p["rail"] else 1,  # type: ignore[call-overload]
            float(p["o"]),
        )  # type: ignore[arg-type]
    except SpecError:
        return _tree(n, 3, 32, gpn, gpn if p["rail"] else 1, float(p["o"]))  # type: ignore[arg-type]


@settings(max_examples=30, deadline=None)
@given(
    p=_topos,
    op=st.sampled_from(["all_reduce", "all_to_all", "send_recv", "all_gather"]),
    placement=st.sampled_from(["contiguous", "random"]),
    seed=st.integers(0, 1000),
    qps=st.integers(1, 4),
)
def test_adaptive_never_slower_than_ecmp(p: dict[str, object], op: str, placement: str, seed: int, qps: int) -> None:
    t = _from(p)
    tr = collective_traffic(t, op, 1e8, placement=placement, seed=seed, qps=qps)
    a, e = simulate(t, tr, "adaptive"), simulate(t, tr, "ecmp", seed=seed)
    assert a.completion_time_s <= e.completion_time_s * (1 + 0.02)
    assert a.slowdown >= 1 - 1e-9 and e.slowdown >= 1 - 1e-9


@settings(max_examples=30, deadline=None)
@given(
    p=_topos, n_flows=st.integers(1, 300), seed=st.integers(0, 10_000), routing=st.sampled_from(["ecmp", "adaptive"])
)
def test_conservation_bytes_delivered_equal_bytes_sent(
    p: dict[str, object], n_flows: int, seed: int, routing: str
) -> None:
    t = _from(p)
    rng = np.random.default_rng(seed)
    src = rng.integers(0, t.endpoints, n_flows)
    dst = rng.integers(0, t.endpoints, n_flows)
    keep = src != dst
    tr = Traffic(
        src[keep], dst[keep], rng.uniform(1e3, 1e9, int(keep.sum())), rng.integers(1, 5, int(keep.sum())).astype(float)
    )
    r = simulate(t, tr, routing, seed=seed)
    assert r.bytes_delivered == pytest.approx(r.bytes_sent, rel=1e-9)
    assert r.bytes_sent == pytest.approx(tr.total_bytes * t.planes)
    if tr.flows:
        assert r.completion_time_s >= r.ideal_time_s * (1 - 1e-9)
        assert r.utilization_percentiles["max"] <= 1 + 1e-6


@settings(max_examples=25, deadline=None)
@given(
    h=st.sampled_from([4, 8]),
    nodes=st.integers(2, 12),
    o1=st.sampled_from([1.0, 2.0]),
    o2=st.sampled_from([2.0, 4.0, 8.0]),
    op=st.sampled_from(["all_to_all", "all_reduce"]),
    routing=st.sampled_from(["ecmp", "adaptive"]),
    placement=st.sampled_from(["contiguous", "random"]),
)
def test_more_oversubscription_never_speeds_up_flows(
    h: int, nodes: int, o1: float, o2: float, op: str, routing: str, placement: str
) -> None:
    lo, hi = min(o1, o2), max(o1, o2)
    n = nodes * 4

    def t(o: float) -> float:
        topo = _tree(n, 2, 32, 4, 1, o, h=h)  # same leaves, fewer uplinks as o grows
        return simulate(
            topo, collective_traffic(topo, op, 1e8, placement=placement, seed=1), routing, 1
        ).completion_time_s

    assert t(hi) >= t(lo) * (1 - 0.02)
