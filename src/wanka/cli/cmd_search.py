"""`wanka search`: the best parallel strategies for a scenario's job, ranked, with why each ranks there."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from wanka.cli.app import app, console, emit_json, print_table
from wanka.cli.lang import tr
from wanka.planner import SearchResult, search
from wanka.spec import Scenario, load_scenario
from wanka.units import format_bytes, format_duration


def _money(x: float | None) -> str:
    return "—" if x is None else f"${x:,.0f}"


def print_search(sc: Scenario, r: SearchResult) -> None:
    from wanka.cli.lang import current, tx
    from wanka.report.i18n import plain_words

    assert sc.model is not None and sc.training is not None
    gpus = ", ".join(f"{g:,}" for g in r.gpus)
    console.print(
        f"[bold]{sc.model.name}[/] {tx('on')} [bold]{sc.name}[/] · {gpus} × {sc.cluster.accelerator} · "
        f"{sc.training.precision.upper()} · {tx('objective')} {r.objective}"
    )
    many = len(r.gpus) > 1
    money = r.objective != "time"
    t = Table(box=None, pad_edge=False, header_style="bold")
    cols = [
        "#",
        *(["GPUs"] if many else []),
        "layout",
        "mb",
        "zero",
        "recompute",
        "step",
        "MFU",
        "memory",
        "to train",
        *(["energy $"] if money else []),
    ]
    for col in cols:
        t.add_column(tx(col), justify="left" if col in ("layout", "recompute") else "right", no_wrap=True)
    for c in r.top:
        vpp = f" v{c.vpp}" if c.vpp > 1 else ""
        row = [
            str(c.rank),
            *([f"{c.gpus:,}"] if many else []),
            f"{c.layout()}{vpp}",
            str(c.micro_batch),
            str(c.zero),
            c.memory_saving(),
            f"{c.step_time_s:.3f} s",
            f"{c.mfu:.1%}",
            format_bytes(c.memory_bytes),
            format_duration(c.effective_time_to_train_s or c.time_to_train_s),
            *([_money(c.energy_cost)] if money else []),
        ]
        t.add_row(*row)
    print_table(t)
    for c in r.top:
        console.print(f"  #{c.rank}  {c.reason}", markup=False)
    pruned = sum(sum(cnt.shapes_pruned.values()) for cnt in r.counts.values())
    no_fit_shapes = sum(cnt.shapes_no_fit for cnt in r.counts.values())
    console.print(
        tr(
            f" searched {r.evaluated:,} strategies in {r.elapsed_s:.2f} s: {r.feasible:,} feasible, "
            f"{r.no_fit:,} do not fit in HBM; {pruned:,} shapes pruned by shape rules, "
            f"{no_fit_shapes:,} by memory before timing",
            f" 搜索 {r.evaluated:,} 个策略，用时 {r.elapsed_s:.2f} s：{r.feasible:,} 个可行，{r.no_fit:,} 个显存不足；"
            f"{pruned:,} 个形状被形状规则剪枝，{no_fit_shapes:,} 个在计时前因显存剪枝",
        )
    )
    b = r.baseline
    if b is not None:
        c = b.candidate
        where = (
            tr(
                f"rank {b.rank:,} of {b.feasible_total:,} feasible (best with the same tp/pp/dp/cp/ep: "
                f"rank {b.shape_rank:,})",
                f"在 {b.feasible_total:,} 个可行策略中排第 {b.rank:,}"
                f"（相同 tp/pp/dp/cp/ep 中最好的排第 {b.shape_rank:,}）",
            )
            if b.rank is not None and b.shape_rank is not None
            else tr(f"rank {b.rank}", f"排第 {b.rank}")
            if b.rank is not None
            else tr(f"infeasible: {b.why_not}", f"不可行：{b.why_not}")
        )
        own = tx("scenario's strategy")
        console.print(
            f" {own}  {c.layout()} vpp {c.vpp} · {tx('mb')} {c.micro_batch} · zero {c.zero} · "
            f"{tx('recompute')} {c.memory_saving()}: {tx('step')} {c.step_time_s:.3f} s, {where}"
        )
    if r.pareto and r.pareto_axes:
        x, y = r.pareto_axes
        pts = " · ".join(
            (
                f"{int(p.x):,} GPUs → {format_duration(p.y)}"
                if x == "gpus"
                else f"{format_duration(p.x)} at {_money(p.y)}"
            )
            for p in r.pareto
        )
        console.print(f" {tx('Pareto front')} ({x} vs {y})  {pts}")
    for n in r.notes:
        console.print(f" {tx('note')}  {plain_words(n, 'zh') if current() == 'zh' else n}")


@app.command("search")
def search_cmd(
    scenario: Annotated[str, typer.Argument(help="preset name or scenario YAML file")],
    top: Annotated[int, typer.Option("--top", help="how many strategies to show")] = 10,
    objective: Annotated[str, typer.Option("--objective", help="rank by time, cost or energy")] = "time",
    gpus: Annotated[
        list[int] | None,
        typer.Option("--gpus", help="job size; repeat for a Pareto front of time vs GPUs"),
    ] = None,
    goodput: Annotated[
        bool, typer.Option("--goodput", help="Monte Carlo goodput (restarts, stragglers) for the top-k")
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="print the ranked strategies as a JSON list")] = False,
    details: Annotated[
        bool, typer.Option("--details", help="with --json: the whole result (counts, baseline, Pareto front)")
    ] = False,
) -> None:
    """Enumerate the valid TP/PP/DP/CP/EP/VPP/micro-batch/ZeRO/recompute strategies, rank them, explain."""
    sc = load_scenario(scenario)
    r = search(sc, top=top, objective=objective, gpus=gpus, goodput=goodput)
    if json_out:
        emit_json(r.to_dict() if details else [c.to_dict() for c in r.top])
        return
    print_search(sc, r)
