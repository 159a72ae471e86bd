"""nccl-tests style sweeps, checked against published nccl-tests figures (busbw at 8 GiB, within 15%).

Published figures (NVIDIA engineers answering on the NCCL trackers):
* DGX A100, 8 GPUs, NVLink: all-reduce busbw ~230 GB/s -- NVIDIA/nccl-tests#149 (sjeaugey, 2023-07-05:
  "The total effective bandwidth should therefore be 240GB/s on A100 ... limits it to ~230GB/s").
* DGX H100, 8 GPUs, NVLink, ring: ~370 GB/s -- NVIDIA/nccl-tests#212 (sjeaugey, 2024-05-06: "NCCL can get
  an effective NVLink bandwidth of 370GB/s ... when running with NCCL_ALGO=RING").
* DGX A100 multi-node, 8 x 200G HDR: all-reduce busbw 192 GB/s -- NVIDIA/nccl#812 (AddyLaddy, 2023-03-31:
  "On an Nvidia DGX-A100 system we have 8x200Gbit/s IB cards and we measure 192GB/s AllReduce BusBW").
* DGX H100 multi-node, 8 x 400G NDR: 46-48 GB/s per NIC, i.e. ~376 GB/s all-reduce busbw over 8 NICs --
  NVIDIA/nccl-tests#290 (AddyLaddy, 2025-03-03: "For NDR @ 400Gbps you should see 46-48GB/s per NIC").
* H100 all-to-all over six nodes with 8 x 400G: about one NIC, 48-49 GB/s busbw -- NVIDIA/nccl-tests#267
  (sjeaugey / AddyLaddy, 2024-11 / 2025-01: "Alltoall cannot aggregate the bandwidth of multiple NICs";
  "CX-7 NICs at NDR rate (400Gbps) should achieve up to 48-49GB/s per NIC").
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wanka.network.collectives import CommGroup, collective_time
from wanka.network.groups import comm_group
from wanka.network.nccl_tests import collective_sweep, message_sizes
from wanka.spec import ClusterSpec, FabricSpec
from wanka.units import GIB


def _group(acc: str, nodes: int, nic_gbps: float) -> CommGroup:
    c = ClusterSpec(accelerator=acc, nodes=nodes, fabric=FabricSpec(nic_gbps_per_gpu=nic_gbps))
    return comm_group(c, 8 * nodes, 1)


def test_message_sizes_like_nccl_tests() -> None:
    s = message_sizes()  # -b 8 -e 8G -f 2
    assert s.size == 31 and s[0] == 8 and s[-1] == 8 * GIB


@pytest.mark.parametrize(
    ("acc", "nodes", "nic", "op", "published_gbs"),
    [
        ("A100-SXM4-80GB", 1, 200, "all_reduce", 230.0),
        ("H100-SXM5-80GB", 1, 400, "all_reduce", 370.0),
        ("A100-SXM4-80GB", 2, 200, "all_reduce", 192.0),
        ("A100-SXM4-80GB", 8, 200, "all_reduce", 192.0),
        ("H100-SXM5-80GB", 2, 400, "all_reduce", 8 * 47.0),
        ("H100-SXM5-80GB", 6, 400, "all_to_all", 48.5),
    ],
)
def test_published_busbw(acc: str, nodes: int, nic: float, op: str, published_gbs: float) -> None:
    sw = collective_sweep(op, _group(acc, nodes, nic))
    got = sw.busbw[-1] / 1e9
    assert got == pytest.approx(published_gbs, rel=0.15), f"{acc} x{nodes} {op}: {got:.0f} vs {published_gbs}"


def test_sweep_rows_are_monotone_and_consistent() -> None:
    g = _group("H100-SXM5-80GB", 4, 400)
    for op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send_recv"):
        sw = collective_sweep(op, g)
        assert np.all(np.diff(sw.time_s) >= 0)
        assert np.allclose(sw.algbw * sw.time_s, sw.sizes)
        r = collective_time(op, sw.sizes[-1], g)
        assert sw.time_s[-1] <= float(r.time_s) * (1 + 1e-12)  # the sweep takes the fastest algorithm
    assert len(collective_sweep("all_reduce", g).to_dict()["rows"]) == 31


def test_sharp_option_speeds_up_inter_node_all_reduce() -> None:
    g = _group("H100-SXM5-80GB", 16, 400)
    off = collective_sweep("all_reduce", g, in_network_reduction=False)
    on = collective_sweep("all_reduce", g, in_network_reduction=True)
    assert on.in_network_reduction and np.all(on.time_s <= off.time_s * (1 + 1e-12))


@settings(max_examples=40, deadline=None)
@given(
    nodes=st.integers(2, 512),
    o1=st.floats(1.0, 8.0),
    extra=st.floats(0.0, 8.0),
    op=st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"]),
    log_bytes=st.floats(3, 33),
)
def test_more_oversubscription_never_speeds_up_a_collective(
    nodes: int, o1: float, extra: float, op: str, log_bytes: float
) -> None:
    def t(o: float) -> float:
        c = ClusterSpec(
            accelerator="H100-SXM5-80GB", nodes=nodes, fabric=FabricSpec(oversubscription=min(o, 64.0), tiers=3)
        )
        return float(collective_time(op, 2.0**log_bytes, comm_group(c, 8 * nodes, 1)).time_s)

    assert t(o1 + extra) >= t(o1) * (1 - 1e-12)


def test_in_network_reduction_flag_is_the_groups() -> None:
    g = _group("A100-SXM4-80GB", 2, 200)
    assert collective_sweep("all_reduce", replace(g, in_network_reduction=True)).in_network_reduction
