"""`wanka runs list|show|export`: the sweep runs in a run store (SQLite) and their points."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from wanka.cli.app import app, console, emit_json, print_table
from wanka.cli.lang import tr
from wanka.fileio import check_output
from wanka.store import DEFAULT_DB, FORMATS, PointRecord, RunInfo, RunStore, StoreError, export_run
from wanka.units import format_duration

runs_app = typer.Typer(help="Sweep runs stored in SQLite: list, show, export.", no_args_is_help=True)
app.add_typer(runs_app, name="runs")

DbOpt = Annotated[Path, typer.Option("--db", help="run store (SQLite file)")]
MAX_ROWS_SHOWN = 60


def _fmt(v: Any, key: str) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        if key.endswith("mfu") or key in ("ettr", "goodput", "ettr_p5", "ettr_p95"):
            return f"{v:.1%}"
        if key in ("time_to_train_s", "wall_clock_s", "job_mtbf_s"):
            return format_duration(v)
        if key.endswith("_s"):
            return f"{v:.3f} s"
        if key == "energy_cost":
            return f"${v:,.0f}"
        return f"{v:,.4g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


_COLUMNS = {
    "plan": ("gpus", "layout", "step_time_s", "mfu", "time_to_train_s", "energy_cost", "strategy_source"),
    "search": ("gpus", "layout", "step_time_s", "mfu", "time_to_train_s", "feasible"),
    "reliability": ("gpus", "layout", "step_time_s", "ettr", "goodput", "wall_clock_s"),
}


def _layout(s: dict[str, Any]) -> str:
    if "tp" not in s:
        return "—"
    out = f"TP{s['tp']}/PP{s['pp']}/CP{s['cp']}/DP{s['dp']}"
    if s.get("ep", 1) > 1:
        out += f"/EP{s['ep']}"
    return out + (f" v{s['vpp']}" if s.get("vpp", 1) > 1 else "")


def print_points(run: RunInfo, points: list[PointRecord]) -> None:
    """A table of a run's points: the axis values, then the mode's key results (or the error)."""
    axes = list(run.spec.get("axes", {}))
    cols = _COLUMNS.get(run.mode, _COLUMNS["plan"])
    t = Table(box=None, pad_edge=False, header_style="bold")
    for a in axes:
        t.add_column(a.split(".")[-1], justify="right", no_wrap=True)
    for c in cols:
        t.add_column(c.removesuffix("_s").replace("_", " "), justify="left" if c == "layout" else "right", no_wrap=True)
    for p in points[:MAX_ROWS_SHOWN]:
        o = p.overrides
        cells = [_fmt(o.get(a), a) for a in axes]
        if p.status != "done":
            cells += [f"error: {p.error}"] + [""] * (len(cols) - 1)
        else:
            s = (p.result or {}).get("summary", {})
            cells += [_layout(s) if c == "layout" else _fmt(s.get(c), c) for c in cols]
        t.add_row(*cells)
    print_table(t)
    if len(points) > MAX_ROWS_SHOWN:
        console.print(f" … {len(points) - MAX_ROWS_SHOWN:,} more points (`wanka runs export {run.id}`)")


def _open(db: Path) -> RunStore:
    return RunStore(db, create=False)


@runs_app.command("list")
def runs_list(
    db: DbOpt = Path(DEFAULT_DB),
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Every run in the store: id, sweep, status, points done of total."""
    with _open(db) as store:
        runs = store.runs()
    if json_out:
        emit_json([r.to_dict() for r in runs])
        return
    if not runs:
        console.print(tr(f"no runs in {db}", f"{db} 中没有运行记录"))
        return
    t = Table(box=None, pad_edge=False, header_style="bold")
    for c in ("id", "sweep", "mode", "status", "points", "errors", "created", "hash"):
        t.add_column(c, no_wrap=True)
    for r in runs:
        d = r.to_dict()
        t.add_row(
            str(r.id),
            r.sweep_id,
            r.mode,
            r.status,
            f"{r.done_points + r.error_points:,}/{r.total_points:,}",
            str(r.error_points),
            d["created"],
            r.sweep_hash[:12],
        )
    print_table(t)


@runs_app.command("show")
def runs_show(
    run_id: Annotated[int, typer.Argument(help="run id (see `wanka runs list`)")],
    db: DbOpt = Path(DEFAULT_DB),
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """One run: its sweep, status and every stored point."""
    with _open(db) as store:
        run = store.run(run_id)
        points = store.points(run_id)
    if json_out:
        emit_json({"run": run.to_dict(), "points": [p.to_dict() for p in points]})
        return
    d = run.to_dict()
    console.print(
        f"[bold]run {run.id}[/] · sweep {run.sweep_id} ({run.mode}) · {run.status} · "
        f"{run.done_points + run.error_points:,}/{run.total_points:,} points ({run.error_points} errors) · "
        f"created {d['created']} · hash {run.sweep_hash[:12]}"
    )
    if run.source:
        console.print(f" sweep file  {run.source}", markup=False)
    print_points(run, points)


@runs_app.command("export")
def runs_export(
    run_id: Annotated[int, typer.Argument(help="run id (see `wanka runs list`)")],
    fmt: Annotated[str, typer.Option("--format", help=f"one of {', '.join(FORMATS)}")] = "csv",
    out: Annotated[Path | None, typer.Option("--out", help="file to write (default: stdout)")] = None,
    db: DbOpt = Path(DEFAULT_DB),
    json_out: Annotated[bool, typer.Option("--json", help="same as --format json")] = False,
) -> None:
    """A run's points as CSV (one flat row per point), JSON (full records) or Parquet (needs pyarrow)."""
    if json_out:
        fmt = "json"
    if fmt not in FORMATS:
        raise StoreError(f"--format = {fmt!r}: must be one of {', '.join(FORMATS)}")
    if out is not None:  # checked before any work: never a folder, a SQLite file or the store itself
        check_output(out, field="--out", protect=(db,))
    with _open(db) as store:
        run = store.run(run_id)
        points = store.points(run_id)
    text = export_run(run, points, fmt, out, protect=(db,))
    if text is not None:
        typer.echo(text, nl=False)
    else:
        console.print(f"wrote {len(points):,} points of run {run.id} to {out}", markup=False)
