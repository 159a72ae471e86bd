"""The analytical collective model: nccl-tests conventions, published busbw, monotonicity."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wanka.network import OPS, CommGroup, bus_factor, collective_time, comm_group
from wanka.spec import ClusterSpec


def test_bus_factors_follow_nccl_tests() -> None:
    assert bus_factor("all_reduce", 8) == pytest.approx(2 * 7 / 8)
    assert bus_factor("all_gather", 8) == pytest.approx(7 / 8)
    assert bus_factor("reduce_scatter", 16) == pytest.approx(15 / 16)
    assert bus_factor("send_recv", 2) == 1.0


def test_dgx_h100_nvlink_all_reduce_busbw_near_published() -> None:
    # nccl-tests all_reduce_perf on one DGX H100, 8 GB messages: ~360-380 GB/s busbw
    # (NVIDIA DGX H100 user guide / SuperPOD acceptance figures; without NVLS)
    g = CommGroup(size=8, per_domain=8, scale_up_bw=450e9, scale_out_bw=50e9)
    r = collective_time("all_reduce", 8 * 2**30, g)
    assert r.busbw / 1e9 == pytest.approx(370, rel=0.15)


def test_dgx_a100_inter_node_all_reduce_is_nic_bound() -> None:
    # two or more DGX A100 with 8x200G HDR: busbw ~ 185-190 GB/s (8 NICs x 25 GB/s x efficiency)
    g = CommGroup(size=64, per_domain=8, scale_up_bw=300e9, scale_out_bw=25e9)
    r = collective_time("all_reduce", 8 * 2**30, g)
    assert r.busbw / 1e9 == pytest.approx(187, rel=0.15)


def test_single_rank_costs_nothing() -> None:
    g = CommGroup(size=1, per_domain=1, scale_up_bw=450e9, scale_out_bw=50e9)
    for op in OPS:
        assert collective_time(op, 1e9, g).time_s == 0.0


def test_unknown_op_is_a_clear_error() -> None:
    g = CommGroup(size=8, per_domain=8, scale_up_bw=450e9, scale_out_bw=50e9)
    with pytest.raises(ValueError, match="op = 'allreduce'"):
        collective_time("allreduce", 1e6, g)


def test_vectorised_matches_scalar() -> None:
    g = CommGroup(size=np.array([8.0, 64.0]), per_domain=np.array([8.0, 8.0]), scale_up_bw=450e9, scale_out_bw=50e9)
    r = collective_time("all_reduce", np.array([1e9, 1e9]), g)
    for i, n in enumerate((8.0, 64.0)):
        one = collective_time(
            "all_reduce", 1e9, CommGroup(size=n, per_domain=8.0, scale_up_bw=450e9, scale_out_bw=50e9)
        )
        assert r.time_s[i] == pytest.approx(one.time_s)


@settings(max_examples=60, deadline=None)
@given(
    op=st.sampled_from(OPS),
    n=st.integers(2, 4096),
    per=st.sampled_from([1, 2, 4, 8, 72]),
    a=st.floats(1e3, 1e10),
    b=st.floats(1e3, 1e10),
)
def test_time_never_falls_as_bytes_grow(op: str, n: int, per: int, a: float, b: float) -> None:
    g = CommGroup(size=float(n), per_domain=float(min(per, n)), scale_up_bw=450e9, scale_out_bw=50e9)
    lo, hi = sorted((a, b))
    assert collective_time(op, hi, g).time_s >= collective_time(op, lo, g).time_s * (1 - 1e-12)


@settings(max_examples=40, deadline=None)
@given(o1=st.floats(1.0, 8.0), o2=st.floats(1.0, 8.0), n=st.sampled_from([16, 128, 1024]))
def test_more_oversubscription_never_speeds_up(o1: float, o2: float, n: int) -> None:
    lo, hi = sorted((o1, o2))

    def t(o: float) -> float:
        c = ClusterSpec.model_validate({"accelerator": "H100", "nodes": 2048, "fabric": {"oversubscription": o}})
        return float(collective_time("all_reduce", 1e9, comm_group(c, n, 1)).time_s)

    assert t(hi) >= t(lo)


def test_dgx_h100_nvls_all_reduce_busbw_near_published() -> None:
    # nccl-tests all_reduce_perf with NVLS on one DGX H100: ~480 GB/s busbw (nccl-tests issue #212)
    g = CommGroup(size=8, per_domain=8, scale_up_bw=450e9, scale_out_bw=50e9, scale_up_reduction=True)
    r = collective_time("all_reduce", 8 * 2**30, g)
    assert r.busbw / 1e9 == pytest.approx(480, rel=0.15)
    flat = CommGroup(size=8, per_domain=8, scale_up_bw=450e9, scale_out_bw=50e9)
    plain = collective_time("all_reduce", 8 * 2**30, flat)
    assert r.time_s < plain.time_s


@settings(max_examples=40, deadline=None)
@given(nodes=st.integers(2, 64), nbytes=st.floats(1e6, 1e10), dedup=st.floats(0.05, 1.0))
def test_node_deduplicated_all_to_all_moves_fewer_fabric_bytes(nodes: int, nbytes: float, dedup: float) -> None:
    plain = CommGroup(size=8.0 * nodes, per_domain=8.0, scale_up_bw=450e9, scale_out_bw=50e9)
    deep = CommGroup(size=8.0 * nodes, per_domain=8.0, scale_up_bw=450e9, scale_out_bw=50e9, remote_dedup=dedup)
    # NVLink forwarding is cheap next to the NIC: deduplication never slows a cross-node all-to-all
    assert collective_time("all_to_all", nbytes, deep).time_s <= collective_time("all_to_all", nbytes, plain).time_s


@settings(max_examples=80, deadline=None)
@given(
    op=st.sampled_from(["all_reduce", "all_gather", "reduce_scatter"]),
    n=st.integers(2, 2048),
    per=st.sampled_from([1, 4, 8, 72]),
    nvls=st.booleans(),
    sharp=st.booleans(),
    lo=st.floats(0, 34),
    step=st.floats(0, 3),
)
def test_nccl_tuner_time_never_falls_as_bytes_grow(
    op: str, n: int, per: int, nvls: bool, sharp: bool, lo: float, step: float
) -> None:
    g = CommGroup(
        size=float(n),
        per_domain=float(min(per, n)),
        scale_up_bw=900e9,
        scale_out_bw=50e9,
        scale_up_reduction=nvls,
        in_network_reduction=sharp,
    )
    a, b = 2.0**lo, 2.0 ** (lo + step)
    assert collective_time(op, b, g).time_s >= collective_time(op, a, g).time_s * (1 - 1e-12)


def test_protocol_and_algorithm_follow_message_size() -> None:
    # NCCL's tuner: LL for tiny messages (lowest latency), Simple for large ones; across 64 domains the
    # tree's log latency wins small messages and the ring's bandwidth large ones
    g = CommGroup(size=512.0, per_domain=8.0, scale_up_bw=450e9, scale_out_bw=50e9)
    small, large = collective_time("all_reduce", 4096.0, g), collective_time("all_reduce", 2.0**34, g)
    assert small.protocol == "LL" and large.protocol == "Simple"
    assert small.algorithm == "tree" and large.algorithm == "ring"
    sweep = collective_time("all_reduce", 2.0 ** np.arange(3, 34), g)
    assert len(set(sweep.protocols)) >= 2 and len(sweep.algorithms) == 31


def test_nvls_and_fabric_phases_are_pipelined_not_added() -> None:
    # two B200 nodes with NVLS: the NIC phase (8 x 46 GB/s) bounds the pipeline; adding the phases would
    # give ~40% less (the two-node under-prediction)
    g = CommGroup(size=16.0, per_domain=8.0, scale_up_bw=900e9, scale_out_bw=50e9, scale_up_reduction=True)
    piped = collective_time("all_reduce", 8 * 2**30, g)
    summed = collective_time("all_reduce", 8 * 2**30, g, "hierarchical")
    assert piped.algorithm == "nvls_tree"
    assert piped.busbw / 1e9 == pytest.approx(8 * 50 * 0.92 * 2 * 15 / 16, rel=0.02)
    assert summed.time_s > 1.3 * piped.time_s


def test_nvls_tree_is_capped_per_head_by_architecture() -> None:
    # NCCL's perChMaxNVLSTreeBws: 57.7 GB/s per NVLS head on two Hopper nodes, one head per NIC (8), so
    # nccl-tests busbw cannot pass 8 x 57.7 = 462 GB/s; an architecture without a table entry is uncapped
    kw = dict(size=16.0, per_domain=8.0, scale_up_bw=450e9, scale_out_bw=50e9, scale_up_reduction=True)
    hopper = collective_time("all_reduce", 8 * 2**30, CommGroup(**kw, architecture="Hopper"))  # type: ignore[arg-type]
    free = collective_time("all_reduce", 8 * 2**30, CommGroup(**kw))  # type: ignore[arg-type]
    assert hopper.algorithm == "nvls_tree"
    assert hopper.busbw / 1e9 <= 8 * 57.7 * 1.001
    assert free.busbw > 1.05 * hopper.busbw


@pytest.mark.parametrize("nbytes", [2.0**29, 2.0**31])
def test_a_deeper_tree_chain_fills_longer(nbytes: float) -> None:
    # same ranks and bytes: 20 domains of 72 (NCCL tree depth 71 + log2 20) against 180 domains of 8
    # (depth 7 + log2 180); the deep chain's first chunk crosses ~4x more hops, so its Simple tree is
    # slower although its per-byte bound (NVLink, 2/up) is the same
    deep = CommGroup(size=1440.0, per_domain=72.0, scale_up_bw=900e9, scale_out_bw=400e9)
    shallow = CommGroup(size=1440.0, per_domain=8.0, scale_up_bw=900e9, scale_out_bw=400e9)
    t_deep = collective_time("all_reduce", nbytes, deep, "tree", protocol="Simple").time_s
    t_shallow = collective_time("all_reduce", nbytes, shallow, "tree", protocol="Simple").time_s
    assert t_deep > 1.2 * t_shallow


def _in_domain_a2a(n: int, nbytes: float) -> float:
    g = CommGroup(size=float(n), per_domain=float(n), scale_up_bw=900e9, scale_out_bw=50e9)
    return float(collective_time("all_to_all", nbytes, g).time_s)


def test_in_domain_all_to_all_pays_nccl_send_recv_drain_by_hand() -> None:
    # 8 ranks, 8 GiB: 1 GiB a peer; parts per peer start at 32/8 = 4, doubled while a part exceeds
    # 32 x 512 KiB, up to all 32 channels: 8 x 32 = 256 parts, one batch of 8 per channel; the drain is
    # one 512 KiB chunk of the 224 remote parts at the link's share (0.8 x 900 GB/s)
    from wanka.calibration import default_calibration

    cal = default_calibration()
    up = cal.scale_up_efficiency * 900e9
    s = 8 * 2.0**30
    bw = 7 / 8 * s / up
    lat = 7 * cal.scale_up_latency_s / 4 + cal.collective_launch_s
    drain = 224 * 512 * 1024 / up
    assert _in_domain_a2a(8, s) == pytest.approx(bw + lat + drain, rel=1e-9)
    # 64 ranks: 4 GiB is 64 MiB a peer, 4 parts of 16 MiB (one batch); 8 GiB 8 parts (two batches)
    lat = 63 * cal.scale_up_latency_s / 4 + cal.collective_launch_s
    for size, batches, parts in ((4 * 2.0**30, 1, 64 * 4), (8 * 2.0**30, 2, 256)):
        bw = 63 / 64 * size / up
        drain = batches * parts * 63 / 64 * 512 * 1024 / up
        assert _in_domain_a2a(64, size) == pytest.approx(bw + lat + drain, rel=1e-9)


def test_all_to_all_across_domains_pays_no_nvlink_drain() -> None:
    # NCCL chunks network peers differently (P2P_NET_CHUNKSIZE): the drain is an in-domain term only,
    # so the multi-node all-to-all (A2A_EFFICIENCY's fit row) is the NIC term plus the hop latencies
    from wanka.calibration import default_calibration

    cal = default_calibration()
    g = CommGroup(size=48.0, per_domain=8.0, scale_up_bw=450e9, scale_out_bw=50e9)
    s = 8 * 2.0**30
    nic = 40 / 48 * s / (50e9 * cal.a2a_efficiency)
    lat = 40 * cal.scale_out_latency_s / 8 + 7 * cal.scale_up_latency_s / 4 + cal.collective_launch_s
    assert float(collective_time("all_to_all", s, g).time_s) == pytest.approx(nic + lat, rel=1e-9)


def _blackwell_a2a(n: int, nbytes: float, arch: str | None = "Blackwell") -> float:
    g = CommGroup(size=float(n), per_domain=72.0, scale_up_bw=900e9, scale_out_bw=50e9, architecture=arch)
    return float(collective_time("all_to_all", nbytes, g).time_s)


@pytest.mark.parametrize("n", [4, 8, 64])
def test_in_domain_all_to_all_is_bound_by_nccl_cta_copies_by_hand(n: int) -> None:
    # 8 GiB on n Blackwell ranks: every one of the 32 p2p channels busy; a GPU's CTAs copy each remote
    # byte twice (into the peer's FIFO, out of its own) and its own share once, (2(n-1)+1)/n of the
    # buffer, while NVLink carries (n-1)/n: the link rate is capped at 32 x rate x (n-1)/(2n-1), below
    # 0.8 x 900 GB/s (4 ranks 3/7: 620 GB/s, 8 ranks 7/15: 675, 64 ranks 63/127: 718). Without a rate
    # for the architecture the link sets the time.
    from wanka.calibration import default_calibration
    from wanka.network.collectives import DEFAULT_MODEL

    cal = default_calibration()
    up = cal.scale_up_efficiency * 900e9
    cap = 32 * DEFAULT_MODEL.p2p_channel_copy_bw["Blackwell"] * (n - 1) / (2 * n - 1)
    s = 8 * 2.0**30
    lat = (n - 1) * cal.scale_up_latency_s / 4 + cal.collective_launch_s
    drain = {4: 96, 8: 224, 64: 2 * 256 * 63 / 64}[n] * 512 * 1024 / up  # see the drain test above
    assert cap < up
    assert _blackwell_a2a(n, s) == pytest.approx((n - 1) / n * s / cap + lat + drain, rel=1e-9)
    assert _blackwell_a2a(n, s, None) == pytest.approx((n - 1) / n * s / up + lat + drain, rel=1e-9)


def test_the_own_copy_costs_four_ranks_more_than_eight() -> None:
    # the own share is 1/4 of the buffer on 4 ranks, 1/8 on 8: per NVLink byte the CTAs copy 7/3 bytes
    # against 15/7, so 4 ranks reach 9/10 of 8 ranks' busbw (published out-of-place: 615 vs 658-685 GB/s;
    # in-place, without the own copy, 4 ranks reach 667-673)
    s = 8 * 2.0**30
    busbw = {n: (n - 1) / n * s / _blackwell_a2a(n, s) for n in (4, 8)}
    assert busbw[4] / busbw[8] == pytest.approx((3 / 7) / (7 / 15), rel=0.02)
    assert _blackwell_a2a(4, s, "Hopper") == _blackwell_a2a(4, s, None)  # Hopper has no rate: uncapped


def test_cta_copy_bound_only_inside_one_domain() -> None:
    # across domains NCCL's network parts are single chunks with their own proxy path: same time with
    # and without the CTA copy rate
    g = {
        a: CommGroup(size=8.0, per_domain=4.0, scale_up_bw=900e9, scale_out_bw=50e9, architecture=a)
        for a in ("Blackwell", None)
    }
    t = {a: float(collective_time("all_to_all", 2.0**33, g[a]).time_s) for a in g}
    assert t["Blackwell"] == t[None]


@settings(max_examples=60, deadline=None)
@given(n=st.sampled_from([2, 3, 4, 8, 16, 64, 72]), lo=st.floats(10, 34), step=st.floats(0, 2))
def test_blackwell_in_domain_all_to_all_time_never_falls_as_bytes_grow(n: int, lo: float, step: float) -> None:
    # equal up to rounding where the time is flat in the bytes (a part's fixed drain dominates)
    assert _blackwell_a2a(n, 2.0 ** (lo + step)) >= _blackwell_a2a(n, 2.0**lo) * (1 - 1e-12)


@settings(max_examples=60, deadline=None)
@given(n=st.sampled_from([2, 4, 8, 12, 16, 64, 72]), lo=st.floats(10, 34), step=st.floats(0, 2))
def test_in_domain_all_to_all_time_never_falls_as_bytes_grow(n: int, lo: float, step: float) -> None:
    small, large = 2.0**lo, 2.0 ** (lo + step)
    assert _in_domain_a2a(n, large) >= _in_domain_a2a(n, small) * (1 - 1e-12)


def test_in_domain_all_to_all_scalar_and_batch_paths_agree() -> None:
    # one collective runs on Python floats, a batch on numpy: the drain's powers of 2 and ceilings agree
    sizes = np.array([3e5, 4e6, 5e7, 6e8, 7e9])
    for n in (4.0, 8.0, 64.0, 72.0):
        g = CommGroup(size=np.full(5, n), per_domain=np.full(5, n), scale_up_bw=900e9, scale_out_bw=50e9)
        batch = np.asarray(collective_time("all_to_all", sizes, g).time_s)
        one = [_in_domain_a2a(int(n), float(x)) for x in sizes]
        assert batch == pytest.approx(one, rel=1e-12)


def test_two_domain_all_to_all_is_point_to_point() -> None:
    # NCCL's p2p schedule sends to one node offset per round (init.cc p2pSchedule: node deltas outer, local
    # deltas inner); across two domains there is one, so whatever the timing no NIC hears from two domains and
    # the fabric carries the exchange at the NIC's point-to-point share, as a ring hop (scale_out_efficiency
    # 0.92); across three or more, rounds that drift apart overlap: the measured all-to-all share (0.83)
    from wanka.calibration import default_calibration

    cal = default_calibration()
    s = 8 * 2**30

    def nic_bound_busbw(nodes: int) -> float:
        # NVLink made fast so the NICs bound the exchange
        g = CommGroup(size=8.0 * nodes, per_domain=8.0, scale_up_bw=1e15, scale_out_bw=50e9)
        t = collective_time("all_to_all", s, g).time_s
        return float(bus_factor("all_to_all", 8 * nodes) * s / t)

    two, three = nic_bound_busbw(2), nic_bound_busbw(3)
    # busbw = (n-1)/(n-a) x the NIC's achieved rate
    assert two == pytest.approx(15 / 8 * 50e9 * cal.scale_out_efficiency, rel=0.03)
    assert three == pytest.approx(23 / 16 * 50e9 * cal.a2a_efficiency, rel=0.03)


def test_tree_fill_takes_each_hop_at_its_own_link() -> None:
    """A tree's first chunk climbs a-1 NVLink hops and log2 k NIC hops and comes back: a pipeline fills
    at each stage's own rate (only its steady state runs at the slowest one's). Where the NICs bound the
    tree (2 nodes of 8 A100 on 50 Gb/s a GPU, AWS p4de-class), a faster NVLink leaves the bandwidth term
    alone but shortens the fill; timed at the NIC rate on every hop, it would change nothing."""
    s = 512 * 2**20

    def fixed(up: float, out: float) -> float:  # the fixed cost: time(2S) - 2 time(S) = -fixed
        g = CommGroup(size=16, per_domain=8, scale_up_bw=up, scale_out_bw=out, architecture="Ampere")
        t = [float(collective_time("all_reduce", x, g, "tree", protocol="Simple").time_s) for x in (s, 2 * s)]
        return 2 * t[0] - t[1]

    slow_nic = 50e9 / 8
    # 7 NVLink hops and 1 NIC hop each way, 512 KiB chunks on NCCL's channels, plus its hop latencies:
    # ~3 ms; every hop at the NIC's per-channel rate took ~5.7 ms
    assert 1e-3 < fixed(300e9, slow_nic) < 3.5e-3
    assert fixed(600e9, slow_nic) < 0.75 * fixed(300e9, slow_nic)  # the NVLink hops of the fill got faster
    # where NVLink bounds the tree (fast NICs), a faster NIC only shortens its one NIC hop each way
    assert fixed(300e9, 800e9) == pytest.approx(fixed(300e9, 400e9), rel=0.02)
