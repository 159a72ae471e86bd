"""``wanka collective``: one collective's time, algbw and busbw in nccl-tests' conventions and columns,
optionally a size sweep, the flow-level contention of the fabric under ECMP and adaptive routing, and
``--calibrate LOG`` to fit the link efficiencies of the user's own cluster to an nccl-tests log."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.table import Table

from wanka.catalog import catalog
from wanka.cli.app import app, console, emit_json, print_table, write_text_atomic
from wanka.cli.lang import tr, tx
from wanka.errors import SpecError
from wanka.network.collectives import OPS, algorithm_name, collective_time, forced_algorithm_problem
from wanka.network.flow import collective_traffic, simulate
from wanka.network.groups import comm_group
from wanka.network.nccl_tests import (
    DTYPE_BYTES,
    collective_sweep,
    fit_link_efficiency,
    message_sizes,
    nccl_row_fields,
    parse_nccl_log,
    parse_nccl_size,
)
from wanka.network.topology import _reach, default_switch
from wanka.spec import ClusterSpec, FabricSpec, ScaleUpSpec, load_scenario
from wanka.units import format_bytes, format_duration, gbps_to_bytes_per_s

__all__: list[str] = []

DEFAULT_ACCELERATOR = "H100-SXM5-80GB"


def _algorithm(text: str) -> str:
    """``--algo``: auto, one of wanka's algorithm names, or NCCL_ALGO's."""
    try:
        return algorithm_name(text)
    except ValueError as e:
        raise SpecError(str(e), field="--algo") from None


def _default_cluster(gpus: int) -> ClusterSpec:
    """A DGX-H100-like cluster: 8 GPUs per node on NVSwitch with NVLink SHARP (NCCL's default on DGX H100),
    400G InfiniBand per GPU, rail-optimised, the fewest tiers of the default InfiniBand switch, or of the
    smallest catalog InfiniBand switch whose three tiers reach it."""
    nodes = max(1, -(-gpus // 8))
    sw = default_switch("infiniband")
    nic = gbps_to_bytes_per_s(400.0)
    if _reach(sw, 3, 1.0, nic) < nodes * 8:
        fits = sorted(
            (s.radix * s.port_bandwidth, s.name)
            for s in catalog().switches
            if s.protocol == "infiniband" and _reach(s, 3, 1.0, nic) >= nodes * 8
        )
        sw = next((s for s in catalog().switches if fits and s.name == fits[0][1]), sw)
    return ClusterSpec(
        name=f"dgx-h100-like-{gpus}",
        accelerator=DEFAULT_ACCELERATOR,
        nodes=nodes,
        gpus_per_node=8,
        scale_up=ScaleUpSpec(in_switch_reduction=True),
        fabric=FabricSpec(kind="infiniband", nic_gbps_per_gpu=400.0, rail_optimized=True, switch=sw.name),
    )


def _gbs(x: float) -> str:
    return f"{x / 1e9:,.2f}"


def _nccl_rows(
    op: str, sizes: Any, times: Any, algbw: Any, busbw: Any, ranks: float, dtype: str
) -> list[dict[str, Any]]:
    rows = []
    for s, t, a, b in zip(sizes, times, algbw, busbw, strict=True):
        timing = {"time_us": float(t) * 1e6, "algbw_gbs": float(a) / 1e9, "busbw_gbs": float(b) / 1e9}
        rows.append(
            {
                "size_bytes": int(s),
                **nccl_row_fields(op, float(s), ranks, dtype),
                "out_of_place": timing,
                "in_place": dict(timing),
            }
        )
    return rows


def _print_nccl_table(rows: list[dict[str, Any]], algos: tuple[str, ...], protos: tuple[str, ...]) -> None:
    """The all_reduce_perf table: size, count, type, redop, root, then time/algbw/busbw out of place and in place."""
    tab = Table(
        show_header=True,
        header_style="bold",
        title=tr(
            "size B · count elements · time us · algbw, busbw GB/s · out-of-place | in-place (the model: same)",
            "size 字节 · count 元素数 · time 微秒 · algbw、busbw GB/s · 非原地 | 原地（模型中相同）",
        ),
    )
    for col in ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "time ", "algbw ", "busbw "):
        tab.add_column(col, justify="right")
    tab.add_column("algo/proto")
    for r, al, pr in zip(rows, algos, protos, strict=True):
        o, i = r["out_of_place"], r["in_place"]
        tab.add_row(
            f"{r['size_bytes']:,}",
            f"{r['count']:,}",
            r["type"],
            r["redop"],
            str(r["root"]),
            f"{o['time_us']:,.1f}",
            f"{o['algbw_gbs']:.2f}",
            f"{o['busbw_gbs']:.2f}",
            f"{i['time_us']:,.1f}",
            f"{i['algbw_gbs']:.2f}",
            f"{i['busbw_gbs']:.2f}",
            f"{al}/{pr}",
        )
    print_table(tab)


def _check_algorithm(algorithm: str, op: str, g: Any) -> None:
    """A forced algorithm the group cannot run: say which switch turns it on."""
    problem = forced_algorithm_problem(algorithm, op, g)
    if problem is not None:
        flag = " (--sharp)" if "CollNet" in problem else " (--nvls)" if "NVLS" in problem else ""
        raise SpecError(problem + flag, field="--algo")


@app.command("collective")
def collective_cmd(
    op: Annotated[str, typer.Option("--op", help=f"one of {', '.join(OPS)}")] = "all_reduce",
    nbytes: Annotated[
        str,
        typer.Option(
            "--bytes",
            help="nccl-tests size (per-rank buffer for all_reduce; gathered buffer for all_gather): "
            "K, M, G are powers of 1024 as in nccl-tests -b/-e (1G = 2^30 B); KiB/GiB too; kB/MB/GB are 10^3/10^6/10^9",
        ),
    ] = "1G",
    gpus: Annotated[int | None, typer.Option("--gpus", help="ranks in the communicator")] = None,
    scenario: Annotated[
        str | None, typer.Option("--scenario", help="preset or file; default a DGX-H100-like cluster of --gpus GPUs")
    ] = None,
    stride: Annotated[int, typer.Option("--stride", help="rank spacing (e.g. tp for a DP group)")] = 1,
    dtype: Annotated[str, typer.Option("--dtype", help=f"nccl-tests -d: {', '.join(DTYPE_BYTES)}")] = "float",
    flow: Annotated[bool, typer.Option("--flow", help="simulate fabric contention (flow level)")] = False,
    routing: Annotated[str | None, typer.Option("--routing", help="ecmp or adaptive (default: both)")] = None,
    placement: Annotated[str, typer.Option("--placement", help="contiguous or random (fragmented)")] = "contiguous",
    qps: Annotated[int, typer.Option("--qps", help="hashed sub-flows per connection")] = 1,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="ECMP hash / placement seed")] = 0,
    sweep: Annotated[bool, typer.Option("--sweep", help="nccl-tests table from --min-bytes to --max-bytes")] = False,
    min_bytes: Annotated[str, typer.Option("--min-bytes", help="sweep start (nccl-tests -b)")] = "8",
    max_bytes: Annotated[str, typer.Option("--max-bytes", help="sweep end (nccl-tests -e)")] = "8G",
    step_factor: Annotated[float, typer.Option("--step-factor", help="sweep multiplier (nccl-tests -f)")] = 2.0,
    sharp: Annotated[
        bool | None,
        typer.Option(
            "--sharp/--no-sharp",
            help="fabric SHARP only (InfiniBand in-network reduction, NCCL CollNet) for all_reduce across "
            "domains; default: the fabric's. NVLink SHARP is --nvls",
        ),
    ] = None,
    nvls: Annotated[
        bool | None,
        typer.Option("--nvls/--no-nvls", help="NVLink SHARP (NVLS) inside the scale-up domain; default: the cluster's"),
    ] = None,
    calibrate: Annotated[
        Path | None,
        typer.Option("--calibrate", help="nccl-tests log of this cluster: fit its link efficiency, write an overlay"),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="overlay file for --calibrate (default: LOG.calibration.yaml)")
    ] = None,
    algo: Annotated[
        str,
        typer.Option(
            "--algo",
            help="force an algorithm as NCCL_ALGO does: ring, tree, nvls, nvls_tree, collnet (CollNetDirect), "
            "collnet_chain (CollNetChain), pat, hierarchical; NCCL's names too; default: the cheapest (NCCL's tuner). "
            "With --calibrate: the algorithm the log's run forced",
        ),
    ] = "auto",
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Time, algbw and busbw of one collective as nccl-tests prints them; --flow adds ECMP vs adaptive
    fabric contention, --calibrate fits the cluster's link efficiency to an nccl-tests log."""
    if op not in OPS:
        raise SpecError(f"= {op!r}: must be one of {', '.join(OPS)}", field="--op")
    if dtype not in DTYPE_BYTES:
        raise SpecError(f"= {dtype!r}: must be one of {', '.join(DTYPE_BYTES)}", field="--dtype")
    sizes_b = {}
    for name, text in (("--bytes", nbytes), ("--min-bytes", min_bytes), ("--max-bytes", max_bytes)):
        try:
            sizes_b[name] = parse_nccl_size(text)
        except ValueError as e:
            raise SpecError(str(e), field=name) from None
        if not 0 < sizes_b[name] <= 2**40:
            raise SpecError(f"= {text!r}: must be between 1 B and 1 TiB", field=name)
    size_b = sizes_b["--bytes"]
    algorithm = _algorithm(algo)
    if routing not in (None, "ecmp", "adaptive"):
        raise SpecError(f"= {routing!r}: must be ecmp or adaptive", field="--routing")
    if not 1 <= qps <= 64:
        raise SpecError(f"= {qps}: must be between 1 and 64", field="--qps")
    if gpus is not None and not 1 <= gpus <= 2_000_000:
        raise SpecError(f"= {gpus}: must be 1 .. 2,000,000", field="--gpus")
    log = None
    if calibrate is not None:
        try:
            log = parse_nccl_log(calibrate.read_text(encoding="utf-8", errors="replace"))
        except OSError as e:
            raise SpecError(f"= {str(calibrate)!r}: cannot read ({e.strerror})", field="--calibrate") from None
        except ValueError as e:
            raise SpecError(f"= {str(calibrate)!r}: {e}", field="--calibrate") from None
        op = log.op or op
        gpus = gpus if gpus is not None else (log.ranks or None)
        if gpus is None:
            raise SpecError("the log lists no '#  Rank' lines; give the rank count with --gpus", field="--calibrate")
    if scenario is not None:
        cluster, default = load_scenario(scenario).cluster, False
        n = gpus if gpus is not None else cluster.accelerators
    else:
        n = gpus if gpus is not None else 8
        cluster, default = _default_cluster(n), True
    if n * stride > cluster.accelerators or stride < 1:
        raise SpecError(f"= {n} x stride {stride} exceeds the cluster's {cluster.accelerators:,} GPUs", field="--gpus")
    g = comm_group(cluster, n, stride)
    if sharp and cluster.fabric.kind != "infiniband":
        raise SpecError(
            f"fabric SHARP reduces in InfiniBand switches; this fabric is {cluster.fabric.kind} (use --nvls for "
            "NVLink SHARP inside the scale-up domain)",
            field="--sharp",
        )
    if sharp is not None:
        g = replace(g, in_network_reduction=sharp)
    if nvls is not None:
        g = replace(g, scale_up_reduction=nvls)
    _check_algorithm(algorithm, op, g)
    if log is not None:
        if log.nccl_version is not None and g.nccl_version is None:
            # the run's own NCCL release (parse_nccl_log reads only d.d.d): its graph search sets the NICs a
            # domain drives, its NVLS channel count the pipeline fill, so the share is fit through what it ran
            g = replace(g, nccl_version=log.nccl_version)
        _calibrate(log, op, g, calibrate, out, scenario, cluster, json_out, algorithm)
        return
    try:
        r = collective_time(op, size_b, g, algorithm)
    except ValueError as e:
        raise SpecError(str(e).removeprefix("algorithm "), field="--algo") from None
    result: dict[str, Any] = {
        "cluster": cluster.name,
        "default_cluster": default,
        **r.to_dict(),
        "per_domain": g.per_domain,
        "in_network_reduction": g.in_network_reduction,
        "nvls": g.scale_up_reduction,
        "units": "bytes as nccl-tests (1G = 2^30 B); algbw/busbw in GB/s = 1e9 B/s",
        "nccl_tests": _nccl_rows(op, [size_b], [r.time_s], [r.algbw], [r.busbw], n, dtype),
    }
    flows: dict[str, Any] = {}
    if flow:
        from wanka.network.topology import build_topology

        t = build_topology(cluster)
        traffic = collective_traffic(t, op, size_b, n, stride, placement, seed, qps)
        for rt in (routing,) if routing else ("ecmp", "adaptive"):
            res = simulate(t, traffic, rt, seed)
            adj = collective_time(op, size_b, replace(g, scale_out_contention=max(1.0, res.slowdown)), algorithm)
            flows[rt] = {**res.to_dict(), "time_with_contention_s": adj.time_s, "busbw_with_contention": adj.busbw}
        result["flow"] = {"placement": placement, "qps": qps, "seed": seed, "traffic_level": traffic.level, **flows}
    sw = None
    if sweep:
        try:
            grid = message_sizes(sizes_b["--min-bytes"], sizes_b["--max-bytes"], step_factor)
        except ValueError as e:
            raise SpecError(str(e), field="--min-bytes/--max-bytes/--step-factor") from None
        sw = collective_sweep(op, g, grid, algorithm=algorithm)
        result["sweep"] = sw.to_dict()
        result["sweep"]["nccl_tests"] = _nccl_rows(op, sw.sizes, sw.time_s, sw.algbw, sw.busbw, n, dtype)
    if json_out:
        emit_json(result)
        return
    where = (
        tr(
            f"default cluster: DGX-H100-like, {cluster.nodes:,} nodes × 8 H100 (NVLS on), 400G InfiniBand per GPU, "
            f"rail-optimised, switch {cluster.fabric.switch} (use --scenario for another)",
            f"默认集群：类 DGX-H100，{cluster.nodes:,} 节点 × 8 H100（开启 NVLS），每卡 400G InfiniBand，"
            f"轨道优化，交换机 {cluster.fabric.switch}（其他集群用 --scenario）",
        )
        if default
        else cluster.name
    )
    console.print(
        f"[bold]{op}[/] {format_bytes(size_b)} ({size_b:,.0f} B)"
        + tr(
            f" on {n:,} ranks (stride {stride}, {g.per_domain:g} per scale-up domain)",
            f"，{n:,} 个 rank（步长 {stride}，每个超节点互联域 {g.per_domain:g} 个）",
        )
        + f" · {where}"
    )
    accel = [x for x, on in (("NVLink SHARP", g.scale_up_reduction), ("fabric SHARP", g.in_network_reduction)) if on]
    console.print(
        f"{tr('time', '耗时')} {format_duration(float(r.time_s))} · algbw {_gbs(float(r.algbw))} GB/s · busbw "
        f"{_gbs(float(r.busbw))} GB/s · {r.algorithm}/{r.protocol}" + (f" · {', '.join(accel)}" if accel else "")
    )
    if sw is not None:
        _print_nccl_table(result["sweep"]["nccl_tests"], sw.algorithm, sw.protocol or ("",) * sw.sizes.size)
    else:
        _print_nccl_table(result["nccl_tests"], (r.algorithm,), (r.protocol,))
    if flows and traffic.flows == 0:
        console.print(
            tr(
                "flow level: no fabric traffic (every rank of each group sits in one scale-up domain)",
                "流级仿真：无网络流量（每组所有 rank 都在同一个超节点互联域内）",
            )
        )
    elif flows:
        tab = Table(
            show_header=True,
            header_style="bold",
            title=tr(
                f"flow level · {placement} placement · {traffic.flows:,} flows ({traffic.level})",
                f"流级仿真 · {placement} 放置 · {traffic.flows:,} 条流（{traffic.level}）",
            ),
        )
        for col in ("routing", "slowdown", "done", "ideal", "util p50", "p99", "max", "ECMP imb.", "collective"):
            tab.add_column(tx(col), justify="right")
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
        print_table(tab)
        for rt, d in flows.items():
            hot = ", ".join(f"{h['link']} {h['utilization']:.0%}" for h in d["hottest_links"][:3])
            console.print(f"  {tx('hottest')} ({rt}): {hot}", markup=False)


def _calibrate(
    log: Any,
    op: str,
    g: Any,
    path: Path | None,
    out: Path | None,
    scenario: str | None,
    cluster: ClusterSpec,
    json_out: bool,
    algorithm: str = "auto",
) -> None:
    assert path is not None
    try:
        cal = fit_link_efficiency(log, op, g, algorithm=algorithm)
    except ValueError as e:
        raise SpecError(str(e).removeprefix("algorithm "), field="--algo") from None
    target = out or path.with_name(path.stem + ".calibration.yaml")
    if target.exists():
        raise SpecError(f"= {str(target)!r} exists; choose another --out (nothing is overwritten)", field="--out")
    if scenario is not None:
        overlay: dict[str, Any] = {"base": scenario, **cal.overlay()}
    else:  # the whole (default) cluster with the measured value, a scenario on its own
        data = cluster.model_dump(mode="json", exclude_defaults=True)
        for key, value in cal.overlay()["cluster"].items():
            data[key] = {**data.get(key, {}), **value}
        overlay = {"name": f"{cluster.name}-calibrated", "cluster": data}
    release = f", NCCL {g.nccl_version}" if g.nccl_version else ""
    header = (
        f"# wanka scenario overlay: {cal.field} fit by `wanka collective --calibrate {path.name}`\n"
        f"# {op} on {log.ranks} ranks ({log.hosts} hosts{release}), {cal.rows} rows of >= 64 MiB; busbw error "
        f"{cal.mape_before:.1%} -> {cal.mape_after:.1%}\n"
    )
    write_text_atomic(target, header + yaml.safe_dump(overlay, sort_keys=False), field="--out")
    summary = {
        "log": str(path),
        "op": op,
        "ranks": log.ranks,
        "hosts": log.hosts,
        "nccl_version": g.nccl_version,
        "field": cal.field,
        "value": cal.value,
        "rows": cal.rows,
        "mape_before": cal.mape_before,
        "mape_after": cal.mape_after,
        "overlay": str(target),
    }
    if json_out:
        emit_json(summary)
        return
    console.print(
        tr(
            f"{op} on {log.ranks:,} ranks{release}: {cal.field} = {cal.value:.3f} (busbw error on {cal.rows} rows "
            f"{cal.mape_before:.1%} -> {cal.mape_after:.1%}); overlay written to {target}",
            f"{op}，{log.ranks:,} 个 rank{release}：{cal.field} = {cal.value:.3f}（{cal.rows} 行的 busbw 误差 "
            f"{cal.mape_before:.1%} -> {cal.mape_after:.1%}）；覆盖文件已写入 {target}",
        )
    )
    console.print(
        tr(
            f"use it with --scenario {target} (it keeps {scenario or 'this cluster'} and sets the measured value)",
            f"用法：--scenario {target}（保留 {scenario or '该集群'} 的其他设置，并填入实测值）",
        )
    )
