"""Published nccl-tests results against the collective model: busbw error per row, MAPE by role.

Rows and sources: ``benchmarks/nccl_tests_published.yaml``. Rows with ``role: fit`` set a model
constant (consistency checks); ``role: check`` rows were never used to set one (held out).
A setup published at several sizes is also fitted to ``time = latency + bytes / bandwidth`` on both
sides (:func:`series`: is a miss in the latency or in the bandwidth?), and rows missed by more than
25% print their ``note`` (what the source leaves open). Run: ``.venv/bin/python -m benchmarks.check_nccl_tests``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from wanka.catalog import accelerator
from wanka.network.collectives import CommGroup, bus_factor, collective_time
from wanka.units import gbps_to_bytes_per_s

DATA = Path(__file__).with_name("nccl_tests_published.yaml")
# what rows of one series (one run at several sizes) share
_SETUP = ("gpus", "per_domain", "accelerator", "nic_gbps", "fabric", "op", "nvls", "sharp", "algorithm")


@dataclass(frozen=True)
class Row:
    id: str
    role: str
    single_domain: bool
    published: float
    predicted: float
    algorithm: str
    protocol: str
    nbytes: float = 0.0
    factor: float = 1.0  # nccl-tests busbw / algbw
    setup: tuple[object, ...] = ()  # what a series of sizes shares (ranks, domain, GPU, NIC, op, switches)
    note: str = ""

    @property
    def error(self) -> float:
        return self.predicted / self.published - 1.0


@dataclass(frozen=True)
class Series:
    """Rows of one setup at several sizes, each side fitted to ``time = latency + bytes / bandwidth``
    (least squares on the times nccl-tests reports): says whether a miss is in the latency or in the
    bandwidth. Bandwidths are given as busbw (GB/s), latencies in ms."""

    ids: tuple[str, ...]
    published_latency_ms: float
    published_busbw: float
    model_latency_ms: float
    model_busbw: float


def _fit(nbytes: list[float], times: list[float]) -> tuple[float, float]:
    slope, intercept = np.polyfit(np.asarray(nbytes), np.asarray(times), 1)
    return float(intercept), float(1.0 / slope) if slope > 0 else float("inf")


def series(rows: list[Row]) -> list[Series]:
    """Every setup published at two or more sizes, fitted (see :class:`Series`)."""
    groups: dict[tuple[object, ...], list[Row]] = {}
    for r in rows:
        groups.setdefault(r.setup, []).append(r)
    out = []
    for rs in groups.values():
        if len({r.nbytes for r in rs}) < 2:
            continue
        s = [r.nbytes for r in rs]
        lp, bp = _fit(s, [r.nbytes * r.factor / (r.published * 1e9) for r in rs])
        lm, bm = _fit(s, [r.nbytes * r.factor / (r.predicted * 1e9) for r in rs])
        f = rs[0].factor
        out.append(Series(tuple(r.id for r in rs), lp * 1e3, bp * f / 1e9, lm * 1e3, bm * f / 1e9))
    return out


def load_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = yaml.safe_load(DATA.read_text())["rows"]
    return rows


def predict(row: dict[str, Any]) -> Row:
    acc = accelerator(row["accelerator"])
    g = CommGroup(
        size=float(row["gpus"]),
        per_domain=float(row["per_domain"]),
        scale_up_bw=acc.scale_up_bandwidth,
        scale_out_bw=gbps_to_bytes_per_s(row["nic_gbps"]),
        scale_up_reduction=bool(row.get("nvls", False)),
        in_network_reduction=bool(row.get("sharp", False)),
        architecture=acc.architecture,
    )
    r = collective_time(row["op"], float(row["bytes"]), g, row.get("algorithm") or "auto")
    setup = tuple(row.get(k) for k in _SETUP)
    return Row(
        row["id"],
        row["role"],
        row["gpus"] <= row["per_domain"],
        float(row["busbw_gbs"]),
        float(r.busbw) / 1e9,
        r.algorithm,
        r.protocol,
        float(row["bytes"]),
        float(bus_factor(row["op"], float(row["gpus"]))),
        setup,
        str(row.get("note", "")),
    )


def mape(rows: list[Row]) -> float:
    return sum(abs(r.error) for r in rows) / len(rows) if rows else 0.0


def main() -> None:
    rows = [predict(r) for r in load_rows()]
    print(f"{'row':<28} {'role':<6} {'published':>9} {'model':>8} {'error':>7}  algorithm/protocol")
    for r in rows:
        print(
            f"{r.id:<28} {r.role:<6} {r.published:9.1f} {r.predicted:8.1f} {r.error:+7.1%}  {r.algorithm}/{r.protocol}"
        )
    for label, sel in (
        ("all rows", rows),
        ("check rows (held out)", [r for r in rows if r.role == "check"]),
        ("fit rows (consistency)", [r for r in rows if r.role == "fit"]),
        ("multi-domain rows", [r for r in rows if not r.single_domain]),
        ("single-domain rows", [r for r in rows if r.single_domain]),
    ):
        worst = max(sel, key=lambda r: abs(r.error))
        print(f"{label:<24} n={len(sel):>2}  MAPE {mape(sel):6.1%}  worst {worst.id} {worst.error:+.1%}")
    print("\nseries fitted to time = latency + bytes / bandwidth (busbw GB/s, latency ms): published | model")
    for sr in series(rows):
        print(
            f"  {sr.ids[0]:<26} .. {sr.ids[-1]:<22} busbw {sr.published_busbw:6.0f} | {sr.model_busbw:6.0f}"
            f"   latency {sr.published_latency_ms:6.2f} | {sr.model_latency_ms:6.2f}"
        )
    print("\nrows beyond 25% and what their sources leave open (benchmarks/nccl_tests_published.yaml, note):")
    for r in rows:
        if abs(r.error) > 0.25:
            print(f"  {r.id}: {r.note or 'NO NOTE'}")


if __name__ == "__main__":
    main()
