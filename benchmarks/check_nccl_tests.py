"""Published nccl-tests results against the collective model: busbw error per row, MAPE by role.

Rows and sources: ``benchmarks/nccl_tests_published.yaml``. Rows with ``role: fit`` set a model
constant (consistency checks); ``role: check`` rows were never used to set one (held out).
A setup published at several sizes is also fitted to ``time = latency + bytes / bandwidth`` on both
sides (:func:`series`: is a miss in the latency or in the bandwidth?), and rows missed by more than
25% print their ``note`` (what the source leaves open). Run: ``.venv/bin/python -m benchmarks.check_nccl_tests``.

Fabric load balancing (:func:`wanka.network.ecmp.collective_ecmp_slowdown`): NCCL's tuner picks the
algorithm without knowing the fabric's routing; on a fabric that hashes flows statically (ECMP, the
default of RoCE) the chosen algorithm's flows (channels x queue pairs per NIC) then collide on the leaf
uplinks, and its fabric part slows by the expected busiest uplink. A row's ``routing``, ``channels``,
``qps_per_connection`` and ``rail_optimized`` come from its source where it states them; otherwise the
defaults below apply and the check prints them as assumptions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from wanka.catalog import accelerator, default_scale_up_fabric
from wanka.network.collectives import CommGroup, bus_factor, collective_time
from wanka.network.ecmp import collective_ecmp_slowdown
from wanka.network.flow import DEFAULT_ROUTING
from wanka.network.groups import full_mesh_share
from wanka.network.topology import build_topology
from wanka.spec.cluster import ClusterSpec
from wanka.units import gbps_to_bytes_per_s

DATA = Path(__file__).with_name("nccl_tests_published.yaml")
# what rows of one series (one run at several sizes) share
_SETUP = ("gpus", "per_domain", "accelerator", "nic_gbps", "fabric", "op", "nvls", "sharp", "algorithm")
# Where a source does not publish its fabric (ECMP rows only; adaptive routing spreads evenly):
# - layout: top-of-rack leaves of whole nodes (rail_optimized false) of wanka's default switch for the
#   fabric kind, nodes in rank order (the hostfile lists them rack by rack). A rail-optimised fabric whose
#   rail leaf holds every node of the job hashes nothing (slowdown 1).
# - channels: 2 per NIC (one graph channel per NIC, duplicated by connect.cc: nChannels*2; the 16 that
#   NCCL#1218 pins with NCCL_MIN/MAX_NCHANNELS on 8 NICs); queue pairs per connection: 1
#   (NCCL_IB_QPS_PER_CONNECTION default).
ASSUMED_RAIL_OPTIMIZED = False
ASSUMED_CHANNELS_PER_NIC = 2
ASSUMED_QPS = 1


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
    setup: tuple[object, ...] = ()  # what a series of sizes shares (ranks, domain, GPU, NIC, op, switches, source)
    note: str = ""
    ecmp: float = 1.0  # slowdown of the fabric part from static ECMP hashing (1 = adaptive / none)
    assumed: str = ""  # the fabric facts the source leaves out and the check assumed

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


def _ecmp(row: dict[str, Any], algorithm: str) -> tuple[float, str]:
    """Expected ECMP slowdown of ``algorithm``'s flows on the row's fabric, and what was assumed."""
    kind = str(row["fabric"])
    routing = row.get("routing") or DEFAULT_ROUTING[kind]
    gpn = int(row.get("gpus_per_node", min(int(row["per_domain"]), 8)))
    nodes = int(row["gpus"]) // gpn
    if routing != "ecmp" or nodes < 2 or algorithm not in ("ring", "tree", "nvls_tree"):
        return 1.0, ""
    said = []
    if "routing" not in row:
        said.append(f"routing {routing} ({kind} default)")
    rail = row.get("rail_optimized", ASSUMED_RAIL_OPTIMIZED)
    if "rail_optimized" not in row:
        said.append("top-of-rack leaves" if not rail else "rail-optimised leaves")
    channels = int(row.get("channels", ASSUMED_CHANNELS_PER_NIC * gpn))
    if "channels" not in row:
        said.append(f"{channels} channels")
    qps = int(row.get("qps_per_connection", ASSUMED_QPS))
    if "qps_per_connection" not in row:
        said.append(f"{qps} QP per connection")
    cluster = ClusterSpec(
        accelerator=row["accelerator"],
        nodes=nodes,
        gpus_per_node=gpn,
        fabric={"kind": kind, "nic_gbps_per_gpu": row["nic_gbps"], "rail_optimized": rail, "routing": routing},
    )
    t = build_topology(cluster)
    factor = collective_ecmp_slowdown(t, algorithm, nodes, channels=channels, qps=qps, routing=routing)
    if t.tiers < 2:
        layout = f"{nodes} nodes on one switch ({t.switch_name}): nothing hashed"
    else:
        layout = f"{t.nodes_per_leaf} nodes / {t.uplinks_per_leaf} uplinks per leaf ({t.switch_name})"
    return factor, f"{layout}; assumed: {', '.join(said)}" if said else layout


def predict(row: dict[str, Any]) -> Row:
    acc = accelerator(row["accelerator"])
    # a group of fewer ranks than its board's full mesh reaches its peers over a-1 of the D-1 links
    # (``domain``: GPUs on the board, default the group's ranks per domain), as network.groups does
    a, d = float(row["per_domain"]), int(row.get("domain", row["per_domain"]))
    share = float(full_mesh_share(a, d)) if default_scale_up_fabric(acc.name, d) is not None else 1.0
    g = CommGroup(
        size=float(row["gpus"]),
        per_domain=a,
        scale_up_bw=acc.scale_up_bandwidth * share,
        scale_out_bw=gbps_to_bytes_per_s(row["nic_gbps"]),
        scale_up_reduction=bool(row.get("nvls", False)),
        up_efficiency=acc.scale_up_link_efficiency,  # the link technology's measured share, as comm_group
        nvls_link_efficiency=acc.scale_up_nvls_efficiency,  # and its switch generation's NVLS share
        in_network_reduction=bool(row.get("sharp", False)),
        architecture=acc.architecture,
        nccl_version=row.get("nccl"),
    )
    r = collective_time(row["op"], float(row["bytes"]), g, row.get("algorithm") or "auto")
    # NCCL's tuner chose without the fabric's hashing; the chosen algorithm then runs on it
    ecmp, assumed = _ecmp(row, r.algorithm)
    if ecmp > 1.0:
        g = CommGroup(**{**vars(g), "scale_out_contention": ecmp})
        r = collective_time(row["op"], float(row["bytes"]), g, r.algorithm, protocol=r.protocol)
    # a series is one run at several sizes: the same setup from the same source (its first word: the
    # repository, issue or post), never two sources' rows of one configuration joined
    setup = (*(row.get(k) for k in _SETUP), str(row["source"]).split()[0].rstrip(":,"))
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
        ecmp,
        assumed,
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
    print("\nstatic ECMP on the rows' fabrics (expected busiest uplink / flows per NIC; adaptive routing: 1):")
    for r in rows:
        if r.assumed:
            print(f"  {r.id:<28} x{r.ecmp:.2f} {r.algorithm:<9} {r.assumed}")
    print("\nrows beyond 25% and what their sources leave open (benchmarks/nccl_tests_published.yaml, note):")
    for r in rows:
        if abs(r.error) > 0.25:
            print(f"  {r.id}: {r.note or 'NO NOTE'}")


if __name__ == "__main__":
    main()
