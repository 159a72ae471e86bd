"""``wanka facility`` (power, racks, energy, cost, CO2) and ``wanka storage`` (checkpoint I/O, data reads)."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

import typer
from rich.table import Table

from wanka.catalog import accelerator
from wanka.cli.app import app, console, emit_json, err_console
from wanka.engine import estimate_step
from wanka.errors import InfeasibleError, SpecError
from wanka.facility import assess, first_order_tokens_per_s
from wanka.ops import simulate_campaign
from wanka.spec import Scenario, load_scenario
from wanka.storage import checkpoint_io, data_read_demand
from wanka.units import format_bytes, format_duration

__all__: list[str] = []


def _step(scenario: Scenario) -> Any | None:
    """The engine's StepResult when the engine accepts the job (a scenario without a strategy gets the
    one `wanka search` picks, as in `plan`); else None (first-order figures)."""
    if scenario.training is None or scenario.model is None:
        return None
    try:
        from wanka.planner.pick import with_strategy

        scenario, chosen = with_strategy(scenario)
        if chosen:
            err_console.print(
                "note: strategy from `wanka search` (the scenario gives no parallel: block)", markup=False
            )
        return estimate_step(scenario)
    except InfeasibleError as e:
        err_console.print(f"note: step model: {e}; using first-order figures", markup=False)
        return None


def _campaign_wall_clock_s(scenario: Scenario, step: Any) -> tuple[float, tuple[str, ...]]:
    """Mean wall clock to train, failures, restarts and checkpoints included (wanka.ops), and the
    operations defaults it rests on (spares, recovery times, checkpoint costs)."""
    res = simulate_campaign(
        scenario, step_time_s=step.step_time_s, tokens_per_step=step.tokens_per_step, seed=0, replicas=200
    )
    ops = tuple(a for a in res.assumptions if a.startswith(("spares:", "recovery times", "no spare", "failure rates")))
    return float(res.wall_clock_s.mean), ops


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
    need_u = utilization is None and s.facility.gpu_utilization is None
    step = _step(s) if need_u or (days is None and s.campaign_days is None) else None
    u = utilization if utilization is not None else None if not need_u else getattr(step, "mfu", None)
    wall, wall_from = None, "given (--days)"
    ops_notes: tuple[str, ...] = ()
    if days is not None:
        wall = days * 86400.0
    elif step is not None:
        # time lost to failures counts: the operations layer's campaign wall clock
        (wall, ops_notes), wall_from = _campaign_wall_clock_s(s, step), "campaign with failures (wanka.ops)"
    if s.campaign_days is not None and days is None:
        wall, ops_notes = None, ()  # the scenario's own campaign window wins over a steady-state time to train
    hfu = getattr(step, "hfu", None) if step is not None and utilization is None else None
    r = assess(s, utilization=u, wall_clock_s=wall, wall_clock_from=wall_from, hfu=hfu)
    if ops_notes:  # the campaign's wall clock (energy, cost) rests on these operations defaults
        r = replace(r, assumptions=(*r.assumptions, *ops_notes))
    if json_out:
        d = r.to_dict()
        d["convention"] = convention
        emit_json(d)
        return
    console.print(
        f"[bold]{s.name}[/] · {r.accelerators:,} × {s.cluster.accelerator} · {r.cooling} cooling · "
        f"PUE {r.pue:g} · utilisation {r.utilization:.0%} MFU"
        + (f", {r.hfu:.0%} HFU (power)" if r.hfu is not None else "")
    )
    t = Table(show_header=True, header_style="bold")
    t.add_column("power")
    t.add_column("operating", justify="right")
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
        t.add_row(label, _kw(w))
    console.print(t)
    console.print(f"IT peak {_kw(r.it_power_peak_w)} · node {_kw(r.node.total_w)} (peak {_kw(r.node_peak_w)})")
    console.print(
        f"racks {r.racks:,} × {r.rack.nodes_per_rack} nodes · {_kw(r.rack_power_w)} per rack "
        f"at peak ({_kw(r.rack_power_avg_w)} operating) · budget {_kw(r.rack.rack_budget_w)}"
    )
    console.print(
        f"synchronous swing {_kw(r.power_swing_w)} IT ({_kw(r.power_swing_w * r.pue)} at the meter) when the "
        "job's GPUs stop and restart together"
    )
    console.print(
        f"price {r.price_per_kwh:g} {r.currency}/kWh · grid {r.grid_kgco2_per_kwh:g} kg CO2/kWh · PUE {r.pue:g}"
    )
    if r.wall_clock_s is not None and r.energy_j is not None:
        it_e, acc_e = r.it_energy_j or 0.0, r.accelerator_energy_j or 0.0
        mc_e, mc_co2 = r.model_card_energy_j or 0.0, r.model_card_co2_kg or 0.0
        facility_line = (
            f"facility convention: {r.energy_j / 3.6e9:,.1f} MWh (IT {it_e / 3.6e9:,.1f} MWh × PUE; "
            f"accelerators {acc_e / 3.6e9:,.1f} MWh) · {r.energy_cost or 0.0:,.0f} {r.currency} · "
            f"{(r.co2_kg or 0.0) / 1e3:,.1f} t CO2"
        )
        card_line = (
            f"model-card convention: {r.gpu_hours or 0.0:,.0f} GPU-hours × "
            f"{accelerator(s.cluster.accelerator).tdp_w:,.0f} W = {mc_e / 3.6e9:,.1f} MWh · "
            f"{mc_co2 / 1e3:,.1f} t CO2"
        )
        console.print(f"campaign {format_duration(r.wall_clock_s)} ({r.wall_clock_from})")
        first, second = (card_line, facility_line) if convention == "model-card" else (facility_line, card_line)
        console.print(f"[bold]{first}[/]", markup=True)
        console.print(f"  ({second})", markup=False)
    if r.capex_usd is not None:
        console.print(f"hardware ${r.capex_usd:,.0f} (from facility.hardware_usd_per_gpu)")
    for a in r.assumptions:
        console.print(f"  · {a}", markup=False, style="dim")


@app.command("storage")
def storage_cmd(
    scenario: Annotated[str, typer.Argument(help="preset name or scenario file")],
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Checkpoint size and save/stall/restart time per mode, and training-data read demand."""
    s = load_scenario(scenario)
    ios = {m: checkpoint_io(s, mode=m) for m in ("sync", "async", "in_memory")}
    step = _step(s)
    tps = None
    if step is not None and getattr(step, "tokens_per_s", None) is not None:
        tps = float(step.tokens_per_s)
    elif s.model is not None:
        from wanka.facility import facts

        u = (
            s.facility.gpu_utilization
            if s.facility.gpu_utilization is not None
            else facts().power_curve.typical_utilization
        )
        tps = first_order_tokens_per_s(s, u)
    demand = data_read_demand(s, tps) if tps is not None else None
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
    io = ios["sync"]
    console.print(
        f"[bold]{s.name}[/] · checkpoint {format_bytes(io.size_bytes)} "
        f"({io.size_bytes / 1e12:,.2f} TB, {io.params / 1e9:,.1f} B params) · "
        f"{io.writers:,} writers on {io.writer_nodes:,} nodes · "
        f"{io.write_bandwidth / 1e9:,.0f} GB/s write (limited by {io.limited_by})"
    )
    t = Table(show_header=True, header_style="bold")
    for col in ("mode", "save", "training stalled", "to file system", "restart load"):
        t.add_column(col, justify="right" if col != "mode" else "left")
    for m, x in ios.items():
        mark = " *" if m == s.checkpoint.mode else ""
        t.add_row(
            m + mark,
            format_duration(x.save_s),
            format_duration(x.blocking_s),
            format_duration(x.drain_s),
            format_duration(x.load_s),
        )
    console.print(t)
    if demand is not None:
        console.print(
            f"data read {demand.demand / 1e6:,.1f} MB/s at {demand.tokens_per_s:,.0f} tokens/s · "
            f"supply {demand.supply / 1e9:,.0f} GB/s · {'ok' if demand.ok else 'SHORT'}"
        )
    for a in io.assumptions:
        console.print(f"  · {a}", markup=False, style="dim")
