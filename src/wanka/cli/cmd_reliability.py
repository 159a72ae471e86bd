"""``wanka reliability``: Monte Carlo of a training campaign — interruptions, ETTR, wall clock, losses."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from wanka.cli.app import app, check_output_path, console, emit_json, err_console
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
    i, u = r.interruptions, r.unexpected_interruptions
    console.print(
        f"[bold]{s.name}[/] · {r.gpus:,} GPUs on {r.nodes:,} nodes · {r.replicas:,} replicas, "
        f"seed {r.seed} · step {dt:.3g} s ({dt_from})"
    )
    window = "window" if r.mode == "window" else "until trained"
    console.print(
        f" wall clock       {format_duration(r.wall_clock_s.mean)} ({window}; p5–p95 "
        f"{format_duration(r.wall_clock_s.p5)} – {format_duration(r.wall_clock_s.p95)})"
    )
    console.print(
        f" interruptions    {i.mean:,.1f} (p5–p95 {i.p5:,.0f} – {i.p95:,.0f}) · unexpected "
        f"{u.mean:,.1f} · planned {r.planned_interruptions.mean:,.1f}"
    )
    console.print(
        f" job MTBF         {format_duration(r.job_mtbf_s)} · {r.failures_per_day:,.2f} "
        f"failures/day ({r.job_floor_failures_per_day:,.2f} size-independent) · table {r.rates_table}"
    )
    console.print(
        f" 有效训练时长 ETTR  {_pct(r.ettr.mean)} (p5–p95 {_pct(r.ettr.p5)} – {_pct(r.ettr.p95)}; "
        f"closed form {_pct(r.ettr_analytic)}) · goodput {_pct(r.goodput.mean)}"
    )
    if r.tokens_per_s_per_gpu is not None:
        console.print(f" throughput       {r.tokens_per_s_per_gpu.mean:,.0f} tokens/s/GPU over the campaign")
    if r.ettr_limits:
        top = sorted(r.ettr_limits.items(), key=lambda kv: -kv[1])
        console.print(
            " ETTR limited by  " + " · ".join(f"{k} {_pct(v)}" for k, v in top[:4] if v > 0) + " (of wall clock)"
        )
    steps = r.checkpoint_interval_s / r.step_time_s if r.step_time_s > 0 else 0.0
    searched = r.checkpoint_interval_s == r.optimal_checkpoint_interval_s
    console.print(
        f" checkpoint       {r.checkpoint_mode} · {format_bytes(r.checkpoint_size_bytes)} · stall "
        f"{format_duration(r.checkpoint_blocking_s)} (coordination "
        f"{format_duration(r.checkpoint_coordination_s)}) · persist {format_duration(r.checkpoint_persist_s)} · "
        f"load {format_duration(r.checkpoint_load_s)} · every {format_duration(r.checkpoint_interval_s)}"
        + (f" = {steps:,.0f} steps" if 0 < steps < 1e9 else "")
        + (" (Young/Daly over whole steps ≥ persist)" if searched else "")
    )
    idle = r.spares - r.hot_spares
    how = "shrink and continue" if r.elastic else "swap a spare, else wait for repair"
    console.print(
        f" spares           {r.hot_spares:,} hot ({r.spares_from}) + {idle:,} idle cluster nodes · "
        f"P(no spare) {r.p_no_spare:.2g} · {how} · straggler factor {r.straggler_factor:.3f}"
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
        t.add_column(col, justify=just)  # type: ignore[arg-type]
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
            t.add_row(k, "", "", "", f"{r.gpu_hours_lost[k]:,.0f}", "")
    console.print(t)
    if plot is not None:
        console.print(f"plot written to {plot}")
    for a in r.assumptions:
        console.print(f"  · {a}", markup=False, style="dim")
