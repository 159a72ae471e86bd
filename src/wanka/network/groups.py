"""Communicators of a parallel job laid out on a cluster (Megatron rank order tp → cp → dp → pp)."""

from __future__ import annotations

from wanka import npx as np  # numpy, with fast paths for one group (numbers, not arrays)
from wanka.calibration import Calibration
from wanka.catalog import ScaleUpFabric, accelerator, cluster_scale_up_fabric
from wanka.network.collectives import CommGroup, Num
from wanka.spec.cluster import ClusterSpec
from wanka.units import GIGA, gbps_to_bytes_per_s

__all__ = [
    "comm_group",
    "fabric_contention",
    "fabric_slowdowns",
    "full_mesh_share",
    "scale_out_bw",
    "scale_up_bw",
    "scale_up_fabric_of",
    "scale_up_path",
]


def scale_up_fabric_of(cluster: ClusterSpec) -> ScaleUpFabric | None:
    """The catalog fabric the cluster's scale-up domain names; where it names none, the full mesh its
    accelerators are built into at that domain size (``catalog.default_scale_up_fabric``: an 8-GPU xGMI or
    HCCS board has no switch, so a 2-rank group gets one link of seven); else None, the legacy switched
    one-number domain."""
    return cluster_scale_up_fabric(cluster.scale_up.fabric, cluster.accelerator, cluster.scale_up.domain_size)


def scale_up_bw(cluster: ClusterSpec) -> float:
    """Per-GPU one-direction scale-up bandwidth, B/s (spec override, else the fabric's, else catalog)."""
    return _scale_up_bw(cluster, scale_up_fabric_of(cluster))


def _scale_up_bw(cluster: ClusterSpec, fab: ScaleUpFabric | None) -> float:
    if cluster.scale_up.gbytes_per_s_per_direction is not None:
        return cluster.scale_up.gbytes_per_s_per_direction * GIGA
    if fab is not None:
        return fab.bandwidth
    return accelerator(cluster.accelerator).scale_up_bandwidth


def scale_up_path(cluster: ClusterSpec, per_domain: Num, stride: Num) -> tuple[Num, Num]:
    """``(share, extra latency s)`` of a group with ``per_domain`` ranks ``stride`` apart in one domain.

    ``share`` is the part of a GPU's scale-up bandwidth the group can use and ``extra`` the latency per
    hop beyond the calibrated single-tier one, from the cluster's fabric:

    * full mesh of ``D`` GPUs: one link per peer, so ``a`` ranks use ``(a-1)/(D-1)`` of it (collective
      libraries do not forward through a third GPU);
    * switched with a first tier of ``F`` GPUs: a group whose ranks span more than ``F`` consecutive
      GPUs (``(a-1)·stride + 1 > F``) crosses the upper tier, at its bandwidth fraction and latency.

    Without a fabric (or inside one switched tier) the share is 1 and the extra 0: the legacy domain.
    """
    fab = scale_up_fabric_of(cluster)
    return _scale_up_path(cluster, fab, per_domain, stride)


def full_mesh_share(per_domain: Num, domain_size: float) -> Num:
    """The share of a GPU's scale-up bandwidth a group of ``per_domain`` ranks of a full mesh of
    ``domain_size`` GPUs uses: one link per peer, ``a-1`` of ``D-1`` (1 for one rank)."""
    a = np.asarray(per_domain, dtype=float)
    peers = max(float(domain_size) - 1.0, 1.0)
    return np.where(a > 1.0, np.minimum(a - 1.0, peers) / peers, 1.0)


def _scale_up_path(cluster: ClusterSpec, fab: ScaleUpFabric | None, per_domain: Num, stride: Num) -> tuple[Num, Num]:
    a = np.maximum(1.0, np.asarray(per_domain, dtype=float))
    if fab is None:
        return 1.0, 0.0
    d = float(cluster.scale_up.domain_size)
    if fab.topology == "full_mesh":
        share = full_mesh_share(a, d)
        return (share if np.ndim(share) else float(share)), 0.0
    first = float(min(fab.first_tier_size, cluster.scale_up.domain_size))
    span = (a - 1.0) * np.asarray(stride, dtype=float) + 1.0
    upper = (span > first) & (a > 1.0)
    share = np.where(upper, fab.upper_tier_bandwidth_fraction, 1.0)
    extra = np.where(upper, fab.upper_tier_latency_s, 0.0)
    if np.ndim(share):
        return share, extra
    return float(share), float(extra)


def scale_out_bw(cluster: ClusterSpec) -> float:
    """Per-GPU one-direction scale-out (NIC) bandwidth, B/s, summed over planes."""
    return gbps_to_bytes_per_s(cluster.fabric.nic_gbps_per_gpu)


def fabric_contention(cluster: ClusterSpec, domains_spanned: Num) -> Num:
    """Slow-down of fabric traffic from leaf oversubscription once a group leaves one leaf.

    A first cut: oversubscription ``o`` divides uplink bandwidth by ``o`` for traffic that leaves the
    leaf; groups inside one scale-up domain never touch the fabric. Flow-level contention (ECMP hash
    collisions) is added by the topology layer.
    """
    o = cluster.fabric.oversubscription
    return np.where(np.asarray(domains_spanned) > 1, o, 1.0) if o > 1 else 1.0


def fabric_slowdowns(cluster: ClusterSpec, *, all_to_all: bool = True) -> tuple[float, float, str]:
    """Flow-model slowdowns (>= 1) of the fabric part of ring collectives and of all-to-all.

    From :func:`wanka.network.flow.contention_factor` on two canonical patterns of the whole cluster,
    all running at once: a ring through one GPU of every node on every rail (the data-parallel
    pattern) and 64-rank all-to-all groups (expert parallelism across nodes). They include leaf
    oversubscription and ECMP hash collisions (with the fabric's ``qps_per_connection``), so they
    replace :func:`fabric_contention`. Returns ``(ring, all_to_all, note)``. A fabric that cannot be
    built raises :class:`~wanka.errors.SpecError` naming the limit and the fix (never a neutral 1.0).
    ``all_to_all=False`` skips the all-to-all pattern (1.0), the costlier of the two to simulate, for
    jobs without experts.
    """
    from wanka.network.flow import contention_factor

    g = cluster.gpus_per_node
    if cluster.nodes <= 1:
        return 1.0, 1.0, ""
    ring = contention_factor(cluster, "all_reduce", size=cluster.nodes, stride=g)
    n_a2a = min(cluster.accelerators, 64)
    a2a = contention_factor(cluster, "all_to_all", size=n_a2a, stride=1) if all_to_all and n_a2a > g else 1.0
    return ring, a2a, ""


def comm_group(
    cluster: ClusterSpec,
    size: Num,
    stride: Num,
    contention: float | None = None,
    *,
    calibration: Calibration | None = None,
) -> CommGroup:
    """The communicator of ``size`` ranks spaced ``stride`` apart in global rank order.

    With scale-up domains of ``D`` GPUs, ``min(size, max(1, D // stride))`` of the group's ranks share
    each domain (ranks are filled domain by domain). ``contention`` slows the fabric part of a group
    that leaves its domain (from :func:`fabric_slowdowns`); None = oversubscription only. The
    scale-up bandwidth and per-hop latency are the fabric's for the group's path (:func:`scale_up_path`).
    ``calibration``: the one whose latencies and efficiencies time the group (None = the shipped one).
    """
    d = float(cluster.scale_up.domain_size)
    size_a = np.asarray(size, dtype=float)
    stride_a = np.asarray(stride, dtype=float)
    per_domain = np.minimum(size_a, np.maximum(1.0, np.floor(d / stride_a)))
    domains = size_a / per_domain
    sharp = bool(cluster.fabric.sharp)
    fab = scale_up_fabric_of(cluster)
    share, extra = _scale_up_path(cluster, fab, per_domain, stride_a)
    up_bw = _scale_up_bw(cluster, fab) * np.asarray(share, dtype=float)
    acc = accelerator(cluster.accelerator)
    if contention is None:
        contended = fabric_contention(cluster, domains)
    else:
        contended = np.where(np.asarray(domains) > 1, contention, 1.0)
    return CommGroup(
        size=size_a if np.ndim(size_a) else float(size_a),
        per_domain=per_domain if np.ndim(per_domain) else float(per_domain),
        scale_up_bw=up_bw if np.ndim(up_bw) else float(up_bw),
        up_extra_latency_s=extra,
        scale_out_bw=scale_out_bw(cluster),
        scale_out_contention=contended if np.ndim(contended) else float(contended),
        in_network_reduction=sharp,
        scale_up_reduction=bool(cluster.scale_up.in_switch_reduction),
        # a measured overlay (`wanka collective --calibrate`) first, then the link technology's own
        up_efficiency=(
            acc.scale_up_link_efficiency
            if cluster.scale_up.link_efficiency is None
            else cluster.scale_up.link_efficiency
        ),
        out_efficiency=cluster.fabric.link_efficiency,
        nvls_efficiency=cluster.scale_up.nvls_efficiency,
        nvls_link_efficiency=acc.scale_up_nvls_efficiency,
        architecture=acc.architecture,
        calibration=calibration,
    )
