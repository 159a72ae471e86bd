"""``wanka fabric``: the scale-out fabric of a cluster -- tiers, switches, links, optics, bisection, power."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from wanka.cli.app import app, console, emit_json, print_table
from wanka.network.bom import bill_of_materials
from wanka.spec import load_scenario
from wanka.units import GIGA

__all__: list[str] = []


def _kw(w: float) -> str:
    return f"{w / 1e6:,.2f} MW" if w >= 1e6 else f"{w / 1e3:,.1f} kW"


@app.command("fabric")
def fabric_cmd(
    scenario: Annotated[str, typer.Argument(help="preset name or scenario file")],
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Bill of materials of a cluster's fabric: switches per tier, optics, cables, bisection, power."""
    s = load_scenario(scenario)
    c = s.cluster
    b = bill_of_materials(c)
    t = b.topology
    if json_out:
        emit_json(b.to_dict())
        return
    from wanka.cli.lang import current, tr, tx
    from wanka.report.i18n import plain_words

    layout = tr("rail-optimised", "轨道优化") if t.rail_optimized else tr("top-of-rack", "机柜顶部（ToR）")
    head = tr(
        f"{t.tiers}-tier {layout} fat-tree · {b.switch} ({t.radix} × {t.link_bandwidth * 8 / GIGA:g}G) · "
        f"oversubscription {t.oversubscription:g}:1 at the leaf",
        f"{t.tiers} 层{layout}胖树 · {b.switch}（{t.radix} × {t.link_bandwidth * 8 / GIGA:g}G）· "
        f"叶层收敛比 {t.oversubscription:g}:1",
    )
    console.print(
        f"[bold]{c.name}[/] · {c.accelerators:,} × {c.accelerator} · {c.fabric.kind} · {head}"
        + (
            tr(f", {t.spine_oversubscription:g}:1 at the spine", f"，spine 层 {t.spine_oversubscription:g}:1")
            if t.tiers == 3 and t.spine_oversubscription > 1
            else ""
        )
        + tr(f" · {t.planes} plane{'s' if t.planes > 1 else ''}", f" · {t.planes} 个平面")
    )
    tab = Table(show_header=True, header_style="bold")
    for col in ("tier", "switch", "radix", "switches", "down / up ports", "oversubscription", "links below"):
        tab.add_column(tx(col), justify="left" if col in ("tier", "switch") else "right")
    links = list(b.links_per_tier.values())
    for i, row in enumerate(t.per_tier()):
        tab.add_row(
            row["tier"],
            row["switch"] or "",
            str(row["radix"]),
            f"{row['switches']:,}",
            f"{row['down_ports']:,} / {row['up_ports']:,}",
            f"{row['oversubscription']:.3g}:1" if row["up_ports"] else "",
            f"{links[i]:,}" if i < len(links) else "",
        )
    tab.add_row(tx("total"), "", "", f"{b.switch_count:,}", "", "", f"{sum(links):,}")
    print_table(tab)
    opt = Table(show_header=True, header_style="bold")
    for col, just in (("where", "left"), ("module / cable", "left"), ("count", "right"), ("power", "right")):
        opt.add_column(tx(col), justify=just)  # type: ignore[arg-type]
    for x in b.optics_lines:
        opt.add_row(
            x.where, x.name or tr(f"(no catalog {x.kind})", f"（目录中无此{x.kind}）"), f"{x.count:,}", _kw(x.power_w)
        )
    print_table(opt)
    bis = b.bisection_bytes_per_s
    console.print(
        tr(
            f"bisection {bis * 8 / 1e12:,.1f} Tb/s one way ({bis * 8 / GIGA / c.accelerators * 2:,.0f} Gb/s per GPU "
            f"across the cut) · {t.endpoints_per_leaf:,} GPUs ({t.nodes_per_leaf} nodes) per leaf · "
            f"{t.leaves_per_pod} leaves ({t.endpoints_per_leaf * t.leaves_per_pod:,} GPUs) per pod · {t.pods} pod(s)",
            f"对分带宽单向 {bis * 8 / 1e12:,.1f} Tb/s（跨切面每卡 {bis * 8 / GIGA / c.accelerators * 2:,.0f} Gb/s）· "
            f"每台叶交换机 {t.endpoints_per_leaf:,} 卡（{t.nodes_per_leaf} 节点）· "
            f"每个 pod {t.leaves_per_pod} 台叶交换机"
            f"（{t.endpoints_per_leaf * t.leaves_per_pod:,} 卡）· {t.pods} 个 pod",
        )
    )
    console.print(
        tr(
            f"power: switches {_kw(b.switch_power_w)} + optics {_kw(b.optics_power_w)} = {_kw(b.network_power_w)} "
            f"({b.network_power_w / c.accelerators:,.0f} W per GPU) · {b.optics_count:,} transceivers · "
            f"{b.cables['fibre']:,} fibres, {b.cables['copper']:,} copper cables",
            f"功耗：交换机 {_kw(b.switch_power_w)} + 光模块 {_kw(b.optics_power_w)} = {_kw(b.network_power_w)}"
            f"（每卡 {b.network_power_w / c.accelerators:,.0f} W）· {b.optics_count:,} 个光模块 · "
            f"{b.cables['fibre']:,} 根光纤，{b.cables['copper']:,} 根铜缆",
        )
    )
    reach = " · ".join(tr(f"{k}-tier {v:,}", f"{k} 层 {v:,}") for k, v in b.max_accelerators_for_tiers.items())
    console.print(tr(f"largest cluster with this switch: {reach} GPUs", f"该交换机可组最大集群：{reach} 卡"))
    if t.scale_up is not None:
        su = t.scale_up
        kind = tr("supernode", "超节点") if su.supernode else tr("in-node", "机内")
        console.print(
            tr(
                f"scale-up: {su.count:,} domains of {su.size} ({kind}), "
                f"{su.bandwidth_per_gpu / GIGA:,.0f} GB/s per GPU each way",
                f"超节点/机内互联：{su.count:,} 个 {su.size} 卡互联域（{kind}），"
                f"每卡单向 {su.bandwidth_per_gpu / GIGA:,.0f} GB/s",
            )
        )
    for a in b.assumptions:
        console.print(f"  · {plain_words(a, 'zh') if current() == 'zh' else a}", markup=False, style="dim")
