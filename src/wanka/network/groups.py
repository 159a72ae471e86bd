"""Communicators of a parallel job laid out on a cluster (Megatron rank order tp → cp → dp → pp)."""

from __future__ import annotations

import numpy as np

from wanka.catalog import accelerator
from wanka.network.collectives import CommGroup, Num
from wanka.spec.cluster import ClusterSpec
from wanka.units import GIGA, gbps_to_bytes_per_s

__all__ = ["comm_group", "fabric_contention", "scale_out_bw", "scale_up_bw"]


def scale_up_bw(cluster: ClusterSpec) -> float:
    """Per-GPU one-direction scale-up bandwidth, B/s (spec override, else catalog)."""
    if cluster.scale_up.gbytes_per_s_per_direction is not None:
        return cluster.scale_up.gbytes_per_s_per_direction * GIGA
    return accelerator(cluster.accelerator).scale_up_bandwidth


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


def comm_group(cluster: ClusterSpec, size: Num, stride: Num) -> CommGroup:
    """The communicator of ``size`` ranks spaced ``stride`` apart in global rank order.

    With scale-up domains of ``D`` GPUs, ``min(size, max(1, D // stride))`` of the group's ranks share
    each domain (ranks are filled domain by domain).
    """
    d = float(cluster.scale_up.domain_size)
    size_a = np.asarray(size, dtype=float)
    stride_a = np.asarray(stride, dtype=float)
    per_domain = np.minimum(size_a, np.maximum(1.0, np.floor(d / stride_a)))
    domains = size_a / per_domain
    sharp = bool(cluster.fabric.sharp)
    return CommGroup(
        size=size_a if size_a.ndim else float(size_a),
        per_domain=per_domain if per_domain.ndim else float(per_domain),
        scale_up_bw=scale_up_bw(cluster),
        scale_out_bw=scale_out_bw(cluster),
        scale_out_contention=fabric_contention(cluster, domains),
        in_network_reduction=sharp,
    )
