"""Collective communication times as NCCL runs them: algorithms and protocols over a two-level hierarchy
(scale-up domain, scale-out fabric).

This module is the only place collective times come from. Every function accepts floats or numpy
arrays (broadcasting), so the engine evaluates one strategy or a batch of thousands the same way.

Conventions follow nccl-tests (``nccl-tests/doc/PERFORMANCE.md``): ``nbytes`` is the per-rank buffer
for all-reduce and all-to-all, and the whole (gathered) buffer for all-gather and reduce-scatter;
``algbw = nbytes / time``; ``busbw = algbw * factor`` with factor 2(n-1)/n for all-reduce and
(n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for broadcast and send/recv.

The model is NCCL's own tuning model (``src/graph/tuning.cc``, NCCL 2.23-2.27): every candidate
(algorithm, protocol) costs ``latency + nbytes / bandwidth`` and the tuner takes the cheapest, so the
algorithm, the protocol and the channel count change with message size and rank count. With ``n``
ranks, ``a`` per scale-up domain, ``k = n / a`` domains, per-GPU link rates ``up`` (NVLink) and
``out`` (NIC), each derated by its efficiency:

==============  ===========================================================  =========================
algorithm       bandwidth term (per rank buffer S)                           latency (NCCL tables)
==============  ===========================================================  =========================
ring            f·S / min(up, a·out): one ring per NIC (rail)                base + intra/inter hops
tree            max(2S/up, c_k·S/(a·out)) / 0.92, double binary tree,        2((a-1)·intra + log2 k·inter)
                + chain fill: 2 chunk-times a hop, a-1 NVLink + log2 k NIC
nvls            S / nvls(a): NVLink SHARP inside one domain                  NVLS switch latency
nvls_tree       max(S/nvls(a), c_k·S/(a·out), S/cap): NVLS inside, tree      NVLS + 2 log2 k · inter
                across, *pipelined* (max, not sum); cap = heads x NCCL's
                per-channel NVLS-tree cap (Hopper 57.7/45.5 GB/s, Blackwell
                96/80 GB/s for 2/more nodes); fills two NVLS pipelines
collnet         max(intra, S/(a·out)) / 0.85: IB SHARP reduces in the switch  base + aggregation tree
collnet_chain   max(2(a-1)/a·S/up, S/(nics·out)): a chain a channel          2(a-1)·intra + inter
                up to the head's NIC and SHARP and back; + chain fill
pat             (n-1)/n·S / (0.75·out), one rank per domain (AG/RS)          8 + log2 k·inter/3.5 + 2.8n
hierarchical    reduce-scatter + shard all-reduce + all-gather, *summed*     (not pipelined; on request)
==============  ===========================================================  =========================

``c_k`` is the busiest node's share in a double binary tree: 1 for two domains, 1.5 for three (root of
one tree, leaf of the other), 2 beyond (interior in one tree: NCCL's ``bwInter/2`` for more than two
nodes). ``nvls(a) = raw_up x NVLS_PEAK x (h-1)/h / (1 + a / NVLS_REDUCE_RANKS)``, ``h = min(a, 32)``
NVLS heads: NCCL scales NVLS bandwidth by (channels-1)/channels over its NVLS graph's one channel per GPU
(``tuning.cc``, ``search.cc``), and the NVSwitch reduction engine reads ``a`` inputs per output element,
so its throughput falls with the domain size (fit on two published rows, DGX H100 and GB200 NVL72; see
``benchmarks/nccl_tests_published.yaml``). NVLS runs in loops of ranks x channels x 128 KiB (channels:
16 on Hopper, 24 on one Blackwell domain (32 before NCCL 2.27.3), 32 across domains, ``nvls.cc``) whose
first one fills the pipeline (an extra ``min(S, a·channels·128 KiB)`` bytes' time: NVLS busbw falls below
a few GiB on 72 ranks, not on 8). The tree's first chunk climbs NCCL's tree depth and comes back down, each hop
at its own link's per-channel rate (a pipeline fills at each stage's rate; only its steady state runs at the
slowest one's, so a NIC-bound tree's NVLink hops fill at NVLink speed): Simple chunks
of 512 KiB (one of 8 steps of the 4 MiB buffer), LL128 chunks shrunk as NCCL does for short messages;
on 20 NVL72 racks (depth 75) this fill makes the ring NCCL's choice. The group's ``architecture``
(catalog) selects the per-architecture tables; None leaves them out. Protocols scale the Simple
bandwidth (LL 0.5 capped at NCCL's ``llMaxBws``, LL128 0.92) and carry NCCL's per-protocol latencies. A
message too small to give every channel NCCL's per-channel minimum runs on fewer channels, at a
proportional share of the bandwidth. All-to-all inside one domain also pays NCCL's send/recv pipeline drain
(:func:`_p2p_drain`: one 512 KiB chunk of every part per batch of 8 parts a channel), and its NVLink rate is
at most what the send/recv CTAs copy (:func:`_p2p_copy_bw`: each remote byte twice, the own share once, at
a per-CTA rate by architecture, fit on one published Blackwell row).
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

import numpy as np
import numpy.typing as npt

from wanka.calibration import Calibration, default_calibration

__all__ = [
    "ALGORITHMS",
    "NCCL_ALGO_NAMES",
    "OPS",
    "PROTOCOLS",
    "CollectiveResult",
    "CommGroup",
    "NcclModel",
    "Op",
    "algorithm_name",
    "bus_factor",
    "collective_candidates",
    "collective_time",
    "forced_algorithm_problem",
]

Op = Literal["all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "send_recv"]
OPS: tuple[str, ...] = ("all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "send_recv")
PROTOCOLS: tuple[str, ...] = ("LL", "LL128", "Simple")
ALGORITHMS: tuple[str, ...] = ("ring", "tree", "nvls", "nvls_tree", "collnet", "collnet_chain", "pat", "hierarchical")
Num = float | npt.NDArray[np.float64]
FloatArray = npt.NDArray[np.float64]
# bytes one NCCL send/recv CTA copies a second on sm100 (NcclModel.p2p_channel_copy_bw), fit on
# gb200-4g-alltoall-8g
_P2P_CHANNEL_COPY_BW_SM100 = 45.22e9


def _t(ll: float, ll128: float, simple: float) -> tuple[float, float, float]:
    return (ll * 1e-6, ll128 * 1e-6, simple * 1e-6)


# sm90SpeedArrayInter (src/graph/search.cc, GB/s; sm100's up to NCCL 2.27.2): the per-channel speeds
# NCCL's graph search tries across nodes, fastest first
_SPEEDS_SM90 = (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12)


@functools.lru_cache(maxsize=64)
def nccl_version(text: str | None) -> tuple[int, int, int] | None:
    """``"2.26.2"`` (or ``"2.26.2-1"``, ``"v2.26.2"``) as ``(2, 26, 2)``; None stays None (the current release)."""
    if text is None:
        return None
    parts = str(text).strip().lstrip("v").split("-")[0].split(".")
    try:
        nums = [int(x) for x in parts]
    except ValueError:
        nums = []
    if not 2 <= len(nums) <= 3 or any(x < 0 for x in nums):
        raise ValueError(f"nccl_version = {text!r}: must be a NCCL release such as 2.26.2")
    return (nums[0], nums[1], nums[2] if len(nums) == 3 else 0)


@dataclass(frozen=True)
class NcclModel:
    """NCCL's tuning model: latencies (s) per algorithm and protocol (LL, LL128, Simple) and bandwidth
    refinements, from ``src/graph/tuning.cc`` (NCCL 2.23-2.27: ``baseLat``, ``hwLat``, ``llMaxBws``,
    the ``busBw`` refinements). Link efficiencies default to :mod:`wanka.calibration`; pass another
    instance (e.g. from ``wanka collective --calibrate``) to use measured ones.
    """

    base: dict[str, tuple[float, float, float]] = field(
        default_factory=lambda: {
            "ring": _t(6.6, 14.0, 8.4),
            "tree": _t(6.8, 14.0, 8.4),
            "collnet": _t(0, 0, 0),
            "collnet_chain": _t(0, 0, 0),
            "nvls": _t(0, 0, 0),
            "nvls_tree": _t(0, 0, 0),
            "pat": _t(0, 0, 0),
        }
    )
    nvlink: dict[str, tuple[float, float, float]] = field(
        default_factory=lambda: {
            "ring": _t(0.6, 1.9, 3.4),
            "tree": _t(0.6, 1.25, 4.0),
            "collnet": _t(0, 0, 3.7),
            "collnet_chain": _t(0, 0, 2.8),
            "nvls": _t(0, 0, 25.0),
            "nvls_tree": _t(0, 0, 25.0),
        }
    )
    # Across the fabric wanka uses its fitted per-hop latency (the calibration's scale_out_latency_s) for ring
    # and tree with every protocol, not NCCL's hwLat NET row (ring 2.7/4.0/14, tree 5.0/8.5/14 us): those
    # are tuner costs whose Simple entry includes a chunk's serialization at 12 GB/s (tuning.cc comment),
    # which the bandwidth term here already charges.
    net: dict[str, tuple[float, float, float]] = field(
        default_factory=lambda: {
            "ring": (default_calibration().scale_out_latency_s,) * 3,
            "tree": (default_calibration().scale_out_latency_s,) * 3,
            "collnet": _t(0, 0, 31.0),
            "collnet_chain": _t(0, 0, 30.0),
            "nvls": _t(0, 0, 18.0),
            "nvls_tree": _t(0, 0, 14.0),
        }
    )
    net_overhead_s: float = 1e-6  # per inter-node ring step (x3 for Simple); getNetOverhead, Intel x86
    ll_factor: float = 0.5  # LL: half of each 8-byte line is a flag
    ll128_factor: float = 0.92  # LL128: 120 of 128 bytes carry data
    # LL bus-bandwidth cap, B/s: one domain (Hopper), two domains, more (llMaxBws, Intel CPU rows)
    ll_max_busbw: tuple[float, float, float] = (141e9, 39.0e9, 20.4e9)
    tree_factor: float = 0.92  # busBw * .92 for Tree all-reduce
    tree_ll_factor: float = 1.0 / 3.8
    collnet_factor: float = 0.85  # CollNet Direct on sm90+
    collnet_chain_chunk_bytes: float = 256 * 1024  # CollNet chain's largest chunk (enqueue.cc)
    pat_factor: float = 0.75
    channels: int = 32  # NCCL_MAX_NCHANNELS default on sm90+
    # fewest bytes one channel takes before NCCL drops a channel (threads x per-thread threshold)
    channel_min_bytes: tuple[float, float, float] = (4096.0, 5120.0, 32768.0)
    up_efficiency: float = field(default_factory=lambda: default_calibration().scale_up_efficiency)
    out_efficiency: float = field(default_factory=lambda: default_calibration().scale_out_efficiency)
    # NVLS algbw = raw_up x nvls_peak x (h-1)/h / (1 + a / nvls_reduce_ranks), h = min(a, nvls_max_heads)
    # NVLS heads (channels): NCCL's tuner scales NVLS bandwidth by (nChannels-1)/nChannels (tuning.cc) and
    # its NVLS graph has one channel per GPU, at most NCCL_MAX_NVLS_ARITY = 32 (search.cc, device.h).
    # nvls_peak and nvls_reduce_ranks: fit on DGX H100 (8 GPUs, 480 GB/s busbw, nccl-tests#212/#290) and
    # GB200 NVL72 (72 GPUs, 835 GB/s busbw, coreweave/nccl-tests#43), the latter at NVLink 5's own share on 8
    # ranks (catalog scale_up_nvls_efficiency, 0.535 from an 8-GPU HGX B200), so the rank term carries only
    # what 72 ranks cost against 8 (it carried NVLink 5's lower share too, and put 8 B200 at +14 %)
    nvls_peak: float = 0.7180
    nvls_reduce_ranks: float = 289.8
    nvls_max_heads: int = 32
    # NVLS works in loops of ranks x channels x chunk (NCCL_NVLS_NCHANNELS = 16, NCCL_NVLS_CHUNKSIZE = 128 KiB,
    # NCCL environment docs); the first loop fills the reduce/multicast pipeline before data completes
    nvls_channels: int = 16
    nvls_chunk_bytes: float = 128 * 1024
    # NVLS channels by architecture, (one domain, several): NVLS_NCHANNELS_SM90 16, NVLS_NCHANNELS_SM100_NVL
    # 24, NVLS_NCHANNELS_SM100 32 (src/transport/nvls.cc, NVIDIA/nccl master 5067397c); others: nvls_channels
    nvls_channels_by_arch: dict[str, tuple[int, int]] = field(
        default_factory=lambda: {"Hopper": (16, 16), "Blackwell": (24, 32)}
    )
    # the release that gave one domain its own (smaller) count: before it (v2.25.1 .. v2.26.6 nvls.cc) a
    # Blackwell domain ran NVLS_NCHANNELS_SM100 (32) alone too; v2.27.3 added NVLS_NCHANNELS_SM100_NVL for a
    # single node or MNNVL clique
    nvls_one_domain_channels_from: tuple[int, int, int] = (2, 27, 3)
    # NVLS-tree bus bandwidth per channel cap, B/s, for (one node, two, more) by GPU architecture
    # (tuning.cc ``perChMaxNVLSTreeBws``, NVIDIA/nccl master 5067397c, 2026-06), x the NVLS heads: one
    # per GPU (and its NIC) of the domain (``NVLS Head i: ...`` in NCCL's INFO log), at most
    # ``nvls_max_heads``; an architecture not listed is not capped.
    nvls_tree_max_bw_per_channel: dict[str, tuple[float, float, float]] = field(
        default_factory=lambda: {"Hopper": (0.0, 57.7e9, 45.5e9), "Blackwell": (0.0, 96.0e9, 80.0e9)}
    )
    # Tree pipeline (NCCL src/graph/connect.cc, src/enqueue.cc, src/init.cc): a chunk climbs the tree
    # (reduce) and comes back down (broadcast), so the first chunk of each channel takes 2 chunk-times a
    # hop over depth = ranks per node - 1 + log2(nodes) hops (connect.cc), each at its link's rate. Chunk
    # = one buffer step:
    # Simple 4 MiB / NCCL_STEPS 8 = 512 KiB; LL128 ~4.7 MiB / 8 x 120/128, which NCCL halves down to
    # 32 KiB while nBytes / (channels x chunk) < (1 + log2 nodes + 0.1 ppn) x 16 / ppn (enqueue.cc: it
    # shrinks LL128 tree chunks because of this fill); LL (8-byte lines, 16 KiB chunks) is left without
    # a fill beyond its per-hop latency.
    tree_chunk_bytes: tuple[float, float, float] = (0.0, 576000.0, 524288.0)
    tree_ll128_min_chunk_bytes: float = 32768.0
    # NICs NCCL drives across domains (its graph search, src/graph/search.cc ``ncclTopoCompute``): one
    # search channel per NIC, at the first inter-node speed of the architecture's table that the NIC
    # carries, added until channels x speed >= the GPU's NVLink total (``system->totalBw``: links x NCCL's
    # per-link NVLink bandwidth, topo.h; x a/(a-1) for the NVLS pattern). Per architecture, by the first
    # NCCL version that has them: (version, NCCL per-link GB/s, datasheet per-link GB/s, inter speeds GB/s).
    # On a GB200 NVL72 domain with 400G NICs: 18 x 40.0 = 720 = 15 x 48.0, 15 NICs of 72 up to 2.27.2;
    # 2.27.3 lowers the first speed to 47.9 (16 NICs: its release notes' "increase to 16 the number of
    # NICs used to communicate between MNNVL domains on GB200"), 2.27.5 raises the link to 40.1 (16),
    # 2.27.7 puts 96.0 first (800G NICs). An architecture not listed: every NIC of the domain.
    net_search: dict[str, tuple[tuple[tuple[int, int, int], float, float, tuple[float, ...]], ...]] = field(
        default_factory=lambda: {
            "Hopper": (((0, 0, 0), 20.6, 25.0, _SPEEDS_SM90),),
            "Blackwell": (
                ((0, 0, 0), 40.0, 50.0, _SPEEDS_SM90),
                ((2, 27, 3), 40.0, 50.0, (47.9, *_SPEEDS_SM90[1:])),
                ((2, 27, 5), 40.1, 50.0, (48.0, 45.1, *_SPEEDS_SM90[2:])),
                ((2, 27, 7), 40.1, 50.0, (96.0, 48.0, 45.1, *_SPEEDS_SM90[2:])),
            ),
        }
    )
    # all-to-all inside one NVLink domain runs as grouped send/recv (NCCL src/enqueue.cc,
    # scheduleP2pTasksToPlan / addP2pToPlan; src/device/sendrecv.h): each peer's bytes (the rank's own
    # share too, as a local copy) are cut into parts over ``channels`` channels, a channel runs its parts
    # in batches of NCCL_MAX_DEV_WORK_P2P_PER_BATCH = 8 (src/include/device.h), and each part moves in
    # chunks of NCCL_P2P_NVL_CHUNKSIZE = 512 KiB (src/init.cc) through the receiver's FIFO: the sender
    # writes a chunk over NVLink (P2P write: paths.cc enables P2P read for sm80 only), the receiver copies
    # it out. Parts per peer: start at the largest power of 2 with parts x ranks <= channels (at least 1),
    # at most bytes / (chunk / 8), then double while a part exceeds 32 chunks (one NVLink domain).
    p2p_chunk_bytes: float = 512 * 1024
    p2p_works_per_batch: int = 8
    p2p_min_part_chunks: float = 1.0 / 8.0
    p2p_max_part_chunks: float = 32.0
    # Those copies are made by the channels' CTAs (one CTA a channel, src/device/sendrecv.h): the sender
    # copies each remote part from its buffer into the peer's FIFO over NVLink, the receiver copies it
    # out of its FIFO into its buffer (prims_simple.h directSend / directRecv; straight into the user
    # buffer only when registered, ncclRegisterP2pIpcBuffer, which nccl-tests does not do without -R),
    # and the rank's own share is one local copy (sendrecv.h isCopy, reduceCopy). A GPU's CTAs thus copy
    # (2(n-1) + 1)/n of its buffer while its NVLink carries (n-1)/n: a CTA that copies at a bounded rate
    # caps the NVLink at busy channels x that rate x (n-1)/(2n-1). Copied bytes a second of one p2p
    # CTA, by GPU architecture (an architecture not listed: uncapped). FIT on one published row,
    # gb200-4g-alltoall-8g (benchmarks/nccl_tests_published.yaml, role: fit). It is the one rate that also
    # gives the same run's in-place columns, where NCCL skips the own copy (enqueue.cc "Skip send to self
    # in-place") and 4 ranks reach 667-681 GB/s (GB200, GB300), 8-10 % above out-of-place, while 8 and
    # 64 ranks gain nothing (GB200, GB300, B300): their copy bound, 7/15 x 32 CTAs (675 GB/s) and 63/127
    # (718), is at or above the ~660-680 the link itself reaches in those runs (below the model's
    # 0.80 x 900: calibration's scale_up_efficiency). A per-warp
    # rate (the kernel splits a CTA's 20 warps over the batch's works) does not fit: it gives in-place 4
    # ranks no gain.
    # Blackwell Ultra (sm103) runs the same kernel as Blackwell (sm100; ncclCollUnroll() 8 for both,
    # device.h) at about the same HBM3e rate (7.7-8 TB/s, catalog), so it takes the same value (every table
    # here is keyed by NCCL's class, ``nccl_arch``); its rows (gb300-*, b300-*) are held out.
    p2p_channel_copy_bw: dict[str, float] = field(default_factory=lambda: {"Blackwell": _P2P_CHANNEL_COPY_BW_SM100})
    # framework launch cost added to every collective
    launch_s: float = field(default_factory=lambda: default_calibration().collective_launch_s)

    @staticmethod
    @functools.cache
    def from_calibration(cal: Calibration) -> NcclModel:
        """NCCL's model with wanka's calibrated link efficiencies, fabric hop latency and launch cost."""
        m = NcclModel(up_efficiency=cal.scale_up_efficiency, out_efficiency=cal.scale_out_efficiency)
        net = dict(m.net, ring=(cal.scale_out_latency_s,) * 3, tree=(cal.scale_out_latency_s,) * 3)
        return replace(m, net=net, launch_s=cal.collective_launch_s)


DEFAULT_MODEL = NcclModel()


@dataclass(frozen=True)
class CommGroup:
    """A communicator: ``size`` ranks, ``per_domain`` of which share each scale-up domain.

    Bandwidths are per GPU, one direction, in B/s (link rate; efficiencies are applied here).
    ``scale_out_contention`` >= 1 slows the fabric part (from the flow-level model or oversubscription).
    Fields may be numpy arrays of one shape for batch evaluation.
    """

    size: Num
    per_domain: Num
    scale_up_bw: Num
    scale_out_bw: Num
    scale_out_contention: Num = 1.0
    up_latency_s: float | None = None  # per hop of all-to-all/p2p; None = the calibration's scale_up_latency_s
    out_latency_s: float | None = None  # per hop of all-to-all/p2p; None = the calibration's scale_out_latency_s
    in_network_reduction: bool = False  # fabric SHARP (IB CollNet): all-reduce across domains in the switches
    scale_up_reduction: bool = False  # NVLS: the scale-up switch reduces inside the domain
    # all-to-all only: share of the off-domain bytes that crosses the fabric. 1 = one copy per
    # destination rank (NCCL alltoall); < 1 = one copy per destination domain, forwarded over the
    # scale-up links there (node-deduplicated dispatch, DeepEP; DeepSeek-V3 Sec. 3.2.2)
    remote_dedup: Num = 1.0
    # all-to-all only: 1 where the off-domain bytes go through HybridEP's RDMA path (Megatron-Core's flex
    # dispatcher, backend hybridep) at its measured share of the NIC line rate
    # (calibration hybridep_rdma_share_pair / hybridep_rdma_share) instead of NCCL's; 0 = NCCL's
    hybridep: Num = 0.0
    # measured link efficiencies (scenario overlay from `wanka collective --calibrate`); None = the model's
    up_efficiency: float | None = None
    out_efficiency: float | None = None
    nvls_efficiency: float | None = None  # NVLS all-reduce algbw / scale-up link rate
    # the NVSwitch generation's NVLS algbw / link rate on 8 ranks (catalog scale_up_nvls_efficiency); None =
    # NVLink 4's, the model's fit on DGX H100. The model's rank dependence scales it to other sizes.
    nvls_link_efficiency: float | None = None
    # GPU architecture (catalog ``Accelerator.architecture``: Hopper, Blackwell, ...): selects NCCL's
    # per-architecture tuner caps; None = uncapped
    architecture: str | None = None
    # wanka's calibration for this group's latencies and efficiencies (None = the shipped one); the
    # engine passes its context's
    calibration: Calibration | None = None
    # per-hop latency the scale-up fabric adds on the group's path (the upper switch tier of a supernode;
    # wanka.network.groups.scale_up_path); 0 = a single-tier domain, the calibrated hop
    up_extra_latency_s: Num = 0.0
    # the NCCL release whose graph search sets the NICs used across domains ("2.26.2"); None = the
    # newest one the model knows (NcclModel.net_search)
    nccl_version: str | None = None

    @property
    def cal(self) -> Calibration:
        return default_calibration() if self.calibration is None else self.calibration

    @property
    def scale_up_latency_s(self) -> Num:
        base = self.cal.scale_up_latency_s if self.up_latency_s is None else self.up_latency_s
        extra = self.up_extra_latency_s
        return base + extra if np.ndim(extra) else base + float(extra)

    @property
    def scale_out_latency_s(self) -> float:
        return self.cal.scale_out_latency_s if self.out_latency_s is None else self.out_latency_s

    @property
    def domains(self) -> Num:
        """Scale-up domains the group spans."""
        return np.maximum(1.0, np.asarray(self.size, dtype=float) / np.asarray(self.per_domain, dtype=float))


@dataclass(frozen=True)
class CollectiveResult:
    """Time and nccl-tests style bandwidths of one collective, and what NCCL's tuner would run."""

    op: str
    nbytes: Num
    size: Num
    time_s: Num
    algbw: Num
    busbw: Num
    algorithm: str
    protocol: str = "Simple"
    # per element, when evaluated over an array: the index of each element's (algorithm, protocol)
    # in ``choices``; the names are built only when asked for (the engine times millions of rows)
    choice: npt.NDArray[np.intp] | None = None
    choices: tuple[tuple[str, str], ...] = ()

    @property
    def algorithms(self) -> tuple[str, ...]:
        if self.choice is None:
            return ()
        names = [a for a, _ in self.choices]
        return tuple(names[i] for i in self.choice.tolist())

    @property
    def protocols(self) -> tuple[str, ...]:
        if self.choice is None:
            return ()
        names = [p for _, p in self.choices]
        return tuple(names[i] for i in self.choice.tolist())

    def to_dict(self) -> dict[str, object]:
        def f(x: Num) -> object:
            a = np.asarray(x)
            return float(a) if a.ndim == 0 else a.tolist()

        return {
            "op": self.op,
            "bytes": f(self.nbytes),
            "ranks": f(self.size),
            "time_s": f(self.time_s),
            "algbw_bytes_per_s": f(self.algbw),
            "busbw_bytes_per_s": f(self.busbw),
            "algorithm": self.algorithm,
            "protocol": self.protocol,
        }


def bus_factor(op: str, n: Num) -> Num:
    """nccl-tests bus-bandwidth factor for ``op`` over ``n`` ranks."""
    n = np.asarray(n, dtype=float)
    if op == "all_reduce":
        return 2.0 * (n - 1.0) / n
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1.0) / n
    if op in ("broadcast", "send_recv"):
        return np.ones_like(n)
    raise ValueError(f"op = {op!r}: must be one of {', '.join(OPS)}")


class _NumpyOps:
    """The elementwise functions the candidates use: numpy's (arrays of any shape)."""

    where = staticmethod(np.where)
    minimum = staticmethod(np.minimum)
    maximum = staticmethod(np.maximum)
    clip = staticmethod(np.clip)
    log2 = staticmethod(np.log2)
    ceil = staticmethod(np.ceil)
    asarray = staticmethod(np.asarray)
    full = staticmethod(np.full)
    shape = staticmethod(np.shape)
    any = staticmethod(np.any)
    inf = np.inf

    @staticmethod
    def value(x: Any) -> Any:
        return x


class _ScalarOps:
    """The same functions on Python floats, for one collective (a single strategy): numpy's cost per
    call is ~100x the arithmetic there. IEEE float64 either way, NaN propagating as numpy's; a division
    by zero or a log of 0 raises here, and the caller then uses :class:`_NumpyOps`."""

    @staticmethod
    def where(c: Any, a: Any, b: Any) -> Any:
        return a if c else b

    @staticmethod
    def minimum(a: Any, b: Any) -> Any:
        return a if (a <= b or a != a) else b

    @staticmethod
    def maximum(a: Any, b: Any) -> Any:
        return a if (a >= b or a != a) else b

    @staticmethod
    def clip(x: Any, lo: Any, hi: Any) -> Any:
        x = x if (x >= lo or x != x) else lo
        return x if (x <= hi or x != x) else hi

    log2 = staticmethod(math.log2)
    ceil = staticmethod(math.ceil)
    inf = math.inf

    @staticmethod
    def asarray(x: Any, dtype: Any = None) -> Any:
        # with a dtype: an input (a number or a one-element array), to a Python float
        if dtype is None or type(x) is float:
            return x
        return float(x) if isinstance(x, float | int) else float(np.asarray(x, dtype=float).reshape(-1)[0])

    any = staticmethod(bool)

    @staticmethod
    def full(shape: Any, v: Any) -> Any:
        return v

    @staticmethod
    def shape(x: Any) -> tuple[int, ...]:
        return ()

    @staticmethod
    def value(x: Any) -> float:
        return float(x) if isinstance(x, float | int) else float(np.asarray(x, dtype=float).reshape(-1)[0])


@dataclass(frozen=True)
class _Ctx:
    n: FloatArray
    a: FloatArray
    k: FloatArray
    up: FloatArray
    out: FloatArray
    raw_up: FloatArray
    nvls_efficiency: float | None
    s: FloatArray
    m: NcclModel
    arch: str | None = None
    up_extra: Num = 0.0  # per-hop latency the scale-up fabric adds (CommGroup.up_extra_latency_s)
    xp: Any = _NumpyOps  # _ScalarOps: every field a Python float
    raw_out: Any = 0.0  # NIC link rate per GPU, B/s (before efficiency and contention)
    version: tuple[int, int, int] | None = None  # NCCL release (None: the newest in NcclModel.net_search)
    nvls_link: float | None = None  # CommGroup.nvls_link_efficiency
    out_eff: float = 1.0  # the NIC's efficiency ``out`` carries: the group's measured overlay, else the model's
    # per-protocol channel shares and the LL cap, computed once per collective and shared by its candidates
    _memo: dict[object, Any] = field(default_factory=dict, compare=False, repr=False)

    @functools.cached_property
    def nvls(self) -> FloatArray:
        """NVLS all-reduce algbw of the domain (only the candidates that use NVLS ask for it)."""
        xp = self.xp
        m, a = self.m, self.a
        if self.nvls_efficiency is None:
            heads = xp.minimum(a, float(m.nvls_max_heads))
            shape = xp.maximum(heads - 1.0, 1.0) / heads / (1.0 + a / m.nvls_reduce_ranks)
            if self.nvls_link is None:
                return xp.asarray(self.raw_up * m.nvls_peak * shape)
            # a switch generation measured on 8 ranks, carried to ``a`` ranks by the same shape
            at8 = 7.0 / 8.0 / (1.0 + 8.0 / m.nvls_reduce_ranks)
            return xp.asarray(self.raw_up * self.nvls_link * shape / at8)
        return xp.asarray(self.raw_up * self.nvls_efficiency)

    def _search_nics(self, pattern_factor: Any) -> FloatArray:
        """NICs per domain NCCL's graph search gives channels to (see ``NcclModel.net_search``), at most
        the domain's GPUs (one NIC each); ``pattern_factor`` scales the NVLink total (NVLS: a/(a-1))."""
        xp = self.xp
        rows = self.m.net_search.get(self.arch or "")
        if not rows:
            return self.a
        if xp is _ScalarOps:
            one = _search_nics_one(
                rows, self.version, float(self.raw_out), float(self.raw_up), float(pattern_factor), float(self.a)
            )
            return cast(FloatArray, one)  # the scalar path runs on Python floats
        _, link, sheet, speeds = _search_row(rows, self.version)
        gbs = self.raw_out / 1e9
        if np.ndim(gbs) == 0:  # one NIC rate for the batch (the usual case): pick its speed once
            speed: Any = _nic_speed(speeds, float(gbs))
        else:
            speed = speeds[-1]
            for e in reversed(speeds):  # the fastest speed each NIC carries
                speed = xp.where(gbs >= e, e, speed)
        total = self.raw_up / 1e9 * (link / sheet) * pattern_factor
        need = xp.ceil(total / speed - 1e-9)  # channels until channels x speed >= the NVLink total
        return xp.asarray(xp.minimum(self.a, xp.maximum(need, 1.0)))

    @property
    def nics(self) -> FloatArray:
        """NICs per domain the ring and tree run over (NCCL's ring graph; the tree graph takes as many)."""
        got = self._memo.get("nics")
        if got is None:
            got = self._memo["nics"] = self._search_nics(1.0)
        return got

    @property
    def nvls_heads(self) -> FloatArray:
        """NVLS-tree heads per domain: one per NIC of NCCL's NVLS graph, at most ``nvls_max_heads``."""
        got = self._memo.get("nvls_heads")
        if got is None:
            xp = self.xp
            f = self.a / xp.maximum(self.a - 1.0, 1.0)
            got = xp.asarray(xp.minimum(self._search_nics(f), float(self.m.nvls_max_heads)))
            self._memo["nvls_heads"] = got
        return got


_SearchRow = tuple[tuple[int, int, int], float, float, tuple[float, ...]]


def _nic_speed(speeds: tuple[float, ...], gbs: float) -> float:
    """The fastest of the search's inter-node speeds (GB/s, fastest first) that a NIC of ``gbs`` carries."""
    return next((e for e in speeds if gbs >= e), speeds[-1])


def _search_row(rows: tuple[_SearchRow, ...], version: tuple[int, int, int] | None) -> _SearchRow:
    """The row of ``NcclModel.net_search`` in force at ``version`` (None: the newest)."""
    v = version or (1 << 30, 0, 0)
    return max((r for r in rows if r[0] <= v), key=lambda r: r[0], default=rows[0])


@functools.lru_cache(maxsize=1024)
def _search_nics_one(
    rows: tuple[_SearchRow, ...], version: tuple[int, int, int] | None, out: float, up: float, f: float, a: float
) -> float:
    """:meth:`_Ctx._search_nics` on Python floats (one collective; cached: a job repeats few groups)."""
    _, link, sheet, speeds = _search_row(rows, version)
    speed = _nic_speed(speeds, out / 1e9)
    need = math.ceil(up / 1e9 * (link / sheet) * f / speed - 1e-9)
    return min(a, max(float(need), 1.0))


# NCCL branches on the compute capability, not the product: every sm100+ GPU (Blackwell B200 / GB200 and
# Blackwell Ultra B300 / GB300, sm103) takes the same tables: tuning.cc ``compCapIndex = minCompCap >= 100 ?
# NCCL_BLACKWELL_COMPCAP_IDX``, search.cc ``ccMin >= 100 ? sm100SpeedArrayInter``, nvls.cc ``compCap >= 100``
_NCCL_ARCH = {"Blackwell Ultra": "Blackwell"}


def nccl_arch(architecture: str | None) -> str | None:
    """The architecture class NCCL's per-architecture tables use for a catalog ``architecture``."""
    return None if architecture is None else _NCCL_ARCH.get(architecture, architecture)


def _ctx(nbytes: Num, g: CommGroup, m: NcclModel, xp: Any = _NumpyOps) -> _Ctx:
    n = xp.asarray(g.size, dtype=float)
    a = xp.maximum(1.0, xp.minimum(xp.asarray(g.per_domain, dtype=float), xp.maximum(n, 1.0)))
    k = xp.maximum(1.0, n / a)
    raw_up = xp.asarray(g.scale_up_bw, dtype=float)
    up = raw_up * (m.up_efficiency if g.up_efficiency is None else g.up_efficiency)
    out_eff = m.out_efficiency if g.out_efficiency is None else g.out_efficiency
    out = (
        xp.asarray(g.scale_out_bw, dtype=float)
        * out_eff
        / xp.maximum(1.0, xp.asarray(g.scale_out_contention, dtype=float))
    )
    return _Ctx(
        n,
        a,
        k,
        up,
        out,
        raw_up,
        g.nvls_efficiency,
        xp.asarray(nbytes, dtype=float),
        m,
        nccl_arch(g.architecture),
        xp.value(g.up_extra_latency_s),
        xp,
        xp.asarray(g.scale_out_bw, dtype=float),
        nccl_version(g.nccl_version),
        g.nvls_link_efficiency,
        out_eff,
    )


def _channels_used(c: _Ctx, p: int) -> FloatArray:
    """Channels a message of ``c.s`` bytes fills with protocol ``p``: NCCL's per-channel minimum bytes each,
    between 1 and all; continuous, so the time never falls as the message grows (below C x min bytes the
    time is flat)."""
    xp = c.xp
    got = c._memo.get(("used", p))
    if got is None:
        got = c._memo[("used", p)] = xp.clip(c.s / c.m.channel_min_bytes[p], 1.0, float(c.m.channels))
    return got


def _channels(c: _Ctx, p: int) -> FloatArray:
    """Share of the bandwidth a message of ``c.s`` bytes gets: the channels it can fill / all channels."""
    got = c._memo.get(p)
    if got is None:
        got = c._memo[p] = c.xp.asarray(_channels_used(c, p) / c.m.channels)
    return got


def _ll_cap(c: _Ctx) -> FloatArray:
    xp = c.xp
    got = c._memo.get("ll_cap")
    if got is None:
        lo, two, many = c.m.ll_max_busbw
        got = c._memo["ll_cap"] = xp.asarray(xp.where(c.k <= 1, lo, xp.where(c.k <= 2, two, many)))
    return got


def _ring_common(op: str, c: _Ctx) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """The protocol-independent terms of a ring: (crosses, bw, factor x bytes, intra steps, inter steps)."""
    xp = c.xp
    key = ("ring", op == "all_reduce")
    got: Any = c._memo.get(key)
    if got is None:
        crosses = c.k > 1
        bw = xp.where(crosses, xp.minimum(c.up, c.nics * c.out), c.up)  # one ring per NIC NCCL uses
        ar = op == "all_reduce"
        factor = 2.0 * (c.n - 1.0) / c.n if ar else (c.n - 1.0) / c.n
        nsteps = 2.0 * (c.n - 1.0) if ar else c.n - 1.0
        inter_steps = xp.where(crosses, 2.0 * (c.k - 1.0) if ar else c.k - 1.0, 0.0)
        got = (crosses, bw, xp.asarray(factor * c.s), xp.asarray(nsteps - inter_steps), inter_steps)
        c._memo[key] = got
    return got


def _ring(op: str, c: _Ctx, p: int) -> FloatArray:
    xp = c.xp
    m = c.m
    crosses, bw, fs, intra_steps, inter_steps = _ring_common(op, c)
    busbw = bw * _channels(c, p)
    if p == 0:
        busbw = xp.minimum(busbw * m.ll_factor, _ll_cap(c))
    elif p == 1:
        busbw = busbw * m.ll128_factor
    overhead = m.net_overhead_s * (3.0 if p == 2 else 1.0)
    intra = xp.where(crosses, max(m.nvlink["ring"][p], overhead), m.nvlink["ring"][p])
    inter = xp.where(c.a <= 1, m.net["tree"][p], m.net["ring"][p])  # ppn = 1: NCCL uses the tree latency
    lat = m.base["ring"][p] + intra_steps * (intra + c.up_extra) + inter_steps * inter
    return xp.asarray(fs / busbw + lat)


def _tree_inter(c: _Ctx, nvls: bool = False) -> FloatArray:
    """Seconds per byte of the per-rank buffer on each NIC for a double binary tree over the domains,
    on the NICs of NCCL's tree graph (``nvls``: of its NVLS graph, one per head)."""
    xp = c.xp
    got = c._memo.get(("tree_inter", nvls))
    if got is None:
        # the busiest node of a double binary tree: one child and a parent's worth (2 domains), root of
        # one tree and leaf of the other (3), interior in one tree and leaf in the other (4 or more)
        ck = xp.where(c.k <= 2, 1.0, xp.where(c.k < 4, 1.5, 2.0))
        nics = c.nvls_heads if nvls else c.nics
        got = c._memo[("tree_inter", nvls)] = xp.asarray(ck / (nics * c.out))
    return got


def _tree_fill(c: _Ctx, p: int, per_byte: FloatArray) -> FloatArray:
    """Seconds the first chunk of each channel takes down and up the tree: 2 x the chunk-times of its
    hops, each hop at its own link's per-channel share: a-1 NVLink hops inside the domain, log2 k NIC hops
    across (``per_byte``, the time per byte over the channels in use, is the slower of the two). A
    pipeline fills at each stage's own rate; only the steady state runs at the slowest one's."""
    xp = c.xp
    m = c.m
    used = _channels_used(c, p)
    per_channel = c.s / used
    chunk = xp.asarray(m.tree_chunk_bytes[p])
    if p == 1:
        steps = 1.0 + xp.log2(c.k) + 0.1 * c.a
        chunk = xp.clip(per_channel / (steps * 16.0 / c.a), m.tree_ll128_min_chunk_bytes, chunk)
    chunk = xp.minimum(chunk, per_channel)
    inter = _tree_inter(c)
    hops = ((c.a - 1.0) * (2.0 / c.up) + xp.log2(c.k) * inter) / xp.maximum(2.0 / c.up, inter)
    return xp.asarray(2.0 * hops * chunk * used * per_byte)


def _tree(c: _Ctx, p: int) -> FloatArray:
    xp = c.xp
    m = c.m
    per_byte = xp.maximum(2.0 / c.up, _tree_inter(c)) / m.tree_factor / _channels(c, p)
    if p == 0:
        per_byte = xp.maximum(per_byte / m.tree_ll_factor, 1.0 / _ll_cap(c))
    elif p == 1:
        per_byte = per_byte / (120.0 / 128.0)
    lat = m.base["tree"][p] + 2.0 * ((c.a - 1.0) * m.nvlink["tree"][p] + xp.log2(c.k) * m.net["tree"][p])
    return xp.asarray(xp.where(c.k > 1, c.s * per_byte + _tree_fill(c, p, per_byte) + lat, xp.inf))


def _nvls_fill(c: _Ctx) -> FloatArray:
    """Bytes of the NVLS pipeline's first loop (at most the message itself)."""
    xp = c.xp
    one, several = c.m.nvls_channels_by_arch.get(c.arch or "", (c.m.nvls_channels, c.m.nvls_channels))
    if c.version is not None and c.version < c.m.nvls_one_domain_channels_from:
        one = several  # an older release ran one domain on the multi-node count
    channels = xp.where(c.k <= 1, float(one), float(several))
    return xp.asarray(xp.minimum(c.s, c.a * channels * c.m.nvls_chunk_bytes))


def _nvls(c: _Ctx) -> FloatArray:
    xp = c.xp
    m = c.m
    t = (c.s + _nvls_fill(c)) / (c.nvls * _channels(c, 2)) + m.nvlink["nvls"][2]
    return xp.asarray(xp.where(c.k <= 1, t, xp.inf))


def _nvls_tree_cap(c: _Ctx) -> FloatArray:
    """NCCL's ceiling on NVLS-tree all-reduce algbw: heads (one per NIC, at most ``nvls_max_heads``) x the
    per-channel bus bandwidth cap of the architecture and node count, converted to algbw (x n / 2(n-1))."""
    xp = c.xp
    caps = c.m.nvls_tree_max_bw_per_channel.get(c.arch or "")
    if caps is None:
        return xp.asarray(xp.full(xp.shape(c.k), xp.inf))
    per_ch = xp.where(c.k <= 2, caps[1], caps[2])
    return xp.asarray(c.nvls_heads * per_ch * c.n / (2.0 * xp.maximum(c.n - 1.0, 1.0)))  # n = 1: no collective


def _nvls_tree(c: _Ctx) -> FloatArray:
    xp = c.xp
    m = c.m
    inter = _tree_inter(c, nvls=True)
    per_byte = xp.maximum(xp.maximum(1.0 / c.nvls, inter), 1.0 / _nvls_tree_cap(c)) / _channels(c, 2)
    lat = m.nvlink["nvls_tree"][2] + 2.0 * xp.log2(c.k) * m.net["nvls_tree"][2]
    # the fabric sits between the in-switch reduce and the multicast: each fills its own pipeline
    fill = 2.0 * _nvls_fill(c) / (c.nvls * _channels(c, 2))
    return xp.asarray(xp.where(c.k > 1, c.s * per_byte + fill + lat, xp.inf))


def _collnet(c: _Ctx, nvls: bool) -> FloatArray:
    xp = c.xp
    m = c.m
    intra = 1.0 / c.nvls if nvls else 2.0 * (c.a - 1.0) / c.a / c.up
    per_byte = xp.maximum(intra, 1.0 / (c.a * c.out)) / m.collnet_factor / _channels(c, 2)
    lat = 2.0 * xp.minimum(1.0, c.a - 1.0) * m.nvlink["collnet"][2] + (c.a - 1.0) * 0.4e-6 + m.net["collnet"][2]
    return xp.asarray(xp.where(c.k > 1, c.s * per_byte + lat, xp.inf))


def _collnet_chain_chunk(c: _Ctx) -> FloatArray:
    """NCCL's CollNet-chain chunk (enqueue.cc, 2.18-2.27): 256 KiB, halved while each channel gets fewer
    than depth x 64 (down to 128 KiB), depth x 8 (64 KiB) and depth (32 KiB) chunks; depth = ranks per
    domain (``collnetChain.depth = nRanks / nNodes``, connect.cc); channels as :func:`_channels` uses."""
    xp = c.xp
    used = _channels_used(c, 2)
    chunk = xp.asarray(c.m.collnet_chain_chunk_bytes)
    for times, floor in ((64.0, 131072.0), (8.0, 65536.0), (1.0, 32768.0)):
        # each of NCCL's three halving loops starts above its floor by one halving at most
        short = (c.s / (used * chunk) < c.a * times) & (chunk > floor)
        chunk = xp.where(short, chunk / 2.0, chunk)
    return xp.asarray(xp.minimum(chunk, c.s / used))


def _collnet_chain(c: _Ctx) -> FloatArray:
    """CollNet chain (NCCL_ALGO=CollNetChain; all_reduce.h): per channel the domain's ranks form a chain
    whose head is a rank with a NIC; the partial sums climb the chain, the head's go to the switch
    (IB SHARP) and the result comes back down it. A middle rank receives and sends every byte on the
    way up and again on the way down, the head and the tail once each way; the channels' heads rotate
    over the NICs, so a GPU's NVLink carries 2(a-1)/a of the buffer each way and each of the ``nics``
    heads' NICs 1/nics of it. NCCL's tuner applies no CollNet-Direct factor to the chain (tuning.cc).

    Fill: a middle rank's link, the busiest, is idle until the first chunk has climbed to it and again
    while its last chunk goes up to the switch and back down past it: about 2a sends of one chunk at
    the channel's share of the link (a send is not slowed by the other pass while that pass is idle)."""
    xp = c.xp
    m = c.m
    per_byte = xp.maximum(2.0 * (c.a - 1.0) / c.a / c.up, 1.0 / (c.nics * c.out)) / _channels(c, 2)
    # a channel moves 1/channels of the link (fewer channels in use: less bandwidth, as _channels has it)
    fill = 2.0 * c.a * _collnet_chain_chunk(c) * float(m.channels) / c.up
    lat = m.base["collnet_chain"][2] + 2.0 * (c.a - 1.0) * m.nvlink["collnet_chain"][2] + m.net["collnet_chain"][2]
    return xp.asarray(xp.where(c.k > 1, c.s * per_byte + fill + lat, xp.inf))


def _pat(c: _Ctx) -> FloatArray:
    xp = c.xp
    m = c.m
    t = (c.n - 1.0) / c.n * c.s / (c.out * m.pat_factor * _channels(c, 2))
    lat = 8e-6 + xp.log2(c.k) * m.net["tree"][2] / 3.5 + c.n * 2.8e-6
    return xp.asarray(xp.where((c.a <= 1) & (c.k > 1), t + lat, xp.inf))


def _hierarchical(op: str, c: _Ctx, g: CommGroup) -> FloatArray:
    """Reduce-scatter in the domain, all-reduce of the 1/a shard across domains, all-gather in the
    domain, one after the other (no pipelining): what a framework composing three NCCL calls gets."""
    a, k, s, up, out = c.a, c.k, c.s, c.up, c.out
    ul, ol = g.scale_up_latency_s, g.scale_out_latency_s
    if op == "all_reduce":
        ring_inner = 2.0 * (a - 1.0) / a * s / up + 2.0 * (a - 1.0) * ul
        inner = s / c.nvls + 2.0 * ul if g.scale_up_reduction else ring_inner
        if g.in_network_reduction:
            outer = s / a / out + 2.0 * np.log2(k) * ol
        else:
            outer = 2.0 * (k - 1.0) / k * (s / a) / out + 2.0 * (k - 1.0) * ol
        return np.asarray(inner + outer)
    inner = (a - 1.0) / a * s / up + (a - 1.0) * ul
    outer = (k - 1.0) / k * (s / a) / out + (k - 1.0) * ol
    return np.asarray(inner + outer)


def _p2p_per_peer(c: _Ctx) -> FloatArray:
    """Bytes a rank sends to each peer (its own share included) in an all-to-all of ``c.s`` bytes."""
    return c.xp.asarray(c.xp.maximum(c.s / c.xp.maximum(c.n, 1.0), 1.0))


def _p2p_parts(c: _Ctx) -> FloatArray:
    """Parts (channels) NCCL cuts each peer's share into for an all-to-all inside one domain (see
    ``NcclModel.p2p_chunk_bytes``; enqueue.cc addP2pToPlan / scheduleP2pTasksToPlan); computed once per
    collective (the drain and the copy bound both read it)."""
    got = c._memo.get("p2p_parts")
    if got is not None:
        return cast(FloatArray, got)
    xp, m, n = c.xp, c.m, c.n
    chans = float(m.channels)
    chunk = m.p2p_chunk_bytes
    per_peer = _p2p_per_peer(c)
    # parts per peer at least: the largest power of 2 with parts x ranks <= channels, >= 1
    lo = xp.clip(2.0 ** -xp.ceil(-xp.log2(chans / xp.maximum(n, 1.0)) - 1e-9), 1.0, chans)
    start = xp.minimum(lo, xp.ceil(per_peer / (chunk * m.p2p_min_part_chunks) - 1e-9))
    # doubled while a part exceeds p2p_max_part_chunks chunks, up to every channel
    grow = xp.maximum(xp.ceil(xp.log2(per_peer / (start * chunk * m.p2p_max_part_chunks)) - 1e-9), 0.0)
    got = c._memo["p2p_parts"] = xp.asarray(xp.minimum(start * 2.0**grow, chans))
    return cast(FloatArray, got)


def _p2p_drain(c: _Ctx) -> FloatArray:
    """Time an all-to-all inside one NVLink domain loses draining NCCL's send/recv pipeline (see
    ``NcclModel.p2p_chunk_bytes``): a channel's batch ends when its parts' receivers have copied their
    last chunk out of the FIFO, after the link has sent it, and the next batch starts only then. The
    parts of a batch start together and carry equal bytes, so the link idles for one chunk (or the
    whole part, if smaller) per batch, copied at the pace the receivers kept: the part's share of the
    link. Returns that idle time (s) for ranks in one domain, 0 across domains (NCCL chunks and splits
    network peers differently: P2P_NET_CHUNKSIZE, parts of at most one chunk)."""
    xp, m, n = c.xp, c.m, c.n
    chans = float(m.channels)
    chunk = m.p2p_chunk_bytes
    per_peer = _p2p_per_peer(c)
    per = _p2p_parts(c)
    part = xp.maximum(chunk * m.p2p_min_part_chunks, per_peer / per)
    parts = n * per  # the rank's own share is a part too (a local copy in the same batches)
    slots = chans * m.p2p_works_per_batch
    batches = xp.maximum(xp.ceil(parts / slots - 1e-9), 1.0)
    # one chunk of every remote part in flight, at the part's share of the link
    active = xp.minimum(parts, slots) * (n - 1.0) / xp.maximum(n, 1.0)
    drain = batches * active * xp.minimum(chunk, part) / c.up
    return xp.asarray(xp.where(n > c.a, 0.0, drain))


def _p2p_copy_bw(c: _Ctx) -> FloatArray:
    """NVLink bytes a GPU can move per second in an all-to-all inside one domain, as the CTAs of NCCL's
    send/recv kernel copy them (see ``NcclModel.p2p_channel_copy_bw``): busy channels x one CTA's copy
    rate x (n-1)/(2n-1), the NVLink bytes among the bytes a GPU's CTAs copy. ``inf`` where the
    architecture has no rate, for one rank, and for ranks across domains."""
    xp, m, n = c.xp, c.m, c.n
    rate = m.p2p_channel_copy_bw.get(c.arch or "")
    if rate is None:
        return xp.asarray(xp.full(xp.shape(n), xp.inf))
    # a round's parts sit on consecutive channels from its base, the bit-reversed round
    # (channel.h ncclP2pChannelBaseForRound), so the n rounds' parts spread over every channel; below
    # one part per minimum part size (chunk / 8) a peer fills fewer, taken continuously so the time
    # never falls as the message grows
    fill = xp.maximum(_p2p_per_peer(c) / (m.p2p_chunk_bytes * m.p2p_min_part_chunks), 1.0)
    busy = xp.minimum(n * xp.minimum(_p2p_parts(c), fill), float(m.channels))
    bw = busy * rate * (n - 1.0) / xp.maximum(2.0 * n - 1.0, 1.0)
    # one rank (only its own copy) or ranks across domains: no NVLink copy bound here
    return xp.asarray(xp.where((n > c.a) | (n <= 1.0), xp.inf, bw))


def all_to_all_nic_share(
    n: Any, a: Any, cal: Calibration, xp: Any = np, hybridep: Any = 0.0, out_efficiency: float | None = None
) -> Any:
    """An all-to-all's NIC rate over the NIC's achieved point-to-point rate, for ``n`` ranks ``a`` per domain.

    Across two domains the exchange is point to point: NCCL sends to one remote node per round
    (init.cc p2pSchedule, node deltas in the outer loop), so however the channels drift no NIC hears
    from two domains, and it runs at the NIC's ring-hop share (1). Across more, rounds that drift
    apart overlap, many to many: the measured all-to-all share (``a2a_efficiency``, fit on 6 nodes)
    over the ring-hop one (``scale_out_efficiency``). Where ``hybridep`` is set (> 0), HybridEP's RDMA
    path runs at its own measured share of the line rate (``hybridep_rdma_share_pair`` across two
    domains, ``hybridep_rdma_share`` across more) over the ring-hop one (``out_efficiency``: a measured
    overlay's, else the calibration's)."""
    pair = n <= 2.0 * a
    share = xp.where(pair, 1.0, cal.a2a_efficiency / cal.scale_out_efficiency)
    hyb = xp.asarray(hybridep, dtype=float)
    if xp.any(hyb > 0.0):
        oe = cal.scale_out_efficiency if out_efficiency is None else out_efficiency
        own = xp.where(pair, cal.hybridep_rdma_share_pair, cal.hybridep_rdma_share) / oe
        share = xp.where(hyb > 0.0, own, share)
    return share


def _all_to_all(c: _Ctx, g: CommGroup) -> FloatArray:
    xp = c.xp
    # Each rank sends nbytes/n to every peer: (a-1)/n of its buffer over the scale-up links and
    # (n-a)/n over its NIC; the two proceed in parallel, so the slower one sets the time.
    n, a, s, up, out = c.n, xp.minimum(c.a, c.n), c.s, c.up, c.out
    # HybridEP's RDMA path at its own measured share of the line rate (``out`` carries NCCL's efficiency)
    eff = all_to_all_nic_share(n, a, g.cal, xp, g.hybridep, c.out_eff)
    dedup = xp.asarray(g.remote_dedup, dtype=float)
    # inside one domain NCCL's send/recv CTAs may copy slower than the links carry (_p2p_copy_bw)
    up = xp.minimum(up, _p2p_copy_bw(c))
    # deduplicated copies arrive once per domain and are forwarded to the other ranks over NVLink
    t_up = (a - 1.0) / n * s / up + xp.where(dedup < 1.0, (n - a) / n * s / up, 0.0)
    t_out = (n - a) / n * s * dedup / (out * eff)
    lat = (
        xp.where(n > a, (n - a) * g.scale_out_latency_s / xp.maximum(a, 1.0), 0.0)
        + (a - 1.0) * xp.value(g.scale_up_latency_s) / 4.0
    )
    return xp.asarray(xp.maximum(t_up, t_out) + lat + _p2p_drain(c))


def _send_recv(c: _Ctx, g: CommGroup) -> FloatArray:
    xp = c.xp
    same = c.k <= 1
    up_lat = xp.value(g.scale_up_latency_s)
    return xp.asarray(xp.where(same, c.s / c.up + up_lat, c.s / c.out + g.scale_out_latency_s))


def collective_candidates(
    op: str, nbytes: Num, group: CommGroup, *, model: NcclModel | None = None
) -> dict[tuple[str, str], FloatArray]:
    """Time (s, without the launch cost) of every (algorithm, protocol) NCCL could run for ``op``;
    impossible ones are absent or ``inf``. all-to-all, broadcast and send/recv have one entry."""
    if op not in OPS:
        raise ValueError(f"op = {op!r}: must be one of {', '.join(OPS)}")
    m = model or _model_for(group)
    return _candidates(op, _ctx(nbytes, group, m), group, prune=False)


def _candidates(op: str, c: _Ctx, group: CommGroup, *, prune: bool) -> dict[tuple[str, str], FloatArray]:
    """:func:`collective_candidates` on a resolved context; ``prune`` leaves out the candidates that
    are impossible (``inf``) for every element (they can never be the cheapest)."""
    out: dict[tuple[str, str], FloatArray] = {}
    if op == "all_to_all":
        return {("pairwise", "Simple"): _all_to_all(c, group)}
    if op == "send_recv":
        return {("p2p", "Simple"): _send_recv(c, group)}
    if op == "broadcast":
        # pipelined ring broadcast: bandwidth ~ one pass over the slowest hop
        for p, name in enumerate(PROTOCOLS):
            out[("ring", name)] = _ring("all_gather", c, p) * c.n / c.xp.maximum(c.n - 1.0, 1.0)
        return out
    for p, name in enumerate(PROTOCOLS):
        out[("ring", name)] = _ring(op, c, p)
    xp = c.xp
    multi = not prune or bool(xp.any(c.k > 1))  # tree, NVLS-tree, CollNet and PAT need several domains
    if op == "all_reduce":
        if multi:
            for p, name in enumerate(PROTOCOLS):
                out[("tree", name)] = _tree(c, p)
        if group.scale_up_reduction:
            if not prune or bool(xp.any(c.k <= 1)):
                out[("nvls", "Simple")] = _nvls(c)
            if multi:
                out[("nvls_tree", "Simple")] = _nvls_tree(c)
        if group.in_network_reduction and multi:
            out[("collnet", "Simple")] = _collnet(c, group.scale_up_reduction)
            out[("collnet_chain", "Simple")] = _collnet_chain(c)
    elif not prune or bool(xp.any((c.a <= 1) & (c.k > 1))):
        out[("pat", "Simple")] = _pat(c)
    return out


# NCCL_ALGO's names (src/enqueue.cc ncclAlgoStr, case-insensitive) for wanka's
NCCL_ALGO_NAMES = {"collnetdirect": "collnet", "collnetchain": "collnet_chain", "nvlstree": "nvls_tree"}


def algorithm_name(text: str) -> str:
    """``auto``, one of :data:`ALGORITHMS`, or NCCL_ALGO's name for one (Ring, Tree, CollNetDirect,
    CollNetChain, NVLS, NVLSTree, PAT), as wanka names it; ValueError for anything else."""
    key = str(text).strip().lower()
    name = NCCL_ALGO_NAMES.get(key, key)
    if name != "auto" and name not in ALGORITHMS:
        raise ValueError(
            f"= {str(text)[:40]!r}: must be auto, one of {', '.join(ALGORITHMS)}, or an NCCL_ALGO name "
            "(Ring, Tree, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT)"
        )
    return name


def forced_algorithm_problem(algorithm: str, op: str, group: CommGroup) -> str | None:
    """Why ``group`` cannot run ``op`` with the forced ``algorithm`` (the switch that turns it on), or None."""
    if algorithm in ("collnet", "collnet_chain") and not group.in_network_reduction:
        return f"= {algorithm}: CollNet needs fabric SHARP (in-network reduction)"
    if algorithm in ("nvls", "nvls_tree") and not group.scale_up_reduction:
        return f"= {algorithm}: needs NVLink SHARP (NVLS) in the scale-up domain"
    if algorithm in ("collnet", "collnet_chain", "tree", "nvls_tree") and op != "all_reduce":
        return f"= {algorithm}: NCCL runs it for all_reduce only, not {op}"
    # where the candidates are infinite (_candidates): across domains only, inside one only, one rank a domain
    a = float(np.min(np.minimum(group.per_domain, np.maximum(group.size, 1))))
    k = float(np.max(group.domains))
    if algorithm in ("collnet", "collnet_chain", "tree", "nvls_tree") and k <= 1:
        return f"= {algorithm}: NCCL runs it across scale-up domains; these ranks sit in one ({a:g} per domain)"
    if algorithm == "nvls" and k > 1:
        return "= nvls: NCCL runs it inside one scale-up domain (across domains: nvls_tree)"
    if algorithm == "pat" and (a > 1 or k <= 1):
        return f"= pat: NCCL runs it with one rank in each of several scale-up domains ({a:g} per domain)"
    return None


def _model_for(group: CommGroup) -> NcclModel:
    return DEFAULT_MODEL if group.calibration is None else NcclModel.from_calibration(group.calibration)


# below this many elements a batch is timed element by element: finding the distinct ones costs more
_DEDUP_MIN = 256


_HASH_BITS = 20  # slots of the table that numbers distinct rows (2**20: a few collisions in a thousand rows)
_MIX = np.uint64(0x9E3779B97F4A7C15)


_TABLES = threading.local()


def _slot_table() -> npt.NDArray[np.intp]:
    """This thread's table of ``2**_HASH_BITS`` slots (allocated once; every slot read is written first)."""
    table = getattr(_TABLES, "table", None)
    if table is None or table.size != 1 << _HASH_BITS:
        table = _TABLES.table = np.empty(1 << _HASH_BITS, dtype=np.intp)
    return table


def _distinct_rows(cols: list[FloatArray]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]] | None:
    """``(rep, inverse)`` such that ``col[rep][inverse] == col`` for every column, bit for bit, when the
    rows repeat enough to be worth it; None otherwise. Rows are numbered by a hash of their bits in a
    table of ``2**_HASH_BITS`` slots (no sort); a collision, caught by the checks, falls back to a sort."""
    n = cols[0].shape[0]
    with np.errstate(over="ignore"):
        key = cols[0].view(np.uint64) * _MIX
        for q, col in enumerate(cols[1:]):
            key = key + col.view(np.uint64) * np.uint64(0xBF58476D1CE4E5B9 + 2 * q)
        key = (key ^ (key >> np.uint64(31))) * _MIX
    slot = (key >> np.uint64(64 - _HASH_BITS)).astype(np.intp)
    number = _slot_table()
    rows = np.arange(n)
    number[slot] = rows  # one row of each slot stays written there: its representative
    rep = np.flatnonzero(number[slot] == rows)
    if rep.size * 4 > n:
        return None
    number[slot[rep]] = np.arange(rep.size)
    inverse = number[slot]
    if not np.array_equal(key[rep][inverse], key):  # two distinct keys share a slot: number them by sorting
        uniq = np.unique(key)
        inverse = np.searchsorted(uniq, key)
        rep = np.empty(uniq.size, dtype=np.intp)
        rep[inverse] = np.arange(n)
    for col in cols:
        if not np.array_equal(col[rep][inverse], col):
            return None
    return rep, inverse


def collective_time(
    op: str,
    nbytes: Num,
    group: CommGroup,
    algorithm: str = "auto",
    *,
    protocol: str = "auto",
    model: NcclModel | None = None,
) -> CollectiveResult:
    """Time of one collective on ``group``: the cheapest (algorithm, protocol) of NCCL's tuning model,
    or the one named (``algorithm`` in :data:`ALGORITHMS`, ``protocol`` in :data:`PROTOCOLS`).

    >>> g = CommGroup(size=8, per_domain=8, scale_up_bw=450e9, scale_out_bw=50e9)
    >>> r = collective_time("all_reduce", 2**30, g)
    >>> round(float(r.busbw) / 1e9), r.algorithm, r.protocol  # DGX H100 NVLink all-reduce, GB/s
    (356, 'ring', 'Simple')
    """
    # a batch of strategies repeats few (bytes, group) combinations: time each distinct one once
    s = np.asarray(nbytes, dtype=float)
    arrays: dict[str, Any] = {f: v for f, v in vars(group).items() if isinstance(v, np.ndarray) and v.ndim}
    if s.ndim == 1 and s.size >= _DEDUP_MIN and all(v.shape == s.shape for v in arrays.values()):
        cols = [s] + [np.asarray(v, dtype=float) for v in arrays.values()]
        found = _distinct_rows([np.ascontiguousarray(c) for c in cols])
        if found is not None:
            rep, inverse = found
            sub = replace(group, **{f: v[rep] for f, v in arrays.items()})
            r = _collective_time_all(op, s[rep], sub, algorithm, protocol=protocol, model=model)
            assert r.choice is not None
            flat = np.asarray(r.choice)[inverse]
            counts = np.bincount(flat, minlength=len(r.choices))
            algo, proto = r.choices[int(counts.argmax())]
            return CollectiveResult(
                op,
                nbytes,
                group.size,
                np.asarray(r.time_s)[inverse],
                np.asarray(r.algbw)[inverse],
                np.asarray(r.busbw)[inverse],
                algo,
                proto,
                flat,
                r.choices,
            )
    if algorithm == "auto" and protocol == "auto" and s.size == 1 and all(v.size == 1 for v in arrays.values()):
        one = _collective_time_one(op, nbytes, group, model, shaped=s.ndim == 1 or bool(arrays))
        if one is not None:
            return one
    return _collective_time_all(op, nbytes, group, algorithm, protocol=protocol, model=model)


def _collective_time_one(
    op: str, nbytes: Num, group: CommGroup, model: NcclModel | None, *, shaped: bool
) -> CollectiveResult | None:
    """:func:`collective_time` of one collective (``auto`` algorithm and protocol) in Python floats;
    ``shaped``: return one-element arrays, as numpy would. None where the floats raise (a division
    by zero, a log of 0): numpy's path gives the infinities there."""
    if op not in OPS:
        raise ValueError(f"op = {op!r}: must be one of {', '.join(OPS)}")
    m = model or _model_for(group)
    xp = _ScalarOps
    try:
        c = _ctx(nbytes, group, m, xp)
        cands = _candidates(op, c, group, prune=True)
    except (ZeroDivisionError, ValueError, OverflowError):
        return None
    keys = list(cands)
    vals = [cands[key] for key in keys]
    # np.argmin: the first NaN, else the first smallest
    best = next((i for i, v in enumerate(vals) if v != v), None)
    if best is None:
        best = min(range(len(vals)), key=vals.__getitem__)
    algo, proto = keys[best]
    s, n = c.s, c.n
    t = 0.0 if n <= 1 else vals[best] + m.launch_s
    algbw = s / t if t > 0 else 0.0
    busbw = float(algbw * bus_factor(op, xp.maximum(n, 1.0)))
    if not shaped:
        return CollectiveResult(op, nbytes, group.size, float(t), float(algbw), busbw, algo, proto)
    return CollectiveResult(
        op,
        nbytes,
        group.size,
        np.array([t], dtype=float),
        np.array([algbw], dtype=float),
        np.array([busbw], dtype=float),
        algo,
        proto,
        np.array([best], dtype=np.intp),
        tuple(keys),
    )


def _collective_time_all(
    op: str,
    nbytes: Num,
    group: CommGroup,
    algorithm: str = "auto",
    *,
    protocol: str = "auto",
    model: NcclModel | None = None,
) -> CollectiveResult:
    """:func:`collective_time` over every element (no deduplication)."""
    if op not in OPS:
        raise ValueError(f"op = {op!r}: must be one of {', '.join(OPS)}")
    m = model or _model_for(group)
    s = np.asarray(nbytes, dtype=float)
    n = np.asarray(group.size, dtype=float)
    cands = _candidates(op, _ctx(s, group, m), group, prune=algorithm == "auto")
    if algorithm == "hierarchical" and op in ("all_reduce", "all_gather", "reduce_scatter"):
        cands = {("hierarchical", "Simple"): _hierarchical(op, _ctx(s, group, m), group)}
    elif algorithm != "auto":
        names = sorted({a for a, _ in cands} | ({"hierarchical"} if op in _HIER_OPS else set()))
        picked = {key: v for key, v in cands.items() if key[0] == algorithm}
        if not picked:
            raise ValueError(f"algorithm = {algorithm!r} is not available for {op}; use {', '.join(names)}")
        cands = picked
    if protocol != "auto":
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol = {protocol!r}: must be one of auto, {', '.join(PROTOCOLS)}")
        picked = {key: v for key, v in cands.items() if key[1] == protocol}
        if not picked:
            raise ValueError(f"protocol = {protocol!r} is not available for {op} with algorithm {algorithm!r}")
        cands = picked
    keys = list(cands)
    stack = np.stack(np.broadcast_arrays(*[np.asarray(cands[key], dtype=float) for key in keys]))
    best = np.argmin(stack, axis=0)
    t = np.min(stack, axis=0)
    flat = np.ravel(best)
    counts = np.bincount(flat, minlength=len(keys))
    algo, proto = keys[int(counts.argmax())]
    single = n <= 1
    t = np.where(single, 0.0, np.asarray(t) + m.launch_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        algbw = np.where(t > 0, s / np.where(t > 0, t, 1.0), 0.0)
    busbw = algbw * bus_factor(op, np.maximum(n, 1.0))
    if np.ndim(t) == 0:
        return CollectiveResult(op, nbytes, group.size, float(t), float(algbw), float(busbw), algo, proto)
    return CollectiveResult(op, nbytes, group.size, t, algbw, busbw, algo, proto, flat, tuple(keys))


_HIER_OPS = ("all_reduce", "all_gather", "reduce_scatter")
