"""``wanka reliability``: Monte Carlo of a training campaign — interruptions, ETTR, wall clock, losses."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from wanka.cli.app import app, check_output_path, console, emit_json, err_console, print_table
from wanka.errors import InfeasibleError, SpecError
from wanka.spec import load_scenario
from wanka.units import format_bytes, format_duration

__all__: list[str] = []


def _check_step_time(override: float | None) -> None:
    if override is not None and not (math.isfinite(override) and override > 0):
        raise SpecError(f"= {override!r}: must be a positive number of seconds", field="--step-time")


def _pct(x: float) -> str:
    return f"{x:.1%}"


@app.command("reliability")
def reliability_cmd(
    scenario: Annotated[str, typer.Argument(help="preset name or scenario file")],
    replicas: Annotated[int, typer.Option("--replicas", help="Monte Carlo replicas")] = 1000,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="random seed (same seed, same result)")] = 0,
    step_time: Annotated[
        float | None, typer.Option("--step-time", help="steady-state step time, s (default: the engine's estimate)")
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option("--plot", help="write ETTR vs checkpoint interval and vs cluster size to FILE.png or FILE.svg"),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Failures, recovery and checkpointing over a whole campaign: interruptions, ETTR, time to train."""
    from wanka.service import assess

    _check_step_time(step_time)
    if plot is not None and plot.suffix.lower() not in (".png", ".svg"):
        raise SpecError(f"= {str(plot)!r}: must end in .png or .svg", field="--plot")
    check_output_path(plot, field="--plot")
    # engine → ops through the service: a scenario without a strategy gets `wanka search`'s fastest
    # (preset "search"); --step-time replaces the engine's step time
    a = assess(
        load_scenario(scenario),
        ("engine", "ops"),
        preset="search",
        fallback=False,
        seed=seed,
        replicas=replicas,
        step_time_s=step_time,
    )
    if "engine" in a.exceptions:
        e = a.exceptions["engine"]
        if isinstance(e, InfeasibleError):
            raise InfeasibleError(f"{e} (or pass --step-time SECONDS)") from None
        if a.scenario.training is None or a.scenario.model is None:
            raise SpecError(
                "the scenario has no training job (model and training blocks) to time; "
                "add one or pass --step-time SECONDS",
                field="training",
            )
        raise e
    a.check("ops")
    s, r = a.scenario, a.campaign
    assert r is not None
    if a.strategy is not None and a.strategy.searched:
        err_console.print("note: strategy from `wanka search` (the scenario gives no parallel: block)", markup=False)
    dt, dt_from = (step_time, "--step-time") if step_time is not None else (r.step_time_s, "engine")
    if plot is not None:
        from wanka.ops.plot import plot_ettr

        plot_ettr(s, step_time_s=dt, path=plot, replicas=min(replicas, 300), seed=seed)
    if json_out:
        d = r.to_dict()
        d["step_time_from"] = dt_from
        if plot is not None:
            d["plot"] = str(plot)
        emit_json(d)
        return
    from wanka.cli.lang import current, lbl, tr, tx
    from wanka.report.i18n import plain_words

    i, u = r.interruptions, r.unexpected_interruptions
    console.print(
        f"[bold]{s.name}[/] · "
        + tr(f"{r.gpus:,} GPUs on {r.nodes:,} nodes", f"{r.gpus:,} 卡 / {r.nodes:,} 节点")
        + f" · {r.replicas:,} {tx('replicas')}, "
        f"{tx('seed')} {r.seed} · {tx('step')} {dt:.3g} s ({dt_from})"
    )
    window = tx("window") if r.mode == "window" else tx("until trained")
    console.print(
        f" {lbl('wall clock', 17)}{format_duration(r.wall_clock_s.mean)} ({window}; p5–p95 "
        f"{format_duration(r.wall_clock_s.p5)} – {format_duration(r.wall_clock_s.p95)})"
    )
    console.print(
        f" {lbl('interruptions', 17)}{i.mean:,.1f} (p5–p95 {i.p5:,.0f} – {i.p95:,.0f}) · {tx('unexpected')} "
        f"{u.mean:,.1f} · {tx('planned')} {r.planned_interruptions.mean:,.1f}"
    )
    console.print(
        f" {lbl('job MTBF', 17)}{format_duration(r.job_mtbf_s)} · {r.failures_per_day:,.2f} "
        f"{tx('failures/day')} ({r.job_floor_failures_per_day:,.2f} {tx('size-independent')}) · {tx('table')} "
        f"{r.rates_table}"
    )
    console.print(
        f" {lbl('有效训练时长 ETTR', 19)}{_pct(r.ettr.mean)} (p5–p95 {_pct(r.ettr.p5)} – {_pct(r.ettr.p95)}; "
        f"{tx('closed form')} {_pct(r.ettr_analytic)}) · {tx('goodput')} {_pct(r.goodput.mean)}"
    )
    if r.tokens_per_s_per_gpu is not None:
        console.print(
            f" {lbl('throughput', 17)}{r.tokens_per_s_per_gpu.mean:,.0f} {tx('tokens/s/GPU over the campaign')}"
        )
    if r.ettr_limits:
        top = sorted(r.ettr_limits.items(), key=lambda kv: -kv[1])
        console.print(
            f" {lbl('ETTR limited by', 17)}"
            + " · ".join(f"{tx(k)} {_pct(v)}" for k, v in top[:4] if v > 0)
            + f" {tx('(of wall clock)')}"
        )
    steps = r.checkpoint_interval_s / r.step_time_s if r.step_time_s > 0 else 0.0
    searched = r.checkpoint_interval_s == r.optimal_checkpoint_interval_s
    console.print(
        f" {lbl('checkpoint', 17)}{r.checkpoint_mode} · {format_bytes(r.checkpoint_size_bytes)} · {tx('stall')} "
        f"{format_duration(r.checkpoint_blocking_s)} ({tx('coordination')} "
        f"{format_duration(r.checkpoint_coordination_s)}) · {tx('persist')} "
        f"{format_duration(r.checkpoint_persist_s)} · {tx('load')} {format_duration(r.checkpoint_load_s)} · "
        f"{tx('every')} {format_duration(r.checkpoint_interval_s)}"
        + (f" = {steps:,.0f} {tx('steps')}" if 0 < steps < 1e9 else "")
        + (f" {tx('(Young/Daly over whole steps ≥ persist)')}" if searched else "")
    )
    idle = r.spares - r.hot_spares
    how = tx("shrink and continue") if r.elastic else tx("swap a spare, else wait for repair")
    console.print(
        f" {lbl('spares', 17)}{r.hot_spares:,} {tx('hot')} ({r.spares_from}) + {idle:,} {tx('idle cluster nodes')} · "
        f"{tx('P(no spare)')} {r.p_no_spare:.2g} · {how} · {tx('straggler factor')} {r.straggler_factor:.3f}"
    )
    t = Table(show_header=True, header_style="bold")
    for col, just in (
        ("cause", "left"),
        ("count", "right"),
        ("p5–p95", "right"),
        ("detect", "right"),
        ("GPU-h lost", "right"),
        ("share", "right"),
    ):
        t.add_column(tx(col), justify=just)  # type: ignore[arg-type]
    for c in sorted(r.by_cause, key=lambda c: -c.count.mean):
        if c.count.mean == 0:
            continue
        t.add_row(
            c.label,
            f"{c.count.mean:,.1f}",
            f"{c.count.p5:,.0f}–{c.count.p95:,.0f}",
            format_duration(c.detection_s) if not c.planned else "–",
            f"{c.gpu_hours_lost:,.0f}",
            _pct(c.share_of_interruptions),
        )
    for k in ("checkpointing", "stragglers"):
        if r.gpu_hours_lost[k] > 0:
            t.add_row(tx(k), "", "", "", f"{r.gpu_hours_lost[k]:,.0f}", "")
    print_table(t)
    if plot is not None:
        console.print(f"{tx('plot written to')} {plot}")
    for a in r.assumptions:
        console.print(f"  · {plain_words(a, 'zh') if current() == 'zh' else a}", markup=False, style="dim")
