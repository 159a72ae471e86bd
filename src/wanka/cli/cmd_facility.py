"""``wanka facility`` (power, racks, energy, cost, CO2) and ``wanka storage`` (checkpoint I/O, data reads)."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

import typer
from rich.table import Table

from wanka.catalog import accelerator
from wanka.cli.app import app, console, emit_json, err_console, print_table
from wanka.errors import InfeasibleError, SpecError
from wanka.facility import first_order_tokens_per_s
from wanka.spec import Scenario, load_scenario
from wanka.units import format_bytes, format_duration

__all__: list[str] = []


def _assess(scenario: Scenario, what: tuple[str, ...], **kw: Any) -> Any:
    """The service's assessment (wanka.service.assess): a scenario without a strategy gets the one
    `wanka search` picks (preset "search"), as in `plan`; when the engine cannot run the job, a
    note says so and the first-order figures are used."""
    from wanka.service import assess

    a = assess(scenario, what, preset="search", fallback=False, seed=0, replicas=200, **kw)
    e = a.exceptions.get("engine")
    if e is not None and not isinstance(e, InfeasibleError) and scenario.training is not None:
        raise e
    if isinstance(e, InfeasibleError):
        err_console.print(f"note: step model: {e}; using first-order figures", markup=False)
    elif a.strategy is not None and a.strategy.searched:
        err_console.print("note: strategy from `wanka search` (the scenario gives no parallel: block)", markup=False)
    return a


# the operations defaults a campaign's wall clock (energy, cost) rests on
_OPS_NOTES = ("spares:", "recovery times", "no spare", "failure rates")


def _kw(w: float) -> str:
    return f"{w / 1e6:,.2f} MW" if w >= 1e6 else f"{w / 1e3:,.1f} kW"


@app.command("facility")
def facility_cmd(
    scenario: Annotated[str, typer.Argument(help="preset name or scenario file")],
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
    utilization: Annotated[float | None, typer.Option("--utilization", help="MFU, 0-1")] = None,
    days: Annotated[float | None, typer.Option("--days", help="campaign wall clock in days")] = None,
    convention: Annotated[
        str,
        typer.Option(
            "--convention",
            help="energy and CO2 as the site draws them (facility: IT × PUE) or as model cards publish "
            "them (model-card: GPU-hours × board power × grid factor); both are always in --json",
        ),
    ] = "facility",
) -> None:
    """Power, racks, PUE, energy, electricity cost and CO2 of a cluster and its training job."""
    if convention not in ("facility", "model-card"):
        raise SpecError(f"= {convention!r}: must be facility or model-card", field="--convention")
    s = load_scenario(scenario)
    if days is not None and not 0 < days <= 36_500:
        raise SpecError(f"= {days!r}: must be a number of days in (0, 36,500]", field="--days")
    has_job = s.training is not None and s.model is not None
    need_u = utilization is None and s.facility.gpu_utilization is None
    need_wall = days is None and s.campaign_days is None
    what: tuple[str, ...] = ("facility",)
    if has_job and (need_u or need_wall):
        what = ("engine", "ops", "facility") if need_wall else ("engine", "facility")
    # engine → ops (the campaign's wall clock, failures included) → facility, through the service
    a = _assess(
        s,
        what,
        utilization=utilization,
        wall_clock_s=None if days is None else days * 86400.0,
        wall_clock_from="given (--days)",
    )
    a.check("facility")
    r = a.facility
    if a.campaign is not None and days is None:  # energy and cost rest on the operations defaults
        ops_notes = tuple(x for x in a.campaign.assumptions if x.startswith(_OPS_NOTES))
        if ops_notes:
            r = replace(r, assumptions=(*r.assumptions, *ops_notes))
    if json_out:
        d = r.to_dict()
        d["convention"] = convention
        emit_json(d)
        return
    from wanka.cli.lang import current, tr, tx
    from wanka.report.i18n import plain_words

    console.print(
        f"[bold]{s.name}[/] · {r.accelerators:,} × {s.cluster.accelerator} · "
        + tr(f"{r.cooling} cooling", f"{r.cooling} 制冷")
        + f" · PUE {r.pue:g} · "
        + tr(f"utilisation {r.utilization:.0%} MFU", f"利用率 {r.utilization:.0%} MFU")
        + (tr(f", {r.hfu:.0%} HFU (power)", f"，{r.hfu:.0%} HFU（功耗）") if r.hfu is not None else "")
    )
    t = Table(show_header=True, header_style="bold")
    t.add_column(tx("power"))
    t.add_column(tr("operating", "运行功率"), justify="right")
    for label, w in (
        ("accelerators", r.accelerators_w),
        ("CPUs", r.cpus_w),
        ("node other (fans, NICs, memory, NVSwitch)", r.node_other_w),
        ("network", r.network_w),
        ("storage", r.storage_w),
        ("IT total", r.it_power_w),
        ("cooling and power overhead", r.cooling_overhead_w),
        ("facility", r.facility_power_w),
    ):
        t.add_row(tx(label), _kw(w))
    print_table(t)
    console.print(
        tr(
            f"IT peak {_kw(r.it_power_peak_w)} · node {_kw(r.node.total_w)} (peak {_kw(r.node_peak_w)})",
            f"IT 峰值 {_kw(r.it_power_peak_w)} · 每节点 {_kw(r.node.total_w)}（峰值 {_kw(r.node_peak_w)}）",
        )
    )
    console.print(
        tr(
            f"racks {r.racks:,} × {r.rack.nodes_per_rack} nodes · {_kw(r.rack_power_w)} per rack "
            f"at peak ({_kw(r.rack_power_avg_w)} operating) · budget {_kw(r.rack.rack_budget_w)}",
            f"机柜 {r.racks:,} × 每柜 {r.rack.nodes_per_rack} 节点 · 单柜峰值 {_kw(r.rack_power_w)}"
            f"（运行 {_kw(r.rack_power_avg_w)}）· 单柜功率预算 {_kw(r.rack.rack_budget_w)}",
        )
    )
    console.print(
        tr(
            f"synchronous swing {_kw(r.power_swing_w)} IT ({_kw(r.power_swing_w * r.pue)} at the meter) when the "
            "job's GPUs stop and restart together",
            f"同步功率摆动：任务所有卡同时停止和重启时 IT 侧 {_kw(r.power_swing_w)}"
            f"（电表侧 {_kw(r.power_swing_w * r.pue)}）",
        )
    )
    console.print(
        tr(
            f"price {r.price_per_kwh:g} {r.currency}/kWh · grid {r.grid_kgco2_per_kwh:g} kg CO2/kWh · PUE {r.pue:g}",
            f"电价 {r.price_per_kwh:g} {r.currency}/kWh · 电网碳排放因子 {r.grid_kgco2_per_kwh:g} kg CO2/kWh · "
            f"PUE {r.pue:g}",
        )
    )
    if r.wall_clock_s is not None and r.energy_j is not None:
        it_e, acc_e = r.it_energy_j or 0.0, r.accelerator_energy_j or 0.0
        mc_e, mc_co2 = r.model_card_energy_j or 0.0, r.model_card_co2_kg or 0.0
        facility_line = tr(
            f"facility convention: {r.energy_j / 3.6e9:,.1f} MWh (IT {it_e / 3.6e9:,.1f} MWh × PUE; "
            f"accelerators {acc_e / 3.6e9:,.1f} MWh) · {r.energy_cost or 0.0:,.0f} {r.currency} · "
            f"{(r.co2_kg or 0.0) / 1e3:,.1f} t CO2",
            f"机房口径：{r.energy_j / 3.6e9:,.1f} MWh（IT {it_e / 3.6e9:,.1f} MWh × PUE；"
            f"加速卡 {acc_e / 3.6e9:,.1f} MWh）· {r.energy_cost or 0.0:,.0f} {r.currency} · "
            f"{(r.co2_kg or 0.0) / 1e3:,.1f} t CO2",
        )
        card_line = tr(
            f"model-card convention: {r.gpu_hours or 0.0:,.0f} GPU-hours × "
            f"{accelerator(s.cluster.accelerator).tdp_w:,.0f} W = {mc_e / 3.6e9:,.1f} MWh · "
            f"{mc_co2 / 1e3:,.1f} t CO2",
            f"模型卡口径：{r.gpu_hours or 0.0:,.0f} 卡时 × "
            f"{accelerator(s.cluster.accelerator).tdp_w:,.0f} W = {mc_e / 3.6e9:,.1f} MWh · "
            f"{mc_co2 / 1e3:,.1f} t CO2",
        )
        console.print(f"{tx('campaign')} {format_duration(r.wall_clock_s)} ({r.wall_clock_from})")
        first, second = (card_line, facility_line) if convention == "model-card" else (facility_line, card_line)
        console.print(f"[bold]{first}[/]", markup=True)
        console.print(f"  ({second})", markup=False)
    if r.capex_usd is not None:
        console.print(
            tr(
                f"hardware ${r.capex_usd:,.0f} (from facility.hardware_usd_per_gpu)",
                f"硬件投资 ${r.capex_usd:,.0f}（来自 facility.hardware_usd_per_gpu）",
            )
        )
    for a in r.assumptions:
        console.print(f"  · {plain_words(a, 'zh') if current() == 'zh' else a}", markup=False, style="dim")


@app.command("storage")
def storage_cmd(
    scenario: Annotated[str, typer.Argument(help="preset name or scenario file")],
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Checkpoint size and save/stall/restart time per mode, and training-data read demand."""
    s = load_scenario(scenario)
    # engine (tokens/s) → storage (checkpoint per mode, data reads) through the service
    a = _assess(s, ("engine", "storage") if s.training is not None and s.model is not None else ("storage",))
    a.check("storage")
    s = a.scenario
    ios = a.checkpoint_modes
    demand = a.data_read
    if demand is None and s.model is not None:  # no step model: first-order tokens/s at typical utilisation
        from wanka.facility import facts
        from wanka.storage import data_read_demand

        u = (
            s.facility.gpu_utilization
            if s.facility.gpu_utilization is not None
            else facts().power_curve.typical_utilization
        )
        demand = data_read_demand(s, first_order_tokens_per_s(s, u))
    if json_out:
        emit_json(
            {
                "scenario": s.name,
                "checkpoint": {m: io.to_dict() for m, io in ios.items()},
                "configured_mode": s.checkpoint.mode,
                "data_read": demand.to_dict() if demand is not None else None,
            }
        )
        return
    from wanka.cli.lang import current, tr, tx
    from wanka.report.i18n import plain_words

    io = ios["sync"]
    console.print(
        f"[bold]{s.name}[/] · "
        + tr(
            f"checkpoint {format_bytes(io.size_bytes)} "
            f"({io.size_bytes / 1e12:,.2f} TB, {io.params / 1e9:,.1f} B params) · "
            f"{io.writers:,} writers on {io.writer_nodes:,} nodes · "
            f"{io.write_bandwidth / 1e9:,.0f} GB/s write (limited by {io.limited_by})",
            f"检查点 {format_bytes(io.size_bytes)}"
            f"（{io.size_bytes / 1e12:,.2f} TB，{io.params / 1e9:,.1f} B 参数）· "
            f"{io.writer_nodes:,} 个节点上 {io.writers:,} 个写进程 · "
            f"写带宽 {io.write_bandwidth / 1e9:,.0f} GB/s（受限于 {io.limited_by}）",
        )
    )
    t = Table(show_header=True, header_style="bold")
    for col in ("mode", "save", "training stalled", "to file system", "restart load"):
        t.add_column(tx(col), justify="right" if col != "mode" else "left")
    for m, x in ios.items():
        mark = " *" if m == s.checkpoint.mode else ""
        t.add_row(
            m + mark,
            format_duration(x.save_s),
            format_duration(x.blocking_s),
            format_duration(x.drain_s),
            format_duration(x.load_s),
        )
    print_table(t)
    if demand is not None:
        console.print(
            tr(
                f"data read {demand.demand / 1e6:,.1f} MB/s at {demand.tokens_per_s:,.0f} tokens/s · "
                f"supply {demand.supply / 1e9:,.0f} GB/s · {'ok' if demand.ok else 'SHORT'}",
                f"训练数据读取需求 {demand.demand / 1e6:,.1f} MB/s（{demand.tokens_per_s:,.0f} tokens/s）· "
                f"供给 {demand.supply / 1e9:,.0f} GB/s · {'满足' if demand.ok else '不足'}",
            )
        )
    for a in io.assumptions:
        console.print(f"  · {plain_words(a, 'zh') if current() == 'zh' else a}", markup=False, style="dim")
