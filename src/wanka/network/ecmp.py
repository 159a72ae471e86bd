"""Static ECMP hashing of a collective's flows onto equal-cost uplinks, in expectation (balls into bins).

A switch that hashes each flow (one RDMA queue pair: its UDP source port) onto one of ``u`` equal-cost
uplinks puts the ``m`` flows that leave it into ``u`` bins uniformly at random. The uplink that draws the
most flows drains last: with every flow carrying the same bytes (the channels of a ring or a tree), the
collective's fabric part takes ``E[max load] / (flows a port carries at line rate)`` times as long as on a
fabric that spreads packets evenly (adaptive routing, packet spraying: slowdown 1). Meta describes
exactly this for RoCE training fabrics (Gangidi et al., "RDMA over Ethernet for Distributed AI Training
at Meta Scale", SIGCOMM 2024, Sec. 5: few large flows per NIC, ECMP collisions, fixed by more queue
pairs per connection and by enhanced ECMP), as does Alibaba HPN (Qian et al., SIGCOMM 2024, Sec. 2:
hash polarisation of a few elephant flows).

``expected_max_load`` is exact (not the Poisson approximation): the bins are filled one after the
other, the count in each being binomial over the balls left, and the law of the maximum over several
independent switches is the product of their laws.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt

from wanka.network.topology import Topology

__all__ = [
    "collective_ecmp_slowdown",
    "double_tree_edges",
    "ecmp_slowdown",
    "expected_max_load",
    "max_load_cdf",
    "node_flows",
]


@functools.cache
def max_load_cdf(balls: int, bins: int) -> tuple[float, ...]:
    """``P(max load <= c)`` for ``c = 0 .. balls``: ``balls`` balls thrown uniformly into ``bins`` bins.

    Exact: the number of ways to place ``m`` balls with at most ``c`` in each of ``u`` bins is
    ``m! [x^m] (sum_{j<=c} x^j / j!)^u`` (exponential generating functions), out of ``u^m``; the power
    is taken by repeated squaring of the truncated polynomial, in ``x = (m/u) y`` and rescaled at each
    product so that no coefficient overflows."""
    if balls < 0 or bins < 1:
        raise ValueError(f"balls = {balls}, bins = {bins}: need balls >= 0 and bins >= 1")
    m, u = int(balls), int(bins)
    if m == 0:
        return (1.0,)
    t = m / u
    j = np.arange(m + 1)
    log_terms = j * math.log(t) - np.array([math.lgamma(k + 1.0) for k in j])
    out = []
    for c in range(m + 1):
        if c * u < m:  # the balls cannot fit
            out.append(0.0)
            continue
        if c >= m:
            out.append(1.0)
            continue
        base = np.exp(log_terms[: c + 1] - log_terms[: c + 1].max())
        base_log = float(log_terms[: c + 1].max())
        acc, acc_log = np.array([1.0]), 0.0
        e = u
        while e:
            if e & 1:
                acc = np.convolve(acc, base)[: m + 1]
                s = acc.max()
                acc, acc_log = acc / s, acc_log + base_log + math.log(s)
            e >>= 1
            if e:
                base = np.convolve(base, base)[: m + 1]
                s = base.max()
                base, base_log = base / s, 2.0 * base_log + math.log(s)
        if acc.size <= m or acc[m] <= 0.0:
            out.append(0.0)
            continue
        log_p = math.lgamma(m + 1.0) - m * math.log(u) - m * math.log(t) + acc_log + math.log(acc[m])
        p = min(1.0, math.exp(log_p))
        out.append(p)
        if p >= 1.0 - 1e-15:  # the rest are 1
            out.extend([1.0] * (m - c))
            break
    return tuple(out)


def expected_max_load(balls: int, bins: int, groups: int = 1) -> float:
    """Expected largest bin over ``groups`` independent switches, each hashing ``balls`` flows onto its
    ``bins`` uplinks: ``sum_c (1 - P(max <= c)^groups)``."""
    if groups < 1:
        raise ValueError(f"groups = {groups}: need at least one")
    cdf = np.asarray(max_load_cdf(int(balls), int(bins)))
    return float(np.sum(1.0 - cdf**groups))


def ecmp_slowdown(loads: list[tuple[int, int, int]], flows_per_port: float, link_over_port: float = 1.0) -> float:
    """Slowdown (>= 1) of flows hashed by static ECMP, from ``loads``: ``(flows, uplinks, switches)``
    per kind of hashing switch (each of ``switches`` identical switches hashes ``flows`` flows onto
    ``uplinks`` links). A link of ``link_over_port`` x the port rate carrying ``L`` flows gives each
    ``1/L`` of it; a flow needs ``1/flows_per_port`` of its port; the busiest link of all sets the pace."""
    if flows_per_port <= 0 or link_over_port <= 0:
        raise ValueError("flows_per_port and link_over_port must be positive")
    # law of the busiest link over every switch: the product of each kind's CDF
    kinds = [(int(f), int(u), int(s)) for f, u, s in loads if f > 0 and s > 0]
    if not kinds:
        return 1.0
    top = max(f for f, _, _ in kinds)
    cdf = np.ones(top + 1)
    for f, u, s in kinds:
        c = np.asarray(max_load_cdf(f, u))
        cdf *= np.concatenate([c, np.ones(top + 1 - c.size)]) ** s
    e_max = float(np.sum(1.0 - cdf))
    return max(1.0, e_max / (flows_per_port * link_over_port))


def _btree(n: int, r: int) -> int:
    """Parent of rank ``r`` in NCCL's binary tree over ``n`` nodes (``ncclGetBtree``, src/graph/trees.cc);
    -1 for the root."""
    if r == 0:
        return -1
    bit = 1
    while bit < n and not bit & r:
        bit <<= 1
    up = (r ^ bit) | (bit << 1)
    return up if up < n else r ^ bit


def double_tree_edges(nodes: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(child, parent) edges of NCCL's two trees over ``nodes`` nodes (``ncclGetDtree``): the binary tree
    and its mirror (``n-1-r``; shifted by one for an odd count), so a node interior in one is a leaf in
    the other."""
    a = [(r, _btree(nodes, r)) for r in range(1, nodes)]
    if nodes % 2:
        b = [((c + 1) % nodes, (p + 1) % nodes) for c, p in a]
    else:
        b = [(nodes - 1 - c, nodes - 1 - p) for c, p in a]
    return a, b


def node_flows(algorithm: str, nodes: int, nics: int, channels: int, qps: int) -> tuple[npt.NDArray[np.int64], ...]:
    """The fabric flows of one NCCL collective on ``nodes`` nodes of ``nics`` rail-aligned NICs:
    ``(src node, src NIC, dst node, dst NIC)`` arrays, one entry per hashed flow (queue pair).

    ``ring``: each of ``channels`` rings crosses from node ``j`` to ``j+1`` on the NIC of its channel
    (``c mod nics``, the same rail at both ends: NCCL's search returns a ring to the NIC it entered by,
    ``crossNic`` 0 first, src/graph/search.cc); ``tree``, ``nvls_tree``: NCCL doubles its channels, the
    first half on the binary tree and the second on its mirror (src/graph/connect.cc), each edge a
    connection both ways. Every connection opens ``qps`` queue pairs (NCCL_IB_QPS_PER_CONNECTION)."""
    if algorithm not in ("ring", "tree", "nvls_tree"):
        raise ValueError(f"algorithm = {algorithm!r}: ECMP flows are modelled for ring, tree and nvls_tree")
    if nodes < 2:
        e = np.zeros(0, dtype=np.int64)
        return e, e, e, e
    rows: list[tuple[int, int, int, int]] = []
    if algorithm == "ring":
        for c in range(channels):
            nic = c % nics
            rows += [(j, nic, (j + 1) % nodes, nic) for j in range(nodes)]
    else:
        trees = double_tree_edges(nodes)
        half = max(1, channels // 2)
        for t, edges in enumerate(trees):
            for c in range(half):
                nic = (c + t * half) % nics
                for child, parent in edges:
                    rows += [(child, nic, parent, nic), (parent, nic, child, nic)]
    arr = np.repeat(np.asarray(rows, dtype=np.int64), qps, axis=0)
    return arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]


def collective_ecmp_slowdown(
    t: Topology, algorithm: str, nodes: int, *, channels: int, qps: int = 1, routing: str = "ecmp"
) -> float:
    """Expected slowdown (>= 1) of the fabric part of one NCCL collective on ``nodes`` consecutive nodes
    of topology ``t`` from static ECMP, tier by tier: every leaf hashes the flows that leave it onto
    its uplinks, and the spine each flow draws picks its downlink into the destination leaf, so both
    ends are balls into bins (:func:`ecmp_slowdown`). The ideal is the busiest NIC's flows at line rate.
    ``routing = "adaptive"`` (packet spraying, InfiniBand adaptive routing) spreads evenly: 1.

    On 3-tier fabrics the flows between pods are hashed once more onto each pod's spine-core links (fewer
    where the spine is oversubscribed: ``spine_oversubscription``), both ways. Left out: the correlation
    of a flow's uplink with its downlink (the flow model, :func:`wanka.network.flow.simulate`, has it;
    ``tests/network/test_ecmp.py`` compares the two)."""
    if routing not in ("ecmp", "adaptive"):
        raise ValueError(f"routing = {routing!r}: must be ecmp or adaptive")
    if routing == "adaptive" or nodes < 2 or t.tiers < 2 or t.uplinks_per_leaf < 1:
        return 1.0
    g = t.gpus_per_node
    sn, sr, dn, dr = node_flows(algorithm, nodes, g, channels, qps)
    src_leaf = t.leaf_of(sn * g + sr)
    dst_leaf = t.leaf_of(dn * g + dr)
    per_nic = np.bincount(sn * g + sr, minlength=nodes * g)
    cross = src_leaf != dst_leaf
    up = np.bincount(src_leaf[cross])
    down = np.bincount(dst_leaf[cross])
    u = int(t.uplinks_per_leaf)
    loads = [(int(f), u, 1) for f in np.concatenate([up[up > 0], down[down > 0]])]
    if t.tiers >= 3:  # flows between pods: each spine hashes again onto its core links
        links = t.spine_uplinks().sum(axis=1)  # per pod
        src_pod, dst_pod = t.pod_of_leaf(src_leaf), t.pod_of_leaf(dst_leaf)
        apart = src_pod != dst_pod
        for pods in (src_pod[apart], dst_pod[apart]):
            count = np.bincount(pods, minlength=links.size)
            loads += [(int(count[p]), int(links[p]), 1) for p in np.flatnonzero(count) if links[p] > 0]
    return ecmp_slowdown(loads, float(per_nic.max()), t.link_bandwidth / t.endpoint_bandwidth)
