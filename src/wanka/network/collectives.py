"""Collective communication times over a two-level hierarchy: scale-up domain and scale-out fabric.

This module is the only place collective times come from. Every function accepts floats or numpy
arrays (broadcasting), so the engine evaluates one strategy or a batch of thousands the same way.

Conventions follow nccl-tests (``nccl-tests/doc/PERFORMANCE.md``): ``nbytes`` is the per-rank buffer
for all-reduce and all-to-all, and the whole (gathered) buffer for all-gather and reduce-scatter;
``algbw = nbytes / time``; ``busbw = algbw * factor`` with factor 2(n-1)/n for all-reduce and
(n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for broadcast and send/recv.

Algorithms
- ring: bandwidth term ``factor * nbytes / B`` with B the slowest hop of the ring. A ring over ``a``
  ranks per scale-up domain and ``k`` domains crosses the fabric once per domain per direction, so
  the fabric hop carries ``1/a`` of the data per GPU (NCCL runs one ring per NIC / rail):
  ``B = min(B_up, a * B_out)``. Latency ``2(n-1)`` hops for all-reduce.
- hierarchical: reduce-scatter inside the domain, all-reduce of a ``1/a`` shard across domains over
  each GPU's own NIC (rail), all-gather inside the domain (the scheme NCCL and HCCL use).
- tree: NCCL double binary tree over domains, ``log2`` latency, bandwidth ``~ nbytes / B_out`` per
  GPU; NCCL's tuner picks it for small messages at scale.
- ``auto`` takes the fastest, as NCCL's tuner does (all-gather and reduce-scatter: ring only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from wanka.calibration import Calibration, default_calibration

__all__ = [
    "OPS",
    "CollectiveResult",
    "CommGroup",
    "Op",
    "bus_factor",
    "collective_time",
]

Op = Literal["all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "send_recv"]
OPS: tuple[str, ...] = ("all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "send_recv")
Num = float | npt.NDArray[np.float64]


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
    up_latency_s: float | None = None  # per hop; None = the calibration's scale_up_latency_s
    out_latency_s: float | None = None  # per hop; None = the calibration's scale_out_latency_s
    in_network_reduction: bool = False  # fabric SHARP: all-reduce across domains moves each byte once each way
    scale_up_reduction: bool = False  # NVLS: the scale-up switch reduces inside the domain
    # all-to-all only: share of the off-domain bytes that crosses the fabric. 1 = one copy per
    # destination rank (NCCL alltoall); < 1 = one copy per destination domain, forwarded over the
    # scale-up links there (node-deduplicated dispatch, DeepEP; DeepSeek-V3 Sec. 3.2.2)
    remote_dedup: Num = 1.0
    # the efficiencies and latencies used (None = the shipped calibration); the engine passes its own
    calibration: Calibration | None = None

    @property
    def cal(self) -> Calibration:
        return default_calibration() if self.calibration is None else self.calibration

    @property
    def scale_up_latency_s(self) -> float:
        return self.cal.scale_up_latency_s if self.up_latency_s is None else self.up_latency_s

    @property
    def scale_out_latency_s(self) -> float:
        return self.cal.scale_out_latency_s if self.out_latency_s is None else self.out_latency_s

    @property
    def domains(self) -> Num:
        """Scale-up domains the group spans."""
        return np.maximum(1.0, np.asarray(self.size, dtype=float) / np.asarray(self.per_domain, dtype=float))


@dataclass(frozen=True)
class CollectiveResult:
    """Time and nccl-tests style bandwidths of one collective."""

    op: str
    nbytes: Num
    size: Num
    time_s: Num
    algbw: Num
    busbw: Num
    algorithm: str

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


def _eff_bws(g: CommGroup) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    up = np.asarray(g.scale_up_bw, dtype=float) * g.cal.scale_up_efficiency
    out = np.asarray(g.scale_out_bw, dtype=float) * g.cal.scale_out_efficiency
    out = out / np.maximum(1.0, np.asarray(g.scale_out_contention, dtype=float))
    return up, out


def _ring(op: str, nbytes: Num, g: CommGroup) -> npt.NDArray[np.float64]:
    n = np.asarray(g.size, dtype=float)
    a = np.minimum(np.asarray(g.per_domain, dtype=float), n)
    up, out = _eff_bws(g)
    crosses = n > a  # the ring leaves the domain
    bw = np.where(crosses, np.minimum(up, a * out), up)
    steps = np.where(op == "all_reduce", 2.0 * (n - 1.0), n - 1.0)
    lat = np.where(crosses, g.scale_out_latency_s, g.scale_up_latency_s)
    return np.asarray(bus_factor(op, n) * np.asarray(nbytes, dtype=float) / bw + steps * lat)


def _hierarchical(op: str, nbytes: Num, g: CommGroup) -> npt.NDArray[np.float64]:
    n = np.asarray(g.size, dtype=float)
    a = np.maximum(1.0, np.minimum(np.asarray(g.per_domain, dtype=float), n))
    k = np.maximum(1.0, n / a)
    up, out = _eff_bws(g)
    s = np.asarray(nbytes, dtype=float)
    if op == "all_reduce":
        if g.scale_up_reduction:
            # NVLS: each GPU pushes its buffer to the switch once and pulls the reduced result once;
            # nccl-tests on DGX H100 reach ~275 GB/s algbw (NVLS_EFFICIENCY of the link rate)
            raw = np.asarray(g.scale_up_bw, dtype=float)
            inner = s / (raw * g.cal.nvls_efficiency) + 2.0 * g.scale_up_latency_s
        else:
            inner = 2.0 * (a - 1.0) / a * s / up + 2.0 * (a - 1.0) * g.scale_up_latency_s
        if g.in_network_reduction:
            outer = s / a / out + 2.0 * np.log2(np.maximum(k, 1.0)) * g.scale_out_latency_s
        else:
            outer = 2.0 * (k - 1.0) / k * (s / a) / out + 2.0 * (k - 1.0) * g.scale_out_latency_s
        return np.asarray(inner + outer)
    # all-gather / reduce-scatter: one pass of each level
    inner = (a - 1.0) / a * s / up + (a - 1.0) * g.scale_up_latency_s
    outer = (k - 1.0) / k * (s / a) / out + (k - 1.0) * g.scale_out_latency_s
    return np.asarray(inner + outer)


def _tree(nbytes: Num, g: CommGroup) -> npt.NDArray[np.float64]:
    # NCCL double binary tree (all-reduce only): intra-domain chain then a tree over domains;
    # each GPU moves ~nbytes/a over its NIC twice (reduce then broadcast), pipelined.
    n = np.asarray(g.size, dtype=float)
    a = np.maximum(1.0, np.minimum(np.asarray(g.per_domain, dtype=float), n))
    k = np.maximum(1.0, n / a)
    up, out = _eff_bws(g)
    s = np.asarray(nbytes, dtype=float)
    bw_time = np.maximum(2.0 * (a - 1.0) / a * s / up, 2.0 * s / a / out)
    lat = 2.0 * (a - 1.0) * g.scale_up_latency_s + 2.0 * np.ceil(np.log2(np.maximum(k, 1.0)) + 1) * (
        g.scale_out_latency_s
    )
    return np.asarray(np.where(k > 1, bw_time + lat, np.inf))


def _all_to_all(nbytes: Num, g: CommGroup) -> npt.NDArray[np.float64]:
    # Each rank sends nbytes/n to every peer: (a-1)/n of its buffer over the scale-up links and
    # (n-a)/n over its NIC; the two proceed in parallel, so the slower one sets the time.
    n = np.asarray(g.size, dtype=float)
    a = np.minimum(np.asarray(g.per_domain, dtype=float), n)
    up, out = _eff_bws(g)
    s = np.asarray(nbytes, dtype=float)
    eff = g.cal.a2a_efficiency / g.cal.scale_out_efficiency
    dedup = np.asarray(g.remote_dedup, dtype=float)
    # deduplicated copies arrive once per domain and are forwarded to the other ranks over NVLink
    t_up = (a - 1.0) / n * s / up + np.where(dedup < 1.0, (n - a) / n * s / up, 0.0)
    t_out = (n - a) / n * s * dedup / (out * eff)
    lat = (
        np.where(n > a, (n - a) * g.scale_out_latency_s / np.maximum(a, 1.0), 0.0)
        + (a - 1.0) * g.scale_up_latency_s / 4.0
    )
    return np.asarray(np.maximum(t_up, t_out) + lat)


def _send_recv(nbytes: Num, g: CommGroup) -> npt.NDArray[np.float64]:
    up, out = _eff_bws(g)
    same = np.asarray(g.per_domain, dtype=float) >= np.asarray(g.size, dtype=float)
    s = np.asarray(nbytes, dtype=float)
    return np.asarray(np.where(same, s / up + g.scale_up_latency_s, s / out + g.scale_out_latency_s))


def collective_time(
    op: str,
    nbytes: Num,
    group: CommGroup,
    algorithm: Literal["auto", "ring", "hierarchical", "tree"] = "auto",
) -> CollectiveResult:
    """Time of one collective on ``group``.

    >>> g = CommGroup(size=8, per_domain=8, scale_up_bw=450e9, scale_out_bw=50e9)
    >>> r = collective_time("all_reduce", 2**30, g)
    >>> round(float(r.busbw) / 1e9)  # DGX H100 NVLink all-reduce busbw, GB/s
    356
    """
    if op not in OPS:
        raise ValueError(f"op = {op!r}: must be one of {', '.join(OPS)}")
    s = np.asarray(nbytes, dtype=float)
    n = np.asarray(group.size, dtype=float)
    single = n <= 1
    if op == "all_to_all":
        t, algo = _all_to_all(s, group), "pairwise"
    elif op == "send_recv":
        t, algo = _send_recv(s, group), "p2p"
    elif op == "broadcast":
        # pipelined ring broadcast: bandwidth ~ one pass over the slowest hop
        t = _ring("all_gather", s, group) * n / np.maximum(n - 1.0, 1.0)
        algo = "ring"
    else:
        names = ["ring", "hierarchical", "tree"] if op == "all_reduce" else ["ring", "hierarchical"]
        if algorithm == "auto":
            # NCCL implements all-gather and reduce-scatter as rings only (its tuner has no tree
            # for them); the two-level scheme is available on request.
            names = names if op == "all_reduce" else ["ring"]
        elif algorithm not in names:
            raise ValueError(f"algorithm = {algorithm!r} is not available for {op}; use {', '.join(names)}")
        else:
            names = [algorithm]
        funcs = {
            "ring": lambda: _ring(op, s, group),
            "hierarchical": lambda: _hierarchical(op, s, group),
            "tree": lambda: _tree(s, group),
        }
        cands = [funcs[k]() for k in names]
        if len(cands) == 1:
            t, algo = cands[0], names[0]
        else:
            stack = np.stack(np.broadcast_arrays(*cands))
            best = np.argmin(stack, axis=0)
            t = np.min(stack, axis=0)
            algo = names[int(np.bincount(np.ravel(best), minlength=len(names)).argmax())]
    t = np.where(single, 0.0, np.asarray(t) + group.cal.collective_launch_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        algbw = np.where(t > 0, s / np.where(t > 0, t, 1.0), 0.0)
    busbw = algbw * bus_factor(op, np.maximum(n, 1.0))
    if np.ndim(t) == 0:
        return CollectiveResult(op, nbytes, group.size, float(t), float(algbw), float(busbw), algo)
    return CollectiveResult(op, nbytes, group.size, t, algbw, busbw, algo)
