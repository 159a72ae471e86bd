"""`wanka sweep FILE`: every point of a sweep file on a local process pool or Ray, stored in SQLite."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from wanka.cli.app import app, console, emit_json, err_console
from wanka.cli.cmd_runs import print_points
from wanka.planner import PointOutcome, load_sweep, make_executor, run_sweep
from wanka.store import DEFAULT_DB, RunInfo, RunStore


@app.command("sweep")
def sweep_cmd(
    file: Annotated[Path, typer.Argument(help="sweep YAML (base scenario, axes, mode)")],
    executor: Annotated[str, typer.Option("--executor", help="local (process pool) or ray")] = "local",
    workers: Annotated[int | None, typer.Option("--workers", help="local worker processes (default: CPUs)")] = None,
    ray_address: Annotated[
        str | None, typer.Option("--ray-address", help="HOST:PORT of an existing Ray head (implies ray)")
    ] = None,
    ray_local: Annotated[bool, typer.Option("--ray-local", help="start a Ray cluster in this process")] = False,
    db: Annotated[Path, typer.Option("--db", help="run store (SQLite file)")] = Path(DEFAULT_DB),
    new_run: Annotated[bool, typer.Option("--new-run", help="start a fresh run even if this sweep was run")] = False,
    retry_errors: Annotated[bool, typer.Option("--retry-errors", help="recompute points stored as errors")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="progress bar on stderr")] = True,
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Run (or resume) a sweep; each point is committed to the run store the moment it finishes."""
    spec = load_sweep(file)
    ex = make_executor(executor, workers=workers, ray_address=ray_address, ray_local=ray_local)
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err_console,
        disable=not progress,
        transient=False,
    )
    task = bar.add_task(f"sweep {spec.name}", total=spec.size)

    def on_start(run: RunInfo, skipped: int, todo: int) -> None:
        if skipped:
            err_console.print(
                f"resuming run {run.id}: {skipped:,} of {spec.size:,} points already stored, {todo:,} to run",
                markup=False,
            )
        bar.update(task, total=todo)

    def on_point(o: PointOutcome, done: int, todo: int) -> None:
        bar.update(task, completed=done)

    with RunStore(db) as store, ex, bar:
        res = run_sweep(
            spec, store, ex, on_point=on_point, on_start=on_start, new_run=new_run, retry_errors=retry_errors
        )
        points = store.points(res.run.id)
    if json_out:
        d = res.to_dict()
        d["db"] = str(db)
        d["points"] = [
            {"point": p.overrides, "status": p.status, "summary": (p.result or {}).get("summary"), "error": p.error}
            for p in points
        ]
        emit_json(d)
        return
    r = res.run
    console.print(
        f"[bold]sweep {spec.name}[/] ({spec.mode}) · run {r.id}{' (resumed)' if res.resumed else ''} · "
        f"{spec.size:,} points: {res.computed:,} computed, {res.skipped:,} already stored, "
        f"{r.error_points:,} errors · {res.elapsed_s:.1f} s on {res.executor}"
    )
    print_points(r, points)
    console.print(
        f" stored in {db} · `wanka runs show {r.id} --db {db}` · `wanka runs export {r.id} --db {db}`", markup=False
    )
