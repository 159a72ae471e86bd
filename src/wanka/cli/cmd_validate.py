"""`wanka validate`: predicted vs published throughput of real training runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.cells import cell_len
from rich.table import Table

from wanka.cli.app import app, console, emit_json, print_table
from wanka.cli.lang import tr, tx
from wanka.validate import CaseResult, run_validation


def _cells(c: CaseResult) -> tuple[str, ...]:
    pred = "—" if c.predicted is None else f"{c.predicted:,.0f}"
    err = "—" if c.rel_error is None else f"{c.rel_error:+.1%}"
    style = None
    if c.rel_error is not None and abs(c.rel_error) > 0.2:
        style = "red"
    note = c.error or (
        tr("campaign: needs the operations model", "训练周期：需要运维模型")
        if c.kind == "campaign" and c.predicted is None
        else ""
    )
    band = ""
    if c.band is not None and c.unknown:
        band = f"{c.band[0]:,.0f}..{c.band[1]:,.0f}" + (" ✓" if c.in_band else "")
        note = note or tr(
            f"{c.layouts} layouts fit; unpublished: {', '.join(c.unknown)}",
            f"{c.layouts} 种布局可装入；未公开：{', '.join(c.unknown)}",
        )
    if c.batch_adjusted:
        pub, runs = c.batch_adjusted
        said = tr(
            f"published global batch {pub} is no multiple of dp × micro-batch: predicted at {runs}",
            f"公布的全局批 {pub} 不是 dp × micro-batch 的倍数：按 {runs} 预测",
        )
        note = "; ".join([said, *([note] if note else [])])
    kind = tr("steady", "稳态") if c.kind == "steady_state" else tr("campaign", "训练周期")
    return (c.id, kind, pred, band, f"{c.truth:,.0f}", err, note, style or "")


_COLUMNS: tuple[tuple[str, str], ...] = (("id", "left"), ("kind", "left"), ("predicted", "right"))
_COLUMNS += (("band", "right"), ("measured", "right"), ("error", "right"), ("note", "left"))


def _print_cases(rows: list[tuple[str, ...]]) -> None:
    """The cases as a table; on a terminal too narrow for one, a line per case (the note beneath it).
    An id or a figure is never shortened: a case is found by its id."""
    title = tx("published runs: predicted vs measured tokens/s/GPU")
    widths = [max([cell_len(tx(col))] + [cell_len(r[i]) for r in rows]) for i, (col, _) in enumerate(_COLUMNS)]
    fixed = sum(widths[1:6]) + 3 * len(_COLUMNS) + 1  # the figures, and each column's border and padding
    if console.width < fixed + min(widths[0], 24) + 16:
        console.print(title)
        for r in rows:
            band = f" ({tx('band')} {r[3]})" if r[3] else ""
            line = f"{r[0]}  {r[1]}  {tx('predicted')} {r[2]}{band}  {tx('measured')} {r[4]}  {r[5]}"
            console.print(line, style=r[-1] or None, markup=False)
            if r[6]:
                console.print("    " + r[6], markup=False)
        return
    t = Table(title=title)
    for i, (col, just) in enumerate(_COLUMNS):  # a narrower terminal folds the id and wraps the note
        fold = min(widths[i], 24 if col == "id" else 16) if col in ("id", "note") else None
        t.add_column(tx(col), justify=just, overflow="fold" if fold else "ellipsis", min_width=fold)  # type: ignore[arg-type]
    for r in rows:
        t.add_row(*r[:-1], style=r[-1] or None)
    print_table(t)


@app.command("validate")
def validate(
    file: Annotated[
        Path | None, typer.Argument(help="wanka-validation/1 file; default: the shipped public cases")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Predict every published case and compare tokens/s/GPU with the measured value."""
    rep = run_validation(file)
    if json_out:
        emit_json(rep.to_dict())
        return
    rows = [_cells(c) for c in rep.cases]
    _print_cases(rows)
    d = rep.to_dict()
    if rep.mape is not None and rep.max_abs_error is not None:
        console.print(
            f"{tx('steady state')}: MAPE {rep.mape:.1%}, "
            + tr(
                f"max |error| {rep.max_abs_error:.1%} "
                f"({d['steady_state_predicted']} of {d['steady_state_total']} cases predicted)",
                f"最大 |误差| {rep.max_abs_error:.1%}（{d['steady_state_total']} 个案例中预测了 "
                f"{d['steady_state_predicted']} 个）",
            )
        )
    inside, banded = rep.band_coverage()
    if banded:
        console.print(
            tr(
                f"settings not published (micro-batch, vpp, recompute): {banded} cases predicted as a band over the "
                f"layouts that fit (point = the fastest); the measured figure lies inside the band in {inside} "
                f"({inside / banded:.0%})",
                f"未公开的设置（微批次、vpp、重计算）：{banded} 个案例按可装入的布局给出区间（点估计取最快者）；"
                f"实测值落在区间内的有 {inside} 个（{inside / banded:.0%}）",
            )
        )
    nofit = [c.id for c in rep.cases if c.error and "no layout fits" in c.error]
    if nofit:
        console.print(
            tr(
                f"not predicted, no layout fits in HBM (the memory limit is never relaxed): {', '.join(nofit)}",
                f"未预测，没有布局能装入显存（显存上限从不放宽）：{', '.join(nofit)}",
            ),
            markup=False,
        )
    # a case whose published layout breaks a structural rule (e.g. a batch that does not divide by dp)
    invalid = [(c.id, c.error) for c in rep.cases if c.error and c.error.startswith("infeasible")]
    for cid, why in invalid:
        console.print(
            tr(f"not predicted, {cid}: {why}", f"未预测，{cid}：{why}"),
            markup=False,
        )
    if rep.campaign_mape is not None:
        console.print(f"{tx('campaign')}: MAPE {rep.campaign_mape:.1%}")
    if rep.superseded:
        console.print(
            tr(
                f"superseded rows (older software releases, outside the headline): "
                f"{len(rep.superseded)} cases, MAPE {rep.superseded_mape:.1%}",
                f"已被取代的记录（较旧的软件版本，不计入主结果）：{len(rep.superseded)} 个案例，"
                f"MAPE {rep.superseded_mape:.1%}",
            )
            if rep.superseded_mape is not None
            else ""
        )
