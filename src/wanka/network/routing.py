"""Routing flows over a fat-tree: the stage graph, paths, ECMP hashing and adaptive (sprayed) routing.

In a fat-tree every shortest path from leaf ``x`` to leaf ``y`` climbs through one of ``x``'s uplinks,
(3-tier) one of its pod's spine-to-core links, down one core-to-spine link of ``y``'s pod and one of
``y``'s downlinks. The flow model therefore routes over *stages*, each a bundle of equal-cost links:

===============  ==========================================  =========================
stage            members                                     capacity
===============  ==========================================  =========================
nic up/down      one GPU's fabric port                       endpoint bandwidth
leaf NICs        the active GPU ports of one leaf (for       n x endpoint bandwidth
                 leaf-aggregated traffic)
leaf up/down     the ``u`` leaf–spine links of one leaf      u x link bandwidth
pod up/down      the spine–core links of one pod (3-tier)    n x link bandwidth
===============  ==========================================  =========================

*Adaptive routing / packet spraying* splits every flow evenly over the members, so a bundle behaves
exactly as one link of the summed capacity (for symmetric fat-trees this is exact). *ECMP* hashes each
sub-flow (one QP / 5-tuple) onto one member: the member loads are sampled with ``seed`` (per sub-flow
draws, or multinomial counts for aggregated sub-flows) and the bundle is derated to
``capacity x mean/max`` of its member loads, so its traffic drains when its hottest member does.
Hash choices at successive stages are drawn independently (no hash polarisation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from wanka.network.topology import Topology

__all__ = ["STAGES", "Routed", "Traffic", "dense_ids", "route", "sum_by"]

STAGES = ("nic_up", "nic_down", "leaf_nics_up", "leaf_nics_down", "leaf_up", "leaf_down", "pod_up", "pod_down")
_LABEL = {
    "nic_up": "GPU {i} NIC send",
    "nic_down": "GPU {i} NIC receive",
    "leaf_nics_up": "leaf {i} GPU port {m} send",
    "leaf_nics_down": "leaf {i} GPU port {m} receive",
    "leaf_up": "leaf {i} uplink {m}",
    "leaf_down": "leaf {i} downlink {m}",
    "pod_up": "pod {i} spine-core link {m}",
    "pod_down": "pod {i} core-spine link {m}",
}
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Traffic:
    """Flows on one plane: ``count`` identical sub-flows of ``nbytes`` each from ``src`` to ``dst``.

    ``level = "gpu"``: ``src``/``dst`` are GPU ids. ``level = "leaf"``: they are leaf ids and the flow
    stands for ``count`` GPU-to-GPU sub-flows spread evenly over the ``active`` GPUs of each leaf.
    ``level = "class"``: an equivalence class of leaf-level flows of the symmetric fabric; ``src``/``dst``
    are *pod* ids and the class's sub-flows leave the leaves ``src_spread = (flow, leaf, share)`` and
    enter the leaves ``dst_spread`` (shares of each flow sum to 1). Every flow of a class gets one rate,
    which is the leaf-level answer whenever the leaves of a pod carry the same load (the symmetric
    placements); ``src == dst`` classes stay inside one pod and never touch its spine–core links, and
    ``dst == -1`` marks traffic that stays on its leaf (it loads the GPU ports only).
    """

    src: IntArray
    dst: IntArray
    nbytes: FloatArray
    count: FloatArray
    level: str = "gpu"
    active: IntArray | None = None  # per leaf, GPUs that send/receive (levels "leaf" and "class")
    src_spread: tuple[IntArray, IntArray, FloatArray] | None = None  # (flow, leaf, share), level "class"
    dst_spread: tuple[IntArray, IntArray, FloatArray] | None = None

    @property
    def flows(self) -> int:
        return int(self.src.size)

    @property
    def subflows(self) -> float:
        return float(self.count.sum())

    @property
    def total_bytes(self) -> float:
        return float(np.sum(self.nbytes * self.count))


@dataclass(frozen=True)
class Routed:
    """Sparse flow×stage incidence (weights = sub-flows) and the stage capacities after routing."""

    link: IntArray
    flow: IntArray
    weight: FloatArray
    capacity: FloatArray  # effective (ECMP-derated) capacity per stage link
    raw_capacity: FloatArray
    load: FloatArray  # bytes per stage link
    members: IntArray  # member links per stage link
    member_load: FloatArray  # bytes per member link (flattened, stage-link major)
    member_start: IntArray  # offset of each stage link's members in member_load
    stage_of: npt.NDArray[np.int8]
    index_of: IntArray  # leaf / pod / GPU index of each stage link
    endpoint_links: npt.NDArray[np.bool_]  # first/last hop links (for the ideal time)

    def label(self, member: int) -> str:
        """Human name of a member link."""
        sl = int(np.searchsorted(self.member_start, member, side="right") - 1)
        st = STAGES[int(self.stage_of[sl])]
        return _LABEL[st].format(i=int(self.index_of[sl]), m=member - int(self.member_start[sl]))


def sum_by(keys: IntArray, w: FloatArray | None, span: int | None = None) -> tuple[IntArray, FloatArray]:
    """The distinct keys, ascending, and the sum of ``w`` (or the count) over each.

    With ``span`` (every key lies in ``[0, span)``) and a span within a few times the keys (or 1 Mi), a
    bincount over the span replaces the sort: linear in keys + span, where ``np.unique`` is ``k log k``
    (the cost that grew fastest in a 131k-GPU all-to-all)."""
    if span is not None and span <= max(4 * keys.size, 1 << 20):
        tot = np.bincount(keys, weights=w, minlength=span)
        hit = np.bincount(keys, minlength=span) > 0 if w is not None else tot > 0
        u = np.flatnonzero(hit)
        return u.astype(np.int64), np.asarray(tot[u], dtype=float)
    u, inv = np.unique(keys, return_inverse=True)
    return u, np.asarray(np.bincount(inv, weights=w), dtype=float)


def dense_ids(keys: IntArray, span: int) -> tuple[IntArray, IntArray]:
    """``np.unique(keys, return_inverse=True)`` for keys in ``[0, span)``, by a bincount (no sort)."""
    hit = np.bincount(keys, minlength=span) > 0
    new = np.cumsum(hit) - 1
    return np.flatnonzero(hit).astype(np.int64), new[keys].astype(np.int64)


def _stage_layout(t: Topology, active: IntArray | None) -> tuple[dict[str, int], FloatArray, IntArray, IntArray]:
    """Offsets per stage, capacity, members and index of every stage link."""
    e, nl = t.endpoints, t.leaves
    spec: list[tuple[str, int, Any, Any]] = []
    ones = np.ones(e, dtype=np.int64)
    spec.append(("nic_up", e, np.full(e, t.endpoint_bandwidth), ones))
    spec.append(("nic_down", e, np.full(e, t.endpoint_bandwidth), ones))
    act = active if active is not None else np.zeros(nl, dtype=np.int64)
    for st in ("leaf_nics_up", "leaf_nics_down"):
        spec.append((st, nl, act * t.endpoint_bandwidth, np.maximum(act, 1)))
    u = t.uplinks_per_leaf
    for st in ("leaf_up", "leaf_down"):
        spec.append((st, nl if t.tiers >= 2 else 0, np.full(nl, u * t.link_bandwidth), np.full(nl, u)))
    per_pod = t.spine_uplinks().sum(axis=1) if t.tiers == 3 else np.zeros(0, dtype=np.int64)
    for st in ("pod_up", "pod_down"):
        spec.append((st, per_pod.size, per_pod * t.link_bandwidth, per_pod.astype(np.int64)))
    offsets: dict[str, int] = {}
    caps, mems, idx = [], [], []
    pos = 0
    for st, n, cap, mem in spec:
        offsets[st] = pos
        caps.append(np.asarray(cap, dtype=float)[:n])
        mems.append(np.asarray(mem, dtype=np.int64)[:n])
        idx.append(np.arange(n, dtype=np.int64))
        pos += n
    offsets["end"] = pos
    return offsets, np.concatenate(caps), np.concatenate(mems), np.concatenate(idx)


def _sample_members(
    rng: np.random.Generator,
    link: IntArray,
    count: FloatArray,
    nbytes: FloatArray,
    members: IntArray,
    start: IntArray,
    out: FloatArray,
) -> None:
    """ECMP: add each sub-flow's bytes to one uniformly drawn member of its stage link."""
    single = count <= 1
    if single.any():
        ln = link[single]
        pick = np.minimum((rng.random(ln.size) * members[ln]).astype(np.int64), members[ln] - 1)
        np.add.at(out, start[ln] + pick, nbytes[single] * count[single])
    if (~single).any():
        ln, c, b = link[~single], count[~single], nbytes[~single]
        # one draw per (stage link, message size); class traffic has one size, where a bincount over the
        # links replaces the sort of (link, size) keys
        if b.min() == b.max():
            sizes, b_id = b[:1], np.zeros(b.size, dtype=np.int64)
        else:
            sizes, b_id = np.unique(b, return_inverse=True)
        nb = sizes.size
        key, tot_f = sum_by(ln * nb + b_id, c, members.size * nb)
        tot = np.rint(tot_f).astype(np.int64)
        lg, bg = key // nb, sizes[key % nb]
        m = members[lg]
        one = m == 1
        np.add.at(out, start[lg[one]], tot[one] * bg[one])
        # one multinomial draw per stage link, vectorised over the links with the same member count
        for mm in np.unique(m[~one]):
            sel = np.flatnonzero(m == mm)
            draws = rng.multinomial(tot[sel], np.full(int(mm), 1.0 / float(mm)))
            idx = start[lg[sel]][:, None] + np.arange(int(mm))[None, :]
            np.add.at(out, idx.ravel(), (draws * bg[sel][:, None]).ravel())


def _class_incidence(t: Topology, tr: Traffic, off: dict[str, int]) -> tuple[IntArray, IntArray, FloatArray]:
    """(stage link, flow, share of the flow's sub-flows) of class-level flows (see :class:`Traffic`)."""
    if tr.src_spread is None or tr.dst_spread is None:
        raise ValueError("class-level traffic needs src_spread and dst_spread")
    fs, ls, ws = tr.src_spread
    fd, ld, wd = tr.dst_spread
    f = np.arange(tr.src.size, dtype=np.int64)
    links = [off["leaf_nics_up"] + ls, off["leaf_nics_down"] + ld]
    flows, shares = [fs, fd], [ws, wd]
    if t.tiers >= 2:  # a class never stays on one leaf: intra-leaf traffic is a class of its own (below)
        up = tr.dst[fs] >= 0
        links += [off["leaf_up"] + ls[up], off["leaf_down"] + ld[tr.dst[fd] >= 0]]
        flows += [fs[up], fd[tr.dst[fd] >= 0]]
        shares += [ws[up], wd[tr.dst[fd] >= 0]]
    if t.tiers == 3:
        y = (tr.src != tr.dst) & (tr.dst >= 0)
        links += [off["pod_up"] + tr.src[y], off["pod_down"] + tr.dst[y]]
        flows += [f[y], f[y]]
        shares += [np.ones(int(y.sum())), np.ones(int(y.sum()))]
    return np.concatenate(links), np.concatenate(flows), np.concatenate(shares)


def route(t: Topology, traffic: Traffic, routing: str = "ecmp", seed: int = 0) -> Routed:
    """Route ``traffic`` over ``t`` with ``routing`` = ``"ecmp"`` (hashed, seeded) or ``"adaptive"``."""
    if routing not in ("ecmp", "adaptive"):
        raise ValueError(f"routing = {routing!r}: must be ecmp or adaptive")
    off, cap, mem, idx = _stage_layout(t, traffic.active)
    stage_of = np.zeros(cap.size, dtype=np.int8)
    for i, st in enumerate(STAGES):
        stage_of[off[st] : off[STAGES[i + 1]] if i + 1 < len(STAGES) else off["end"]] = i
    src, dst = traffic.src, traffic.dst
    f = np.arange(src.size, dtype=np.int64)
    if traffic.level == "class":
        link, flow, share = _class_incidence(t, traffic, off)
        weight = traffic.count[flow] * share
    else:
        if traffic.level == "gpu":
            sl, dl = t.leaf_of(src), t.leaf_of(dst)
            first, last = off["nic_up"] + src, off["nic_down"] + dst
        else:
            sl, dl = src, dst
            first, last = off["leaf_nics_up"] + src, off["leaf_nics_down"] + dst
        parts_l, parts_f = [first, last], [f, f]
        if t.tiers >= 2:
            x = sl != dl
            parts_l += [off["leaf_up"] + sl[x], off["leaf_down"] + dl[x]]
            parts_f += [f[x], f[x]]
        if t.tiers == 3:
            sp, dp = t.pod_of_leaf(sl), t.pod_of_leaf(dl)
            y = sp != dp
            parts_l += [off["pod_up"] + sp[y], off["pod_down"] + dp[y]]
            parts_f += [f[y], f[y]]
        link, flow = np.concatenate(parts_l), np.concatenate(parts_f)
        weight = traffic.count[flow].astype(float)
    load = np.asarray(np.bincount(link, weights=weight * traffic.nbytes[flow], minlength=cap.size), dtype=float)
    start = np.concatenate([[0], np.cumsum(mem)[:-1]]).astype(np.int64)
    member_load = np.repeat(load / mem, mem)
    derate = np.ones(cap.size)
    if routing == "ecmp":
        bundle = (stage_of[link] >= STAGES.index("leaf_up")) & (mem[link] > 1)
        if bundle.any():
            member_load[np.repeat(stage_of >= STAGES.index("leaf_up"), mem)] = 0.0
            _sample_members(
                np.random.default_rng(seed),
                link[bundle],
                weight[bundle],
                traffic.nbytes[flow[bundle]],
                mem,
                start,
                member_load,
            )
            peak = np.maximum.reduceat(member_load, start) if member_load.size else np.zeros(0)
            mean = load / mem
            hashed = (stage_of >= STAGES.index("leaf_up")) & (load > 0)
            derate[hashed] = np.maximum(1.0, peak[hashed] / mean[hashed])
    ep = stage_of <= STAGES.index("leaf_nics_down")
    return Routed(link, flow, weight, cap / derate, cap, load, mem, member_load, start, stage_of, idx, ep)
