"""Published multi-node nccl-tests results (benchmarks/nccl_tests_published.yaml) against the model.

``role: fit`` rows set a model constant: they are consistency checks. ``role: check`` rows were held out.
"""

import pytest
from benchmarks.check_nccl_tests import Row, load_rows, mape, predict, series

from wanka.calibration import default_calibration
from wanka.network.collectives import CommGroup, collective_time


@pytest.fixture(scope="module")
def rows():  # type: ignore[no-untyped-def]
    return [predict(r) for r in load_rows()]


def test_every_row_cites_a_source_and_a_role() -> None:
    for r in load_rows():
        assert r["role"] in ("fit", "check") and len(r["source"]) > 20, r["id"]
        assert r["role"] != "fit" or r.get("fits"), f"{r['id']}: a fit row names the constant it set"


def test_fit_rows_are_reproduced_consistency_check(rows) -> None:  # type: ignore[no-untyped-def]
    for r in rows:
        if r.role == "fit":
            assert abs(r.error) <= 0.05, (r.id, r.error)


def test_mape_over_all_published_rows(rows) -> None:  # type: ignore[no-untyped-def]
    assert mape(rows) <= 0.10, [(r.id, round(r.error, 3)) for r in rows]


def test_two_node_nvls_tree_is_pipelined_not_summed(rows) -> None:  # type: ignore[no-untyped-def]
    # the 18-40% under-prediction on two H100 / B200 nodes came from adding the NVLS and
    # fabric phases; pipelined, the B200 row is NIC-bound and within 5%, the H100 row within 25%
    by_id = {r.id: r for r in rows}
    assert abs(by_id["b200-2node-ib"].error) <= 0.05
    assert abs(by_id["h100-2node-ib"].error) <= 0.10  # NCCL's per-head NVLS-tree cap (Hopper, 2 nodes)
    assert by_id["b200-2node-ib"].algorithm == "nvls_tree"


def test_busbw_falls_steeply_below_1gib_across_20_racks(rows) -> None:  # type: ignore[no-untyped-def]
    # 1,440 GB200 (20 NVL72 racks, NVLS off): measured 151 GB/s at 512 MiB, 406 at 16 GiB. The tree's
    # 72-deep chain fill makes NCCL's choice the ring, whose 2(n-1) step latencies set the small sizes
    by_id = {r.id: r for r in rows}
    small, large = by_id["gb200-20rack-512m"], by_id["gb200-20rack-16g"]
    assert small.predicted < 0.5 * large.predicted
    assert abs(small.error) <= 0.10 and small.algorithm == "ring"


def test_no_row_from_two_racks_is_worse_than_25_percent(rows) -> None:  # type: ignore[no-untyped-def]
    for r in rows:
        if r.id.startswith("gb200-2rack"):
            assert abs(r.error) <= 0.25, (r.id, r.error)


def test_single_domain_rows_within_5_percent(rows) -> None:  # type: ignore[no-untyped-def]
    # the target for single-node rows (up to 8 GPUs on one NVLink node or two trays: ring and NVLS,
    # incl. 5 of 8 H100); a rack-scale domain (64-72 NVL72 ranks over MNNVL) within 7 %: its NVLS scatters
    # by ~7 % between published systems and NCCL releases (note of gb300-oci-1rack-64g-8g), and the rank
    # term is fit on one of them. All-to-all in one domain has its own bound below, Infinity Fabric (MI300X,
    # MI355X) its own test
    racks = 0
    for r in rows:
        if r.single_domain and not r.id.count("alltoall") and not r.id.startswith("mi3"):
            node = int(r.setup[0]) <= 8
            racks += not node
            assert abs(r.error) <= (0.05 if node else 0.07), (r.id, r.error)
    assert racks >= 7


def test_infinity_fabric_rows_use_the_measured_xgmi_link_efficiency(rows) -> None:  # type: ignore[no-untyped-def]
    # AMD measures an xGMI link at 45-48 of its 64 GB/s and RCCL's 8-GPU all-reduce at 319 GB/s of 448
    # (0.712, catalog scale_up_link_efficiency, set by mi300x-8g-allreduce-16g: a consistency check); the
    # NVLink share (0.80) put that row at +12 % and MI355X's all-to-all at +17 / +18 %. With MI300X's
    # share carried over, MI355X's held-out all-to-all is +4 / +5 % and its all-reduce -6 % (it reaches
    # 0.757 of its links, above MI300X's 0.712; no per-link MI355X figure is published)
    by_id = {r.id: r for r in rows}
    assert by_id["mi300x-8g-allreduce-16g"].role == "fit"
    assert abs(by_id["mi300x-8g-allreduce-16g"].error) <= 0.01
    assert abs(by_id["mi300x-8g-allreduce-1g"].error) <= 0.02
    mi355x = [r for r in rows if r.id.startswith("mi355x-8g-")]
    assert len(mi355x) == 3 and all(r.role == "check" for r in mi355x)
    for r in mi355x:
        assert abs(r.error) <= 0.07, (r.id, r.error)


def test_nvlink5_rows_use_the_measured_blackwell_link_efficiency(rows) -> None:  # type: ignore[no-untyped-def]
    # A GB200 VM's 4-GPU ring all-reduce reaches 680 of NVLink 5's 900 GB/s (0.757, catalog
    # scale_up_link_efficiency, set by azure-nd-gb200-ring-4g: a consistency check); Hopper's 0.80 put it at
    # +5.7 %. GB300's run is held out, and so are the 64-rank GB200 / GB300 all-to-all rows it moves
    # (+21.8 -> +15.6 %, +11.2 -> +5.6 %, +6.8 -> +1.3 %, +4.1 -> -1.2 %)
    from wanka.catalog import accelerator

    by_id = {r.id: r for r in rows}
    assert by_id["azure-nd-gb200-ring-4g"].role == "fit" and abs(by_id["azure-nd-gb200-ring-4g"].error) <= 0.01
    assert by_id["azure-nd-gb300-ring-4g"].role == "check" and abs(by_id["azure-nd-gb300-ring-4g"].error) <= 0.02
    for rid in ("gb200-64g-alltoall-8g", "gb300-64g-alltoall-8g", "gb300-64g-alltoall-16g"):
        assert abs(by_id[rid].error) <= 0.06, (rid, by_id[rid].error)
    assert {accelerator(n).scale_up_link_efficiency for n in ("B200", "GB200", "B300", "GB300")} == {0.757}


def test_nvlink5_nvls_keeps_its_own_share_and_the_rank_term_only_the_rank_cost(rows) -> None:  # type: ignore[no-untyped-def]
    # 8 B200 with NVLS reach 838 GB/s busbw (0.535 of the link on 8 ranks, catalog scale_up_nvls_efficiency,
    # set by b200-nvls-8gpu: a consistency check); carrying NVLink 4's share to Blackwell put it at +14 % and
    # left the 72-rank rack to the rank term. Held out: 6 B200 ranks, the rack's smaller sizes, Bekman's H200.
    from wanka.catalog import accelerator

    by_id = {r.id: r for r in rows}
    assert by_id["b200-nvls-8gpu"].role == "fit" and abs(by_id["b200-nvls-8gpu"].error) <= 0.01
    assert abs(by_id["gb200-nvl72-8g"].error) <= 0.01 and abs(by_id["dgx-h100-nvls-8g"].error) <= 0.01
    for rid in ("b200-nvls-6gpu", "gb200-nvl72-2g", "gb200-nvl72-1g", "h200-nvls-5gpu", "h100-nvls-5gpu"):
        assert by_id[rid].role == "check" and abs(by_id[rid].error) <= 0.03, (rid, by_id[rid].error)
    for rid in ("b200-ring-4gpu", "b200-ring-8gpu-nvls-off", "h200-ring-8gpu-nvls-off"):
        assert by_id[rid].algorithm == "ring" and abs(by_id[rid].error) <= 0.02, (rid, by_id[rid].error)
    for rid in ("h200-allgather-8gpu-16g", "h200-reducescatter-8gpu-16g"):
        assert abs(by_id[rid].error) <= 0.02, (rid, by_id[rid].error)
    assert {accelerator(n).scale_up_nvls_efficiency for n in ("B200", "GB200", "B300", "GB300")} == {0.535}
    assert accelerator("H100").scale_up_nvls_efficiency is None


def test_a_group_on_part_of_a_full_mesh_board_gets_its_links_only(rows) -> None:  # type: ignore[no-untyped-def]
    # 2 of 8 MI300X reach each other over one xGMI link of seven: 47.7 GB/s busbw at 4 GiB (held out);
    # timed as a switched domain of 2 they would get all seven links' bandwidth, +568 %
    from benchmarks.check_nccl_tests import load_rows

    by_id = {r.id: r for r in rows}
    assert by_id["mi300x-2gpu-allreduce-4g"].role == "check"
    assert abs(by_id["mi300x-2gpu-allreduce-4g"].error) <= 0.05
    raw = next(r for r in load_rows() if r["id"] == "mi300x-2gpu-allreduce-4g")
    switched = predict({**raw, "domain": 2})
    assert switched.error > 4.0


def test_in_domain_all_to_all_known_gap_within_25_percent(rows) -> None:  # type: ignore[no-untyped-def]
    # 16 published all-to-alls inside one NVLink / xGMI domain (4 to 64 ranks, 0.5 to 16 GiB). With
    # NCCL's send/recv drain and its CTAs' copies modelled, and NVLink 5 at its measured link share, the
    # 64-rank GB200 rows stay high (+16 / +6 %: their fixed cost is not explained); MI355X (RCCL) is +4 / +5 %
    # on MI300X's measured xGMI link share; none beyond 25 %, and their MAPE stays <= 7 % (3.0 %; 10.8 %
    # before the copies)
    a2a = [r for r in rows if r.single_domain and r.id.count("alltoall")]
    assert len(a2a) >= 16
    for r in a2a:
        assert abs(r.error) <= 0.25, (r.id, r.error)
    assert mape(a2a) <= 0.07, [(r.id, round(r.error, 3)) for r in a2a]


def test_single_node_and_8_rank_nvlink_all_to_all_within_5_percent(rows) -> None:  # type: ignore[no-untyped-def]
    # issue 15's single-node target for the all-to-alls of one NVLink node / tray (4 H100 of 8, a 4-GPU
    # GB200 or GB300 tray, 8 B300) and 8 ranks over two GB200 / GB300 trays: the Blackwell rows were
    # +4..+16 % while the model let NCCL's send/recv move at the NVLink rate; its CTAs copy every remote
    # byte twice and the own share once (collectives._p2p_copy_bw; the CTA rate is fit on
    # gb200-4g-alltoall-8g, every other row here is held out)
    by_id = {r.id: r for r in rows}
    heads = ("h100-4g-", "gb200-4g-", "gb300-4g-", "b300-8g-", "gb200-8g-", "gb300-8g-")
    ids = [i for i in by_id if i.startswith(heads) and i.count("alltoall")]
    assert len(ids) == 10
    for i in ids:
        assert abs(by_id[i].error) <= 0.05, (i, by_id[i].error)
    assert [i for i in ids if by_id[i].role == "fit"] == ["gb200-4g-alltoall-8g"]


def test_p2p_drain_gives_the_fixed_cost_of_4_and_8_rank_all_to_all(rows) -> None:  # type: ignore[no-untyped-def]
    # GB200 / GB300 all-to-all on 4 and 8 ranks, each published at two sizes: the fitted fixed cost
    # (0.06-0.17 ms) is NCCL's send/recv pipeline drain (one 512 KiB chunk of each of 256 parts at the
    # link rate, collectives._p2p_drain), within 35 %; without it the model had 0.01-0.02 ms
    fitted = {sr.ids[0]: sr for sr in series(rows)}
    for first in ("gb200-4g-alltoall-4g", "gb200-8g-alltoall-8g", "gb300-4g-alltoall-8g", "gb300-8g-alltoall-8g"):
        sr = fitted[first]
        assert abs(sr.model_latency_ms / sr.published_latency_ms - 1) <= 0.35, sr


def test_held_out_rows_mape_at_most_10_percent(rows) -> None:  # type: ignore[no-untyped-def]
    held = [r for r in rows if r.role == "check"]
    assert len(held) >= 20 and mape(held) <= 0.10, [(r.id, round(r.error, 3)) for r in held]


def test_rows_missed_by_more_than_25_percent_say_what_their_source_leaves_open(rows) -> None:  # type: ignore[no-untyped-def]
    # a miss beyond the 25% bound is either modelled or explained in the row's note (what the
    # source does not publish); a silent one fails here
    for r in rows:
        if abs(r.error) > 0.25:
            assert len(r.note) > 200 and "publish" in r.note, (r.id, r.error)


def test_series_fit_recovers_latency_and_bandwidth() -> None:
    # time = 2 ms + bytes / (200 GB/s algbw), all_reduce on 16 ranks: busbw = 2 x 15/16 x algbw
    f = 2 * 15 / 16
    made = []
    for i, s in enumerate((2.0**29, 2.0**31, 2.0**34)):
        t = 2e-3 + s / 200e9
        busbw = s / t * f / 1e9
        made.append(Row(f"x{i}", "check", False, busbw, busbw * 1.1, "ring", "Simple", s, f, ("same",)))
    (sr,) = series(made)
    assert sr.published_latency_ms == pytest.approx(2.0, rel=1e-6)
    assert sr.published_busbw == pytest.approx(200 * f, rel=1e-6)
    assert sr.model_busbw == pytest.approx(1.1 * 200 * f, rel=0.1)


def test_published_series_latency_within_20_percent(rows) -> None:  # type: ignore[no-untyped-def]
    # every setup published at several sizes (one NVL72 rack, 2 and 20 racks): the fitted latency is
    # reproduced; the bandwidth too on 1 and 2 racks (20 racks: see the yaml note of gb200-20rack-16g).
    # 25%: the 2-rack series' smallest size rests on ring/LL128 (see the note of gb200-2rack-512m), whose
    # bandwidth NCCL 2.26.2's 15 NICs per rack lower by 4% (latency fit 21%; 17% on every NIC)
    # (all-to-all series: see test_p2p_drain_gives_the_fixed_cost_of_4_and_8_rank_all_to_all; 64 ranks
    # and RCCL's are left open in the yaml comment)
    # Oracle's GB200 series (NCCL 2.27.3: one rack of 64, 2 and 3 racks) are held to the same bounds unless
    # the series' first row says what its source leaves open (as rows beyond 25 % must): the 64-rank
    # rack's fixed cost (0.79 ms, modelled 0.48) and the third rack's 6 % bandwidth loss are not modelled
    # A fixed cost is only resolved to about 1 % of the series' shortest time (two 8 / 16 GiB readings
    # of 18 / 36 ms do not tell 0.09 from 0.14 ms): a miss below that counts as within
    notes = {r.id: r.note for r in rows}
    by_id = {r.id: r for r in rows}
    fitted = [sr for sr in series(rows) if not sr.ids[0].count("alltoall")]
    assert len(fitted) >= 6
    for sr in fitted:
        t_min_ms = min(by_id[i].nbytes * by_id[i].factor / (by_id[i].published * 1e9) for i in sr.ids) * 1e3
        miss = abs(sr.model_latency_ms - sr.published_latency_ms)
        lat_ok = miss <= max(0.25 * sr.published_latency_ms, 0.01 * t_min_ms)
        bw_ok = sr.ids[0].startswith("gb200-20rack") or abs(sr.model_busbw / sr.published_busbw - 1) <= 0.05
        if sr.ids[0].startswith(("gb200-nvl72", "gb200-2rack", "gb200-20rack", "gb200-oci-2rack")):
            assert lat_ok and bw_ok, sr  # the series these mechanisms were built on, and the 2 racks held out
        elif not (lat_ok and bw_ok):
            assert len(notes[sr.ids[0]]) > 200 and "publish" in notes[sr.ids[0]], sr


def test_static_ecmp_slows_only_hashed_fabrics(rows) -> None:  # type: ignore[no-untyped-def]
    # InfiniBand (adaptive routing) and one-domain rows are not hashed; on the 32-node RoCE cluster of
    # NCCL#1218 (16 channels, 1 QP) the ring's 2 flows per NIC collide on the leaf uplinks, the
    # NVLS-tree's 4 spread: the same assumed fabric explains the 340 GB/s all-reduce and the 200 GB/s
    # all-gather
    by_id = {r.id: r for r in rows}
    for r in rows:
        if r.ecmp > 1.0:  # RoCE across leaves, fabric unpublished: NCCL#1218's 32 nodes (Oracle's 2 GB300 racks
            # run 4 QPs a connection: nothing hashed)
            assert r.id.startswith("h100-32node-roce"), r.id
        if r.single_domain or r.setup[4] != "roce":  # setup: gpus, per_domain, accelerator, nic, fabric, ...
            assert r.ecmp == 1.0 and not r.assumed, r.id
    ring, tree = by_id["h100-32node-roce-allgather"], by_id["h100-32node-roce-allreduce"]
    assert ring.ecmp > tree.ecmp >= 1.0
    assert abs(ring.error) <= 0.25 and abs(tree.error) <= 0.05
    assert "top-of-rack" in ring.assumed  # the source publishes no fabric: the check says what it took


def test_two_domain_all_to_all_rows_within_5_percent(rows) -> None:  # type: ignore[no-untyped-def]
    # three independent two-domain all-to-alls (B300, 2 nodes over InfiniBand; GB200, 2 NVL72 racks; MI355X, 2
    # nodes over RoCE), all held out, were 8-14 % slow at the many-domain share; at the point-to-point share
    # they are within 5 %, while the three- to six-domain rows keep the measured all-to-all share
    by_id = {r.id: r for r in rows}
    for i in ("b300-2node-alltoall-8g", "gb200-2rack-alltoall-8g", "mi355x-2node-roce-alltoall-16g"):
        assert by_id[i].role == "check" and abs(by_id[i].error) <= 0.05, (i, by_id[i].error)
    for i in ("gb200-3rack-alltoall-8g", "mi355x-4node-roce-alltoall-16g", "h100-6node-alltoall"):
        assert abs(by_id[i].error) <= 0.07, (i, by_id[i].error)


def test_collnet_chain_rows_and_its_nvlink_bound(rows) -> None:  # type: ignore[no-untyped-def]
    # NCCL_ALGO=COLLNETCHAIN with IB SHARP on 8 H100 nodes (coreweave/nccl-tests, NCCL 2.18.1), held out:
    # within 5% at 512 MiB and 8 GiB; without the chain the forced algorithm does not exist
    by_id = {r.id: r for r in rows}
    for i in ("h100-8node-sharp-chain-512m", "h100-8node-sharp-chain-8g"):
        assert by_id[i].role == "check" and abs(by_id[i].error) <= 0.05, (i, by_id[i].error)
        assert by_id[i].algorithm == "collnet_chain"
    # the chain's bandwidth: a middle rank sends every byte up and again down, head and tail once, so a
    # GPU's NVLink carries 2(a-1)/a of the buffer; the NIC (one head a channel) is far from binding
    g = CommGroup(size=64, per_domain=8, scale_up_bw=450e9, scale_out_bw=50e9, in_network_reduction=True)
    s = 2.0**36
    t = float(collective_time("all_reduce", s, g, "collnet_chain").time_s)
    up = 450e9 * default_calibration().scale_up_efficiency
    assert t == pytest.approx(s * 2 * 7 / 8 / up, rel=0.02)


def test_forced_algorithm_rule_matches_what_the_model_can_time() -> None:
    # forced_algorithm_problem is the one answer the CLI and the API give to NCCL_ALGO: whatever it lets
    # through (and collective_time accepts) has a finite time, and whatever it refuses is infinite or absent
    import math

    from wanka.network.collectives import ALGORITHMS, OPS, forced_algorithm_problem

    allowed = refused = 0
    for size, per_domain in ((8, 8), (64, 8), (64, 1), (8, 1)):
        for sharp in (False, True):
            for nvls in (False, True):
                g = CommGroup(size, per_domain, 450e9, 50e9, in_network_reduction=sharp, scale_up_reduction=nvls)
                for op in OPS:
                    for algo in ALGORITHMS:
                        try:
                            t = float(collective_time(op, 2.0**30, g, algo).time_s)
                        except ValueError:
                            continue  # not a candidate for this op at all: collective_time says so
                        problem = forced_algorithm_problem(algo, op, g)
                        if problem is None:
                            allowed += 1
                            assert math.isfinite(t), (size, per_domain, sharp, nvls, op, algo)
                        else:
                            refused += 1
                            assert not math.isfinite(t), (size, per_domain, sharp, nvls, op, algo, problem)
    assert allowed >= 100 and refused >= 20


def test_blackwell_nvls_channels_follow_the_nccl_release() -> None:
    # NCCL ran one Blackwell domain on NVLS_NCHANNELS_SM100 (32) until 2.27.3 added NVLS_NCHANNELS_SM100_NVL
    # (24) for a single node or MNNVL clique (nvls.cc); the first NVLS loop (ranks x channels x 128 KiB)
    # fills the pipeline, so on 72 ranks an older release pays 8 x 72 x 128 KiB more at the NVLS rate.
    # CoreWeave's NVL72 series (NCCL 2.26.2) publishes a 0.67 ms fixed cost: 0.56 at 24 channels, 0.73 at 32
    from wanka.catalog import accelerator

    acc = accelerator("GB200")

    def t(version: str | None, ranks: float = 72.0, algo: str = "nvls") -> float:
        g = CommGroup(
            size=ranks,
            per_domain=72.0,
            scale_up_bw=acc.scale_up_bandwidth,
            scale_out_bw=50e9,
            scale_up_reduction=True,
            up_efficiency=acc.scale_up_link_efficiency,
            nvls_link_efficiency=acc.scale_up_nvls_efficiency,
            architecture=acc.architecture,
            nccl_version=version,
        )
        return float(collective_time("all_reduce", 8 * 2.0**30, g, algo).time_s)

    extra = t("2.26.2") - t("2.27.3")
    assert extra > 0
    assert t(None) == t("2.27.3")  # no release given: the newest
    nvls_algbw = 8 * 2.0**30 / t("2.27.3")  # within a few % of the rate the fill runs at
    assert extra == pytest.approx(8 * 72 * 128 * 1024 / nvls_algbw, rel=0.1)
    # across domains both releases run 32 channels: nothing changes
    assert t("2.26.2", 144.0, "nvls_tree") == t("2.27.3", 144.0, "nvls_tree")


def test_blackwell_ultra_takes_nccls_blackwell_tables() -> None:
    # NCCL keys its tables by compute capability >= 100 (tuning.cc compCapIndex, search.cc's sm100 speeds,
    # nvls.cc's channel counts): a GB300 group is timed as a GB200 group with the same links. Before, GB300
    # fell through to no table (16 NVLS channels, every NIC of the rack, no NVLS-tree cap): two Oracle
    # GB300 racks came out NVLS-bound at +21 %, now NIC-bound on NCCL's 8 heads
    from wanka.network.collectives import nccl_arch

    assert nccl_arch("Blackwell Ultra") == "Blackwell" and nccl_arch("Hopper") == "Hopper" and nccl_arch(None) is None
    times = []
    for arch in ("Blackwell", "Blackwell Ultra"):
        g = CommGroup(
            size=128.0,
            per_domain=64.0,
            scale_up_bw=900e9,
            scale_out_bw=100e9,
            scale_up_reduction=True,
            up_efficiency=0.757,
            nvls_link_efficiency=0.535,
            architecture=arch,
            nccl_version="2.28.7",
        )
        times.append(float(collective_time("all_reduce", 8 * 2.0**30, g).time_s))
    assert times[0] == times[1]
