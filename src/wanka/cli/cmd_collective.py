"""``wanka collective``: one collective's time, algbw and busbw (nccl-tests conventions), optionally a
size sweep and the flow-level contention of the fabric under ECMP and adaptive routing."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Annotated, Any

import typer
from rich.table import Table

from wanka.cli.app import app, console, emit_json
from wanka.errors import SpecError
from wanka.network.collectives import OPS, collective_time
from wanka.network.flow import collective_traffic, simulate
from wanka.network.groups import comm_group
from wanka.network.nccl_tests import collective_sweep
from wanka.network.topology import build_topology, default_switch, max_endpoints
from wanka.spec import ClusterSpec, FabricSpec, load_scenario
from wanka.units import format_bytes, format_duration, parse_bytes

__all__: list[str] = []

DEFAULT_ACCELERATOR = "H100-SXM5-80GB"


def _default_cluster(gpus: int) -> ClusterSpec:
    """A DGX-H100-like cluster: 8 GPUs per node, 400G InfiniBand per GPU, rail-optimised, fewest tiers."""
    sw = default_switch("infiniband")
    tiers = next((t for t in (1, 2, 3) if gpus <= max_endpoints(sw.radix, t)), 3)
    return ClusterSpec(
        name=f"dgx-h100-like-{gpus}",
        accelerator=DEFAULT_ACCELERATOR,
        nodes=max(1, math.ceil(gpus / 8)),
        gpus_per_node=8,
        fabric=FabricSpec(kind="infiniband", tiers=tiers, nic_gbps_per_gpu=400.0, rail_optimized=True),
    )


def _gbs(x: float) -> str:
    return f"{x / 1e9:,.2f}"


@app.command("collective")
def collective_cmd(
    op: Annotated[str, typer.Option("--op", help=f"one of {', '.join(OPS)}")] = "all_reduce",
    nbytes: Annotated[str, typer.Option("--bytes", help="per-rank buffer (nccl-tests size), e.g. 256MiB")] = "1GiB",
    gpus: Annotated[int | None, typer.Option("--gpus", help="ranks in the communicator")] = None,
    scenario: Annotated[
        str | None, typer.Option("--scenario", help="preset or file; default a DGX-H100-like cluster of --gpus GPUs")
    ] = None,
    stride: Annotated[int, typer.Option("--stride", help="rank spacing (e.g. tp for a DP group)")] = 1,
    flow: Annotated[bool, typer.Option("--flow", help="simulate fabric contention (flow level)")] = False,
    routing: Annotated[str | None, typer.Option("--routing", help="ecmp or adaptive (default: both)")] = None,
    placement: Annotated[str, typer.Option("--placement", help="contiguous or random (fragmented)")] = "contiguous",
    qps: Annotated[int, typer.Option("--qps", help="hashed sub-flows per connection")] = 1,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="ECMP hash / placement seed")] = 0,
    sweep: Annotated[bool, typer.Option("--sweep", help="nccl-tests table, 8 B .. 8 GiB by 2x")] = False,
    sharp: Annotated[
        bool | None, typer.Option("--sharp/--no-sharp", help="in-network reduction (SHARP/NVLS); default: the fabric's")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Time, algbw and busbw of one collective; with --flow the ECMP vs adaptive slowdown of the fabric."""
    if op not in OPS:
        raise SpecError(f"= {op!r}: must be one of {', '.join(OPS)}", field="--op")
    try:
        size_b = parse_bytes(nbytes)
    except ValueError as e:
        raise SpecError(str(e), field="--bytes") from None
    if not 0 < size_b <= 2**40:
        raise SpecError(f"= {nbytes!r}: must be between 1 B and 1 TiB", field="--bytes")
    if routing not in (None, "ecmp", "adaptive"):
        raise SpecError(f"= {routing!r}: must be ecmp or adaptive", field="--routing")
    if not 1 <= qps <= 64:
        raise SpecError(f"= {qps}: must be between 1 and 64", field="--qps")
    if gpus is not None and not 1 <= gpus <= 2_000_000:
        raise SpecError(f"= {gpus}: must be 1 .. 2,000,000", field="--gpus")
    if scenario is not None:
        cluster, default = load_scenario(scenario).cluster, False
        n = gpus if gpus is not None else cluster.accelerators
    else:
        n = gpus if gpus is not None else 8
        cluster, default = _default_cluster(n), True
    if n * stride > cluster.accelerators or stride < 1:
        raise SpecError(f"= {n} x stride {stride} exceeds the cluster's {cluster.accelerators:,} GPUs", field="--gpus")
    g = comm_group(cluster, n, stride)
    if sharp is not None:
        g = replace(g, in_network_reduction=sharp)
    r = collective_time(op, size_b, g)
    out: dict[str, Any] = {
        "cluster": cluster.name,
        "default_cluster": default,
        **r.to_dict(),
        "per_domain": g.per_domain,
        "in_network_reduction": g.in_network_reduction,
    }
    flows: dict[str, Any] = {}
    if flow:
        t = build_topology(cluster)
        traffic = collective_traffic(t, op, size_b, n, stride, placement, seed, qps)
        for rt in (routing,) if routing else ("ecmp", "adaptive"):
            res = simulate(t, traffic, rt, seed)
            adj = collective_time(op, size_b, replace(g, scale_out_contention=max(1.0, res.slowdown)))
            flows[rt] = {**res.to_dict(), "time_with_contention_s": adj.time_s, "busbw_with_contention": adj.busbw}
        out["flow"] = {"placement": placement, "qps": qps, "seed": seed, "traffic_level": traffic.level, **flows}
    sw = collective_sweep(op, g) if sweep else None
    if sw is not None:
        out["sweep"] = sw.to_dict()
    if json_out:
        emit_json(out)
        return
    where = (
        (
            f"default cluster: DGX-H100-like, {cluster.nodes:,} nodes × 8 H100, 400G InfiniBand per GPU, "
            f"{cluster.fabric.tiers}-tier rail-optimised (use --scenario for another)"
        )
        if default
        else cluster.name
    )
    console.print(
        f"[bold]{op}[/] {format_bytes(size_b)} on {n:,} ranks (stride {stride}, {g.per_domain:g} per "
        f"scale-up domain) · {where}"
    )
    console.print(
        f"time {format_duration(float(r.time_s))} · algbw {_gbs(float(r.algbw))} GB/s · busbw "
        f"{_gbs(float(r.busbw))} GB/s · algorithm {r.algorithm}"
        f"{' · in-network reduction' if g.in_network_reduction else ''}"
    )
    if sw is not None:
        tab = Table(show_header=True, header_style="bold")
        for col in ("size (B)", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "algorithm"):
            tab.add_column(col, justify="right" if col != "algorithm" else "left")
        for s, tm, a, b, al in zip(sw.sizes, sw.time_s, sw.algbw, sw.busbw, sw.algorithm, strict=True):
            tab.add_row(f"{s:,.0f}", f"{tm * 1e6:,.1f}", _gbs(a), _gbs(b), al)
        console.print(tab)
    if flows:
        tab = Table(
            show_header=True,
            header_style="bold",
            title=f"flow level · {placement} placement · {traffic.flows:,} flows ({traffic.level})",
        )
        for col in (
            "routing",
            "slowdown",
            "done",
            "ideal",
            "util p50",
            "p99",
            "max",
            "ECMP imb.",
            "collective",
        ):
            tab.add_column(col, justify="right")
        for rt, d in flows.items():
            p = d["utilization_percentiles"]
            tab.add_row(
                rt,
                f"{d['slowdown']:.3f}×",
                format_duration(d["completion_time_s"]),
                format_duration(d["ideal_time_s"]),
                f"{p['p50']:.0%}",
                f"{p['p99']:.0%}",
                f"{p['max']:.0%}",
                f"{d['ecmp_imbalance']:.2f}",
                format_duration(float(d["time_with_contention_s"])),
            )
        console.print(tab)
        for rt, d in flows.items():
            hot = ", ".join(f"{h['link']} {h['utilization']:.0%}" for h in d["hottest_links"][:3])
            console.print(f"  hottest ({rt}): {hot}", markup=False)
