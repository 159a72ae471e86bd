"""``wanka show NAME|FILE``: a scenario's inventory; ``wanka presets``: the built-in presets."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from wanka.cli.app import app, console, emit_json, print_table
from wanka.cli.lang import current, tr, tx
from wanka.infra import inventory
from wanka.report.i18n import plain_words
from wanka.spec import list_model_presets, list_presets, load_model, load_scenario
from wanka.units import format_bytes, format_flops

__all__: list[str] = []


def _bw(bytes_per_s: float) -> str:
    return f"{bytes_per_s / 1e12:,.1f} TB/s" if bytes_per_s >= 1e12 else f"{bytes_per_s / 1e9:,.0f} GB/s"


def _kw(w: float) -> str:
    return f"{w / 1e6:,.2f} MW" if w >= 1e6 else f"{w / 1e3:,.1f} kW"


@app.command("show")
def show_cmd(
    scenario: Annotated[str, typer.Argument(help="preset name or scenario file (.yaml/.json)")],
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """The inventory of a scenario's cluster: accelerators, nodes, domains, racks, peaks, memory, fabric."""
    s = load_scenario(scenario)
    inv = inventory(s.cluster, s.facility)
    if json_out:
        emit_json(
            {
                "scenario": s.name,
                "description": s.description,
                **inv.to_dict(),
                "job_gpus": s.gpus if s.model is not None else None,
                "model": s.model.name if s.model is not None else None,
                "sources": list(s.sources),
                "assumptions": list(s.assumptions),
            }
        )
        return
    console.print(f"[bold]{s.name}[/] — {s.description}", markup=True, highlight=False)
    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_column(style="bold")
    t.add_column()
    t.add_row(tx("accelerators"), f"{inv.accelerators:,} × {inv.accelerator} ({inv.vendor})")
    t.add_row(
        tx("nodes"),
        f"{inv.nodes:,} × {inv.node or 'generic'} "
        + tr(f"({inv.gpus_per_node} per node)", f"（每节点 {inv.gpus_per_node} 卡）"),
    )
    rem = (
        tr(f" + {inv.scale_up_remainder} outside", f" + 域外 {inv.scale_up_remainder} 卡")
        if inv.scale_up_remainder
        else ""
    )
    su = inv.scale_up
    fab = ""
    if su is not None and su.fabric is not None:  # the domain's catalog fabric (topology, tiers)
        tier = f", tier 1 = {su.first_tier_size}" if su.first_tier_size < su.domain_size else ""
        tier_zh = f"，一级 {su.first_tier_size} 卡" if su.first_tier_size < su.domain_size else ""
        fab = tr(
            f" · {su.fabric} ({su.kind}, {su.topology}{tier})", f" · {su.fabric}（{su.kind}，{su.topology}{tier_zh}）"
        )
    t.add_row(
        tx("scale-up"),
        tr(
            f"{inv.scale_up_domains:,} domains of {inv.scale_up_domain_size}{rem}, "
            f"{_bw(inv.scale_up_bandwidth_per_gpu)} per GPU each way",
            f"{inv.scale_up_domains:,} 个 {inv.scale_up_domain_size} 卡互联域{rem}，"
            f"每卡单向 {_bw(inv.scale_up_bandwidth_per_gpu)}",
        )
        + fab,
    )
    r = inv.racks
    t.add_row(
        tx("racks"),
        tr(
            f"{r.racks:,} × {r.nodes_per_rack} nodes ({r.gpus_per_rack} GPUs, {_kw(r.rack_power_w)} "
            f"at full load) — {r.basis}",
            f"{r.racks:,} × 每柜 {r.nodes_per_rack} 节点（{r.gpus_per_rack} 卡，满载 {_kw(r.rack_power_w)}）"
            f"— {r.basis}",
        ),
    )
    order = [d for d in ("fp4", "fp8", "bf16", "fp16", "tf32", "fp32", "fp64") if d in inv.peak_flops]
    t.add_row(
        tx("peak (dense)"),
        " · ".join(f"{d.upper()} {format_flops(inv.peak_flops[d])}" for d in order),
    )
    t.add_row("HBM", f"{format_bytes(inv.hbm_bytes)} · {_bw(inv.hbm_bandwidth)}")
    if inv.host_memory_bytes is not None:
        t.add_row(tx("host memory"), format_bytes(inv.host_memory_bytes))
    t.add_row(
        tx("IT power"),
        tr(
            f"{_kw(inv.it_power_w)} for the compute nodes at full load ({_kw(inv.node_power_w)} per node)",
            f"计算节点满载 {_kw(inv.it_power_w)}（每节点 {_kw(inv.node_power_w)}）",
        ),
    )
    f = inv.fabric
    t.add_row(
        tx("fabric"),
        tr(
            f"{f.kind}, {f.tiers} tiers, {f.oversubscription:g}:1, {f.nic_gbps_per_gpu:g} Gb/s per GPU, "
            f"{f.rails} rail(s) × {f.planes} plane(s), switch {f.switch or '–'} "
            f"({f.switch_radix or '–'} × {f.switch_port_gbps or 0:g}G), NIC {f.nic or '–'}",
            f"{f.kind}，{f.tiers} 层，收敛比 {f.oversubscription:g}:1，每卡 {f.nic_gbps_per_gpu:g} Gb/s，"
            f"{f.rails} 个轨道 × {f.planes} 个平面，交换机 {f.switch or '–'}"
            f"（{f.switch_radix or '–'} × {f.switch_port_gbps or 0:g}G），网卡 {f.nic or '–'}",
        ),
    )
    st = inv.storage
    read = _bw(st.read_bandwidth) if st.read_bandwidth else "–"
    write = _bw(st.write_bandwidth) if st.write_bandwidth else "–"
    cap = f"{st.capacity_bytes / 1e15:,.1f} PB" if st.capacity_bytes else "–"
    t.add_row(
        tx("storage"),
        f"{st.kind}: {st.servers:,} × {st.server or 'servers'} · {tx('read')} {read} · {tx('write')} {write} · {cap}",
    )
    if s.model is not None:
        t.add_row(
            tx("job"),
            tr(f"{s.model.name} on {s.gpus:,} GPUs", f"{s.model.name}，{s.gpus:,} 卡")
            + (
                f" · tp {s.parallel.tp} · pp {s.parallel.pp} · dp {s.parallel.dp} · cp {s.parallel.cp}"
                f" · ep {s.parallel.ep}"
                if s.parallel
                else ""
            ),
        )
    print_table(t)
    for n in inv.notes:
        console.print(f"  {tx('note')}: {n}", markup=False, style="yellow")
    for a in (*(inv.scale_up.assumptions if inv.scale_up is not None else ()), *s.assumptions):
        console.print(f"  · {plain_words(a, 'zh') if current() == 'zh' else a}", markup=False, style="dim")
    for src in s.sources:
        console.print(f"  {tx('source')}: {src}", markup=False, style="dim")


@app.command("presets")
def presets_cmd(json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False) -> None:
    """The built-in scenario and model presets, with their descriptions."""
    scenarios: list[dict[str, Any]] = []
    for name in list_presets():
        s = load_scenario(name)
        scenarios.append(
            {
                "name": name,
                "accelerators": s.cluster.accelerators,
                "accelerator": s.cluster.accelerator,
                "model": s.model.name if s.model else None,
                "description": s.description,
            }
        )
    models: list[dict[str, Any]] = []
    for name in list_model_presets():
        ms = load_model(name)
        models.append(
            {"name": name, "type": ms.type, "n_layers": ms.n_layers, "hidden": ms.hidden, "source": ms.source}
        )
    if json_out:
        emit_json({"scenarios": scenarios, "models": models})
        return
    t = Table(title=tx("scenario presets"), title_justify="left", header_style="bold")
    for c in ("name", "accelerators", "model", "description"):
        t.add_column(tx(c), overflow="fold")
    for row in scenarios:
        t.add_row(
            row["name"],
            f"{row['accelerators']:,} × {row['accelerator']}",
            row["model"] or "–",
            row["description"],
        )
    print_table(t)
    m = Table(title=tx("model presets"), title_justify="left", header_style="bold")
    for c in ("name", "type", "layers", "hidden", "source"):
        m.add_column(tx(c), overflow="fold")
    for row in models:
        m.add_row(row["name"], row["type"], str(row["n_layers"]), str(row["hidden"]), row["source"])
    console.print(m)
