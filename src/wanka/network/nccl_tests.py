"""nccl-tests style reports of the analytical collective model: a sweep over message sizes.

Mirrors ``all_reduce_perf -b 8 -e 8G -f 2``: sizes from ``min_bytes`` to ``max_bytes`` by ``factor``,
each row with time, algbw = size / time and busbw = algbw x the nccl-tests factor
(``nccl-tests/doc/PERFORMANCE.md``), and the algorithm and protocol NCCL's tuner would take (the
cheapest of :func:`~wanka.network.collectives.collective_candidates`).
Times come from :func:`wanka.network.collectives.collective_time` only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from wanka.network.collectives import OPS, CommGroup, bus_factor, collective_time
from wanka.units import GIB

__all__ = ["CollectiveSweep", "collective_sweep", "message_sizes"]


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
) -> CollectiveSweep:
    """The nccl-tests table of ``op`` on ``group`` (default sizes 8 B .. 8 GiB by 2x).

    ``in_network_reduction`` switches SHARP/NVLS on or off (default: the group's own setting).

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
    r = collective_time(op, s, group)
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
