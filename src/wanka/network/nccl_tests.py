"""nccl-tests style reports of the analytical collective model: a sweep over message sizes.

Mirrors ``all_reduce_perf -b 8 -e 8G -f 2``: sizes from ``min_bytes`` to ``max_bytes`` by ``factor``,
each row with time, algbw = size / time and busbw = algbw x the nccl-tests factor
(``nccl-tests/doc/PERFORMANCE.md``), and the algorithm and protocol NCCL's tuner would take (the
cheapest of :func:`~wanka.network.collectives.collective_candidates`).
Times come from :func:`wanka.network.collectives.collective_time` only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from wanka.network.collectives import OPS, CommGroup, bus_factor, collective_time
from wanka.units import GIB

__all__ = [
    "DTYPE_BYTES",
    "Calibration",
    "CollectiveSweep",
    "NcclLog",
    "collective_sweep",
    "fit_link_efficiency",
    "message_sizes",
    "nccl_row_fields",
    "parse_nccl_log",
    "parse_nccl_size",
]


def message_sizes(min_bytes: float = 8, max_bytes: float = 8 * GIB, factor: float = 2.0) -> npt.NDArray[np.float64]:
    """nccl-tests ``-b/-e/-f`` sizes: ``min_bytes, min_bytes*factor, ...`` up to ``max_bytes``.

    >>> message_sizes(8, 64).tolist()
    [8.0, 16.0, 32.0, 64.0]
    """
    if not 0 < min_bytes <= max_bytes or factor <= 1:
        raise ValueError(f"sizes {min_bytes}..{max_bytes} by {factor}: need 0 < min <= max and factor > 1")
    n = int(np.floor(np.log(max_bytes / min_bytes) / np.log(factor) + 1e-9)) + 1
    if n > 10_000:
        raise ValueError(f"{n} sizes requested; at most 10,000")
    return np.asarray(min_bytes * factor ** np.arange(n), dtype=float)


@dataclass(frozen=True)
class CollectiveSweep:
    """One nccl-tests table: per size, time (s), algbw and busbw (B/s) and the algorithm used."""

    op: str
    ranks: float
    per_domain: float
    in_network_reduction: bool
    sizes: npt.NDArray[np.float64]
    time_s: npt.NDArray[np.float64]
    algbw: npt.NDArray[np.float64]
    busbw: npt.NDArray[np.float64]
    algorithm: tuple[str, ...]
    protocol: tuple[str, ...] = ()

    @property
    def peak_busbw(self) -> float:
        return float(np.max(self.busbw))

    def to_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "ranks": self.ranks,
            "per_domain": self.per_domain,
            "in_network_reduction": self.in_network_reduction,
            "rows": [
                {
                    "bytes": float(s),
                    "time_s": float(t),
                    "algbw_bytes_per_s": float(a),
                    "busbw_bytes_per_s": float(b),
                    "algorithm": al,
                    "protocol": pr,
                }
                for s, t, a, b, al, pr in zip(
                    self.sizes, self.time_s, self.algbw, self.busbw, self.algorithm, self.protocol, strict=True
                )
            ],
            "peak_busbw_bytes_per_s": self.peak_busbw,
        }


def collective_sweep(
    op: str,
    group: CommGroup,
    sizes: npt.ArrayLike | None = None,
    *,
    in_network_reduction: bool | None = None,
    algorithm: str = "auto",
) -> CollectiveSweep:
    """The nccl-tests table of ``op`` on ``group`` (default sizes 8 B .. 8 GiB by 2x).

    ``in_network_reduction`` switches SHARP/NVLS on or off (default: the group's own setting);
    ``algorithm`` forces one of :data:`~wanka.network.collectives.ALGORITHMS` (NCCL_ALGO), else NCCL's choice.

    >>> g = CommGroup(size=8, per_domain=8, scale_up_bw=300e9, scale_out_bw=25e9)
    >>> round(collective_sweep("all_reduce", g).peak_busbw / 1e9)   # DGX A100 NVLink, GB/s
    240
    """
    if op not in OPS:
        raise ValueError(f"op = {op!r}: must be one of {', '.join(OPS)}")
    if np.ndim(group.size) or np.ndim(group.per_domain):
        raise ValueError("collective_sweep takes a single communicator (scalar size and per_domain)")
    if in_network_reduction is not None:
        group = replace(group, in_network_reduction=in_network_reduction)
    s = message_sizes() if sizes is None else np.asarray(sizes, dtype=float).ravel()
    r = collective_time(op, s, group, algorithm)
    t = np.broadcast_to(np.asarray(r.time_s, dtype=float), s.shape)
    algos = r.algorithms or (r.algorithm,) * s.size
    protos = r.protocols or (r.protocol,) * s.size
    with np.errstate(divide="ignore", invalid="ignore"):
        algbw = np.where(t > 0, s / np.where(t > 0, t, 1.0), 0.0)
    busbw = algbw * bus_factor(op, max(float(group.size), 1.0))
    return CollectiveSweep(
        op,
        float(group.size),
        float(group.per_domain),
        group.in_network_reduction,
        s,
        np.asarray(t, dtype=float),
        algbw,
        np.asarray(busbw, dtype=float),
        algos,
        protos,
    )


# ---------------------------------------------------------------- nccl-tests conventions
# Element sizes of nccl-tests' -d types (src/common.cu: ncclDataType sizes).
DTYPE_BYTES = {"int8": 1, "uint8": 1, "half": 2, "bfloat16": 2, "float": 4, "int32": 4, "uint32": 4, "double": 8}
_NCCL_SUFFIX = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_SI = {"b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12}
_IEC = {"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_nccl_size(text: str) -> float:
    """A size as nccl-tests' ``-b/-e`` read it: a bare suffix K, M, G, T is a power of 1024 (``1G`` =
    2^30 bytes, nccl-tests ``parsesize``); ``KiB/MiB/GiB`` are powers of 1024 too and ``kB/MB/GB`` powers of
    1000; a plain number is bytes.

    >>> parse_nccl_size("1G"), parse_nccl_size("1GB"), parse_nccl_size("256MiB"), parse_nccl_size("8")
    (1073741824.0, 1000000000.0, 268435456.0, 8.0)
    """
    t = text.strip().replace("_", "")
    i = len(t)
    while i and not (t[i - 1].isdigit() or t[i - 1] == "."):
        i -= 1
    num, unit = t[:i], t[i:].lower()
    try:
        value = float(num)
    except ValueError:
        raise ValueError(f"{text!r} is not a size: a number with K, M, G (x1024), KiB/MiB/GiB or kB/MB/GB") from None
    scale = _NCCL_SUFFIX.get(unit) or _IEC.get(unit) or _SI.get(unit)
    if scale is None:
        raise ValueError(f"{text!r}: unknown unit {unit!r}; use K, M, G (x1024), KiB/MiB/GiB or kB/MB/GB")
    return value * scale


def nccl_row_fields(op: str, size: float, ranks: float, dtype: str = "float") -> dict[str, Any]:
    """The ``count``, ``type``, ``redop`` and ``root`` columns nccl-tests prints for ``op`` at ``size`` bytes
    (``count`` is elements per rank for all-gather, reduce-scatter and all-to-all, as in its ``*_perf``)."""
    ws = DTYPE_BYTES[dtype]
    per_rank = op in ("all_gather", "reduce_scatter", "all_to_all")
    count = int(size // ws // (max(1, int(ranks)) if per_rank else 1))
    redop = "sum" if op in ("all_reduce", "reduce_scatter") else "none"
    root = 0 if op == "broadcast" else -1
    return {"count": count, "type": dtype, "redop": redop, "root": root}


@dataclass(frozen=True)
class NcclLog:
    """The table of one nccl-tests run: sizes (B), out-of-place time (s) and busbw (B/s), ranks, and the NCCL
    release the run printed (``NCCL version 2.27.3+cuda12.8``; None when the log has no such line)."""

    op: str | None
    ranks: int
    hosts: int
    sizes: npt.NDArray[np.float64]
    time_s: npt.NDArray[np.float64]
    busbw: npt.NDArray[np.float64]
    nccl_version: str | None = None


_PERF_OPS = {
    "all_reduce_perf": "all_reduce",
    "all_gather_perf": "all_gather",
    "reduce_scatter_perf": "reduce_scatter",
    "alltoall_perf": "all_to_all",
    "broadcast_perf": "broadcast",
    "sendrecv_perf": "send_recv",
}


_NCCL_VERSION = re.compile(r"\bNCCL version (\d+\.\d+\.\d+)")


def parse_nccl_log(text: str) -> NcclLog:
    """Rows of an nccl-tests output (``*_perf``): size, count, type, redop, [root], out-of-place time (us),
    algbw, busbw (GB/s), #wrong, in-place columns. Ranks are counted from the ``#  Rank`` lines."""
    sizes, times, bus = [], [], []
    ranks, hosts = 0, set()
    op = version = None
    for line in text.splitlines():
        s = line.strip()
        m = _NCCL_VERSION.search(s) if version is None else None
        if m:
            version = m.group(1)  # NCCL prints it once per process; the first is the run's
        for perf, name in _PERF_OPS.items():
            if perf in s:
                op = name
        if s.startswith("#") and " Rank " in f" {s} " and " on " in s:
            ranks += 1
            hosts.add(s.split(" on ", 1)[1].split()[0])
            continue
        tok = s.split()
        if len(tok) < 11 or not tok[0].isdigit() or not tok[1].isdigit():
            continue
        rest = tok[4:]
        if len(tok) >= 13:  # newer nccl-tests print a root column
            rest = tok[5:]
        try:
            t_us, _, b = float(rest[0]), float(rest[1]), float(rest[2])
        except ValueError:
            continue
        sizes.append(float(tok[0]))
        times.append(t_us * 1e-6)
        bus.append(b * 1e9)
    if not sizes:
        raise ValueError(
            "no nccl-tests result rows found (expected lines: size count type redop [root] time algbw busbw ...)"
        )
    return NcclLog(op, ranks, len(hosts), np.asarray(sizes), np.asarray(times), np.asarray(bus), version)


@dataclass(frozen=True)
class Calibration:
    """Link efficiencies fit to a measured nccl-tests table, and the fit's error before and after."""

    field: str  # the scenario field set: cluster.fabric.link_efficiency, cluster.scale_up.link_efficiency, ...
    value: float
    rows: int
    mape_before: float
    mape_after: float

    def overlay(self) -> dict[str, Any]:
        """The scenario fragment that sets the fitted value."""
        out: dict[str, Any] = {}
        node = out
        parts = self.field.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = round(self.value, 4)
        return out


def fit_link_efficiency(
    log: NcclLog, op: str, group: CommGroup, *, min_bytes: float = 64 * 2**20, algorithm: str = "auto"
) -> Calibration:
    """Fit the efficiency of the link that bounds ``op`` on ``group`` to the log's busbw (rows of at least
    ``min_bytes``: the bandwidth regime): the NIC's (``fabric.link_efficiency``) when the group spans
    domains, else NVLS's (``scale_up.nvls_efficiency``) when the model runs NVLS, else NVLink's. Least squares
    on log busbw over a grid of 0.05..1.0, then a finer one around the best. ``algorithm``: the one the log's
    run forced (``NCCL_ALGO``), else NCCL's choice."""
    keep = log.sizes >= min_bytes
    if not keep.any():
        keep = log.sizes >= log.sizes.max()
    s, meas = log.sizes[keep], log.busbw[keep]
    base = collective_time(op, s, group, algorithm)
    spans = float(np.max(group.domains)) > 1
    if spans:
        attr, fieldname = "out_efficiency", "cluster.fabric.link_efficiency"
    elif "nvls" in (base.algorithms or (base.algorithm,)):
        attr, fieldname = "nvls_efficiency", "cluster.scale_up.nvls_efficiency"
    else:
        attr, fieldname = "up_efficiency", "cluster.scale_up.link_efficiency"

    def with_eff(e: float) -> CommGroup:
        if attr == "out_efficiency":
            return replace(group, out_efficiency=e)
        if attr == "nvls_efficiency":
            return replace(group, nvls_efficiency=e)
        return replace(group, up_efficiency=e)

    def err(e: float) -> float:
        b = np.asarray(collective_time(op, s, with_eff(e), algorithm).busbw, dtype=float)
        return float(np.sum(np.log(b / meas) ** 2))

    grid = np.linspace(0.05, 1.0, 96)
    best = float(grid[int(np.argmin([err(e) for e in grid]))])
    fine = np.linspace(max(0.01, best - 0.01), min(1.0, best + 0.01), 41)
    best = float(fine[int(np.argmin([err(e) for e in fine]))])

    def mape(b: Any) -> float:
        return float(np.mean(np.abs(np.asarray(b, dtype=float) / meas - 1.0)))

    after = collective_time(op, s, with_eff(best), algorithm).busbw
    return Calibration(fieldname, best, int(s.size), mape(base.busbw), mape(after))
