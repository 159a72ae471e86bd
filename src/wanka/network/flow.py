"""Flow-level contention simulator: traffic of a collective over a placement, routed with ECMP or adaptive
routing over the fat-tree, bandwidth shared max-min fairly, flows progressing until done.

* **Traffic** (:func:`collective_traffic`): a communicator of ``size`` ranks ``stride`` apart (all such
  groups of the cluster run at once, as DP or EP groups do). Rings (all-reduce, reduce-scatter,
  all-gather, broadcast) run one ring per local GPU of each scale-up domain (NCCL: one ring per NIC /
  rail), so the fabric hop from domain ``i`` to ``i+1`` carries ``factor x S / a`` per rail. All-to-all
  sends ``S/n`` to every peer, aggregated per rail as NCCL's PXN does: GPU ``(i, l)`` sends
  ``a x S / n`` to ``(j, l)``; with many pairs, sub-flows are aggregated by equivalence class of the
  symmetric fat-tree: one flow per leaf pair inside a pod and one per pod pair across pods, spread over
  the pods' leaves (``count`` keeps the number of hashed sub-flows), so the flow count grows with
  leaves x leaves-per-pod + pods², not leaves². ``send_recv`` is a pipeline chain.
* **Rates** (:func:`max_min_rates`): progressive filling (Bertsekas & Gallager, *Data Networks*, 6.5.2)
  on a sparse link×flow incidence with numpy ``bincount``; links whose fair share is within
  ``precision`` x the current rate level of the bottleneck saturate together, which bounds the
  iterations by about ``log(max rate / min rate) / precision``.
* **Events** (:func:`simulate`): rates are recomputed when flows finish; flows finishing within
  ``precision`` x the elapsed time of the next completion finish together (every rate stays feasible,
  so the estimate errs long, by at most ``precision``), and at most ``max_events`` solves are made.
* **Ideal**: the bottleneck-free time, each GPU port draining its bytes at line rate; the slowdown
  ``T / T_ideal`` is what :func:`contention_factor` returns for ``CommGroup.scale_out_contention``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from wanka.errors import SpecError
from wanka.network.collectives import OPS
from wanka.network.routing import Routed, Traffic, dense_ids, route, sum_by
from wanka.network.topology import Topology, build_topology
from wanka.spec.cluster import ClusterSpec

__all__ = [
    "DEFAULT_ROUTING",
    "NCCL_CHANNELS_PER_CONNECTION",
    "FlowResult",
    "HotLink",
    "collective_traffic",
    "contention_factor",
    "max_min_rates",
    "rank_layout",
    "simulate",
]

# Routing assumed when the caller names none: InfiniBand switches spray adaptively (Quantum-2 adaptive
# routing, NCCL_IB_AR_THRESHOLD); RoCE/Ethernet fabrics hash flows (ECMP), as Meta's RoCE paper reports.
DEFAULT_ROUTING = {"infiniband": "adaptive", "roce": "ecmp", "ethernet": "ecmp"}
# NCCL opens every connection on two channels: connect.cc duplicates each channel of its ring and tree
# graphs (``nChannels = min(MAXCHANNELS, nChannels*2)``, NCCL 2.19-2.27) and point-to-point traffic runs
# NCCL_NCHANNELS_PER_NET_PEER = 2 channels per peer (NCCL environment docs), each channel its own queue
# pairs: the engine's factor hashes this many x ``qps_per_connection`` sub-flows per connection (at
# most 64, collective_traffic's bound; ECMP is all but even there).
NCCL_CHANNELS_PER_CONNECTION = 2
_GPU_LEVEL_PAIRS = 200_000  # all-to-all pairs simulated one by one below this; aggregated per leaf pair above
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


# ---------------------------------------------------------------------------- traffic
def rank_layout(
    t: Topology, size: int | None = None, stride: int = 1, placement: str = "contiguous", seed: int = 0
) -> IntArray:
    """GPU ids of every communicator of ``size`` ranks ``stride`` apart, shape (groups, domains, per_domain).

    ``placement = "random"`` shuffles the scale-up domains over the cluster (a fragmented scheduler);
    ``"contiguous"`` keeps rank order = GPU order.
    """
    n = t.endpoints
    size = n if size is None else int(size)
    if not 1 <= size <= n or stride < 1 or size * stride > n:
        raise SpecError(
            f"size = {size}, stride = {stride}: need 1 <= size and size x stride <= {n:,} GPUs", field="size"
        )
    d = t.scale_up.size if t.scale_up is not None else t.gpus_per_node
    block = size * stride
    blocks = n // block
    b, o, i = np.meshgrid(np.arange(blocks), np.arange(stride), np.arange(size), indexing="ij")
    ranks = (b * block + o + stride * i).reshape(blocks * stride, size)
    if placement == "random":
        perm = np.random.default_rng(seed).permutation(n // d)
        dom, loc = np.divmod(ranks, d)
        ok = dom < perm.size
        ranks = np.where(ok, perm[np.minimum(dom, perm.size - 1)] * d + loc, ranks)
    elif placement != "contiguous":
        raise SpecError(f"= {placement!r}: must be contiguous or random", field="placement")
    a = min(size, max(1, d // stride))
    if size % a:
        a = 1
    return ranks.reshape(ranks.shape[0], size // a, a).astype(np.int64)


def _ring_factor(op: str, n: int) -> float:
    return {"all_reduce": 2.0 * (n - 1) / n, "reduce_scatter": (n - 1) / n, "all_gather": (n - 1) / n}.get(op, 1.0)


def _traffic(src: IntArray, dst: IntArray, nbytes: float, planes: int, qps: int) -> Traffic:
    keep = src != dst
    s, d = src[keep], dst[keep]
    return Traffic(s, d, np.full(s.size, nbytes / planes / qps), np.full(s.size, float(qps)))


def collective_traffic(
    t: Topology,
    op: str,
    nbytes: float,
    size: int | None = None,
    stride: int = 1,
    placement: str = "contiguous",
    seed: int = 0,
    qps: int = 1,
    aggregate: str = "auto",
) -> Traffic:
    """Fabric flows (one plane) of ``op`` with ``nbytes`` per rank on every communicator of the layout.

    ``qps``: separately hashed sub-flows per connection (NCCL_IB_QPS_PER_CONNECTION, default 1).
    ``aggregate`` (all-to-all): ``"gpu"`` one flow per rank pair, ``"leaf"`` per leaf pair, ``"class"``
    per equivalence class of the fat-tree (leaf pairs inside a pod, pod pairs across); ``"auto"`` takes
    ``gpu`` up to 200,000 rank pairs and ``class`` above.
    """
    if op not in OPS:
        raise SpecError(f"= {op!r}: must be one of {', '.join(OPS)}", field="op")
    if not 1 <= qps <= 64:
        raise SpecError(f"= {qps}: must be 1..64", field="qps")
    lay = rank_layout(t, size, stride, placement, seed)
    g, k, a = lay.shape
    n = k * a
    if k == 1:
        e = np.zeros(0, dtype=np.int64)
        return Traffic(e, e, np.zeros(0), np.zeros(0))
    if op == "send_recv":
        flat = lay.reshape(g, n)
        return _traffic(flat[:, :-1].ravel(), flat[:, 1:].ravel(), nbytes, t.planes, qps)
    if op != "all_to_all":
        nxt = np.roll(lay, -1, axis=1)
        return _traffic(lay.ravel(), nxt.ravel(), _ring_factor(op, n) * nbytes / a, t.planes, qps)
    per = a * nbytes / n / t.planes / qps
    pairs = g * a * k * (k - 1)
    if aggregate == "auto":
        aggregate = "gpu" if pairs <= _GPU_LEVEL_PAIRS else "class"
    if aggregate == "gpu":
        i, j = np.nonzero(~np.eye(k, dtype=bool))
        src = lay[:, i, :].ravel()
        dst = lay[:, j, :].ravel()
        return Traffic(src, dst, np.full(src.size, per), np.full(src.size, float(qps)))
    leaf = t.leaf_of(lay)  # (g, k, a)
    cols = g * a
    col = (np.arange(g)[:, None, None] * a + np.arange(a)[None, None, :]) + np.zeros((1, k, 1), dtype=np.int64)
    # C[leaf, column] = ranks of column (group, local rank) on the leaf, kept sparse as entries: all-to-all
    # traffic between leaves is C C^T (rank pairs of one column), less each rank's message to itself
    key, e_cnt = sum_by(leaf.ravel() * cols + col.ravel(), None, t.leaves * cols)
    e_leaf, e_col = key // cols, key % cols
    active = np.bincount(leaf.ravel(), minlength=t.leaves).astype(np.int64)
    if aggregate == "leaf":
        if t.leaves**2 > 50_000_000:
            raise SpecError(f"{t.leaves:,} leaves are too many for leaf-pair flows; use class", field="aggregate")
        i, j = _join(e_col, e_col)
        m = np.bincount(e_leaf[i] * t.leaves + e_leaf[j], weights=e_cnt[i] * e_cnt[j], minlength=t.leaves**2).reshape(
            t.leaves, t.leaves
        )
        m[np.diag_indices_from(m)] -= active
        x, y = np.nonzero(m > 0.5)
        return Traffic(
            x.astype(np.int64),
            y.astype(np.int64),
            np.full(x.size, per),
            np.asarray(m[x, y] * qps, dtype=float),
            level="leaf",
            active=active,
        )
    if aggregate != "class":
        raise SpecError(f"= {aggregate!r}: must be auto, gpu, leaf or class", field="aggregate")
    return _class_traffic(t, e_leaf, e_col, e_cnt, active, per, qps)


def _join(ka: IntArray, kb: IntArray) -> tuple[IntArray, IntArray]:
    """Every index pair ``(i, j)`` with ``ka[i] == kb[j]`` (a sort-merge equi-join)."""
    oa, ob = np.argsort(ka, kind="stable"), np.argsort(kb, kind="stable")
    sa, sb = ka[oa], kb[ob]
    keys = np.intersect1d(sa, sb)
    a0, b0 = np.searchsorted(sa, keys), np.searchsorted(sb, keys)
    na = np.searchsorted(sa, keys, "right") - a0
    nb = np.searchsorted(sb, keys, "right") - b0
    per = na * nb
    grp = np.repeat(np.arange(keys.size), per)
    r = np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per)
    return oa[a0[grp] + r // nb[grp]], ob[b0[grp] + r % nb[grp]]


# leaves x columns below which _class_traffic forms its leaf-to-pod matrix as a dense product (8 MiB of float64)
_DENSE_CELLS = 1 << 20


def _class_traffic(
    t: Topology, e_leaf: IntArray, e_col: IntArray, e_cnt: FloatArray, active: IntArray, per: float, qps: int
) -> Traffic:
    """All-to-all flows aggregated by equivalence class of the fat-tree: one flow per leaf for the traffic
    that stays on it, one per pod for the traffic between its leaves and one per pod pair across pods,
    the last two spread over the pods' leaves in proportion to each leaf's share (exact loads on every
    link; one rate per class, which is the leaf-level answer when a pod's leaves are alike)."""
    nl = t.leaves
    pod_of = t.pod_of_leaf(np.arange(nl))
    pods = int(pod_of.max()) + 1
    ncol = int(e_col.max()) + 1
    # C_pod[P, column] and T[x, Q] = sub-flows from leaf x to the ranks of pod Q (same column)
    ck, cw = sum_by(pod_of[e_leaf] * ncol + e_col, e_cnt, pods * ncol)
    c_pod, c_col = ck // ncol, ck % ncol
    if nl * ncol <= _DENSE_CELLS:
        # few columns (one communicator over the cluster): T = C C_pod^T as a dense product, whose size is
        # leaves x pods, instead of a join of leaves x pods x columns rows sorted by key; counts are whole
        # numbers, so both give the same T exactly
        c = np.zeros((nl, ncol))
        c[e_leaf, e_col] = e_cnt
        cp = np.zeros((pods, ncol))
        cp[c_pod, c_col] = cw
        tl = c @ cp.T
    else:
        i, j = _join(e_col, c_col)
        tk, tw = sum_by(e_leaf[i] * pods + c_pod[j], e_cnt[i] * cw[j], nl * pods)
        flat = np.zeros(nl * pods)
        flat[tk] = tw
        tl = flat.reshape(nl, pods)
    sq = np.bincount(e_leaf, weights=e_cnt**2, minlength=nl)  # sub-flows between ranks of one leaf
    own = sq - active  # ... less each rank's message to itself
    between = tl[np.arange(nl), pod_of] - sq  # to the other leaves of the leaf's pod
    # pod pairs: M_pod = C_pod C_pod^T off the diagonal
    i, j = _join(c_col, c_col)
    mk, mw = sum_by(c_pod[i] * pods + c_pod[j], cw[i] * cw[j], pods * pods)
    p_src, p_dst = mk // pods, mk % pods
    cross = p_src != p_dst
    p_src, p_dst, mw = p_src[cross], p_dst[cross], mw[cross]
    in_pod = np.bincount(pod_of, weights=between, minlength=pods)
    leaf_ids = np.flatnonzero(own > 0.5)
    pod_ids = np.flatnonzero(in_pod > 0.5)
    # flows: [own traffic of each leaf] [between the leaves of each pod] [pod pairs]
    cls_src = np.concatenate([pod_of[leaf_ids], pod_ids, p_src]).astype(np.int64)
    cls_dst = np.concatenate([np.full(leaf_ids.size, -1), pod_ids, p_dst]).astype(np.int64)
    count = np.concatenate([own[leaf_ids], in_pod[pod_ids], mw]) * qps
    f_leaf = np.arange(leaf_ids.size)
    f_pod = leaf_ids.size + np.arange(pod_ids.size)
    f_pair = leaf_ids.size + pod_ids.size + np.arange(p_src.size)
    starts = np.searchsorted(pod_of, np.arange(pods + 1))

    def spread(fid: IntArray, mine: IntArray, other: IntArray | None, total: FloatArray) -> tuple[Any, Any, Any]:
        sizes = starts[mine + 1] - starts[mine]
        rep = np.repeat(np.arange(fid.size), sizes)
        lv = np.repeat(starts[mine], sizes) + np.arange(rep.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        amount = between[lv] if other is None else tl[lv, other[rep]]
        share = amount / total[rep]
        keep = share > 0
        return fid[rep][keep], lv[keep].astype(np.int64), share[keep]

    # the traffic matrix is symmetric: leaf z sends and receives the same share of a class
    parts = [
        (f_leaf, leaf_ids.astype(np.int64), np.ones(leaf_ids.size)),
        spread(f_pod, pod_ids, None, np.asarray(in_pod[pod_ids], dtype=float)),
    ]
    src_parts = [*parts, spread(f_pair, p_src, p_dst, mw)]
    dst_parts = [*parts, spread(f_pair, p_dst, p_src, mw)]

    def cat(ps: list[tuple[Any, Any, Any]]) -> tuple[IntArray, IntArray, FloatArray]:
        return (
            np.concatenate([p[0] for p in ps]).astype(np.int64),
            np.concatenate([p[1] for p in ps]).astype(np.int64),
            np.concatenate([p[2] for p in ps]).astype(float),
        )

    return Traffic(
        cls_src,
        cls_dst,
        np.full(count.size, per),
        count,
        level="class",
        active=active,
        src_spread=cat(src_parts),
        dst_spread=cat(dst_parts),
    )


# ---------------------------------------------------------------------------- max-min rates
def max_min_rates(
    link: IntArray,
    flow: IntArray,
    weight: FloatArray,
    capacity: FloatArray,
    n_flows: int,
    precision: float = 1e-3,
    *,
    compact: bool = False,
) -> tuple[FloatArray, int]:
    """Max-min fair rate of each flow (per unit of weight) and the filling iterations used.

    Flow ``f`` loads link ``l`` with ``weight x rate_f`` for every incidence entry ``(l, f)``.
    ``compact``: every link in ``capacity`` is used (the caller renumbered them), so skip renumbering.

    >>> r, _ = max_min_rates(np.array([0, 0, 1]), np.array([0, 1, 1]), np.ones(3), np.array([1.0, 3.0]), 2)
    >>> r.tolist()
    [0.5, 0.5]
    """
    rate = np.zeros(n_flows)
    frozen = np.zeros(n_flows, dtype=bool)
    # work on the links some flow uses only: every iteration then costs O(incidence), not O(all links)
    if compact:
        li, resid = link, np.asarray(capacity, dtype=float).copy()
    else:
        used_links, li = np.unique(link, return_inverse=True)
        resid = np.asarray(capacity, dtype=float)[used_links].copy()
    fi, wi = flow, weight
    iters, level = 0, 0.0  # level: the common rate of every unfrozen flow
    n_links = resid.size
    while li.size:
        iters += 1
        w = np.bincount(li, weights=wi, minlength=n_links)
        used = w > 0
        if not used.any():
            break
        share = np.where(used, np.maximum(resid, 0.0) / np.where(used, w, 1.0), np.inf)
        m = float(share.min())
        rate[~frozen] += m
        level += m
        resid -= m * w
        sat = used & (share <= m + precision * level + 1e-300)
        frozen[fi[sat[li]]] = True
        keep = ~frozen[fi]
        if keep.sum() < 0.8 * keep.size:  # compact once a fifth of the entries froze
            li, fi, wi = li[keep], fi[keep], wi[keep]
        else:
            wi = np.where(keep, wi, 0.0)
    return rate, iters


# ---------------------------------------------------------------------------- simulation
@dataclass(frozen=True)
class HotLink:
    name: str
    utilization: float  # busy share of the collective's duration
    load_bytes: float


@dataclass(frozen=True)
class FlowResult:
    """Outcome of one flow-level simulation (one plane; planes are identical)."""

    routing: str
    flows: int
    subflows: float
    bytes_sent: float  # all planes
    bytes_delivered: float
    completion_time_s: float
    ideal_time_s: float
    events: int
    rate_solves: int
    filling_iterations: int
    utilization_percentiles: dict[str, float]  # over links that carry traffic
    links_used: int
    hottest: tuple[HotLink, ...]
    ecmp_imbalance: float  # bundle of the hottest link: its hottest member / the bundle mean

    @property
    def slowdown(self) -> float:
        return self.completion_time_s / self.ideal_time_s if self.ideal_time_s > 0 else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "routing": self.routing,
            "flows": self.flows,
            "subflows": self.subflows,
            "bytes_sent": self.bytes_sent,
            "bytes_delivered": self.bytes_delivered,
            "completion_time_s": self.completion_time_s,
            "ideal_time_s": self.ideal_time_s,
            "slowdown": self.slowdown,
            "events": self.events,
            "rate_solves": self.rate_solves,
            "utilization_percentiles": self.utilization_percentiles,
            "links_used": self.links_used,
            "ecmp_imbalance": self.ecmp_imbalance,
            "hottest_links": [
                {"link": h.name, "utilization": h.utilization, "load_bytes": h.load_bytes} for h in self.hottest
            ],
        }


def _empty(routing: str) -> FlowResult:
    pct = {"p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0}
    return FlowResult(routing, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, pct, 0, (), 1.0)


def simulate(
    t: Topology,
    traffic: Traffic,
    routing: str = "ecmp",
    seed: int = 0,
    *,
    precision: float = 0.01,
    max_events: int = 64,
    top: int = 5,
) -> FlowResult:
    """Run ``traffic`` to completion on ``t`` and report completion time, slowdown and link statistics."""
    if traffic.flows == 0:
        return _empty(routing)
    r: Routed = route(t, traffic, routing, seed)
    nf = traffic.flows
    rem = traffic.nbytes.astype(float).copy()
    done_at = np.zeros(nf)
    active = np.ones(nf, dtype=bool)
    now, events, iters = 0.0, 0, 0
    used_links, link_c = dense_ids(r.link, r.capacity.size)  # solve on the links in use only
    cap_c = r.capacity[used_links]
    while active.any():
        ids = np.flatnonzero(active)
        pos = np.full(nf, -1, dtype=np.int64)
        pos[ids] = np.arange(ids.size)
        sel = active[r.flow]
        rate, it = max_min_rates(link_c[sel], pos[r.flow[sel]], r.weight[sel], cap_c, ids.size, precision, compact=True)
        events += 1
        iters += it
        dt = rem[ids] / rate
        if events >= max_events:
            done_at[ids] = now + dt  # finish everyone at the current (feasible) rates
            rem[ids] = 0.0
            break
        fin = dt <= dt.min() + precision * (now + dt.min())
        adv = float(dt[fin].max())
        done_at[ids[fin]] = now + dt[fin]
        rem[ids[fin]] = 0.0
        rem[ids[~fin]] -= rate[~fin] * adv
        active[ids[fin]] = False
        now += adv
    total = float(done_at.max())
    planes = t.planes
    sent = traffic.total_bytes * planes
    delivered = float(np.sum((traffic.nbytes - rem) * traffic.count)) * planes
    ep = r.endpoint_links & (r.raw_capacity > 0)
    ideal = float(np.max(r.load[ep] / r.raw_capacity[ep]))
    member_cap = np.repeat(r.raw_capacity / np.maximum(r.members, 1), r.members)
    util = np.divide(r.member_load, member_cap * total, out=np.zeros_like(r.member_load), where=member_cap > 0)
    busy = r.member_load > 0
    u = util[busy]
    qs = np.percentile(u, [50, 90, 99]) if u.size else np.zeros(3)  # one partition pass for the three
    pct = {k: float(q) for k, q in zip(("p50", "p90", "p99"), qs, strict=True)}
    pct["max"] = float(u.max()) if u.size else 0.0
    part = np.argpartition(-util, min(top, util.size - 1))[:top] if util.size > top else np.arange(util.size)
    order = part[np.argsort(-util[part], kind="stable")]
    hot = tuple(HotLink(r.label(int(m)), float(util[m]), float(r.member_load[m])) for m in order if util[m] > 0)
    # ECMP imbalance of the bundle holding the hottest link: its hottest member over the bundle mean
    hot_sl = int(np.searchsorted(r.member_start, order[0], side="right") - 1) if order.size else 0
    imb = float(r.raw_capacity[hot_sl] / r.capacity[hot_sl]) if r.capacity[hot_sl] > 0 else 1.0
    return FlowResult(
        routing,
        nf,
        traffic.subflows,
        sent,
        delivered,
        total,
        ideal,
        events,
        events,
        iters,
        pct,
        int(busy.sum()),
        hot,
        imb,
    )


# ---------------------------------------------------------------------------- engine hook
@lru_cache(maxsize=256)
def _cached_factor(
    cluster_json: str, op: str, size: int | None, stride: int, routing: str, placement: str, seed: int
) -> float:
    # kept between runs too (wanka.network.factor_cache): the same inputs give the same factor
    from wanka.network import factor_cache

    key = factor_cache.inputs_key(cluster_json, op, size, stride, routing, placement, seed)
    cached = factor_cache.get(key)
    if cached is not None:
        return cached
    factor = _simulated_factor(cluster_json, op, size, stride, routing, placement, seed)
    factor_cache.put(key, factor)
    return factor


def _simulated_factor(
    cluster_json: str, op: str, size: int | None, stride: int, routing: str, placement: str, seed: int
) -> float:
    cluster = ClusterSpec.model_validate(json.loads(cluster_json))
    t = build_topology(cluster)
    qps = min(64, cluster.fabric.qps_per_connection * NCCL_CHANNELS_PER_CONNECTION)
    traffic = collective_traffic(t, op, 1 << 20, size, stride, placement, seed, qps=qps)
    return max(1.0, simulate(t, traffic, routing, seed).slowdown)


def contention_factor(
    cluster: ClusterSpec,
    op: str,
    size: int | None = None,
    stride: int = 1,
    *,
    routing: str | None = None,
    placement: str = "contiguous",
    seed: int = 0,
) -> float:
    """Slowdown (>= 1) of the fabric part of ``op`` on every ``size``-rank, ``stride``-spaced communicator
    of ``cluster`` running at once, from the flow model (oversubscription and ECMP collisions included).

    Feed it to ``CommGroup.scale_out_contention`` *instead of* ``groups.fabric_contention`` (which
    models oversubscription alone). ``routing`` defaults to :data:`DEFAULT_ROUTING` for the fabric kind.
    Each connection hashes :data:`NCCL_CHANNELS_PER_CONNECTION` x ``fabric.qps_per_connection`` sub-flows.
    """
    rt = routing or cluster.fabric.routing or DEFAULT_ROUTING[cluster.fabric.kind]
    # exclude_unset keeps which fields the scenario set (fabric.tiers left unset = the fewest that reach)
    return _cached_factor(cluster.model_dump_json(exclude_unset=True), op, size, stride, rt, placement, seed)
