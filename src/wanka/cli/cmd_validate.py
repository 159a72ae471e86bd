"""`wanka validate`: predicted vs published throughput of real training runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from wanka.cli.app import app, console, emit_json
from wanka.cli.lang import tr
from wanka.validate import CaseResult, run_validation


def _row(t: Table, c: CaseResult) -> None:
    pred = "—" if c.predicted is None else f"{c.predicted:,.0f}"
    err = "—" if c.rel_error is None else f"{c.rel_error:+.1%}"
    style = None
    if c.rel_error is not None and abs(c.rel_error) > 0.2:
        style = "red"
    note = c.error or ("campaign: needs the operations model" if c.kind == "campaign" and c.predicted is None else "")
    band = ""
    if c.band is not None and c.unknown:
        band = f"{c.band[0]:,.0f}..{c.band[1]:,.0f}" + (" ✓" if c.in_band else "")
        note = note or f"{c.layouts} layouts fit; unpublished: {', '.join(c.unknown)}"
    t.add_row(c.id, c.kind, pred, band, f"{c.truth:,.0f}", err, note, style=style)


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
    t = Table(title=tr("published runs: predicted vs measured tokens/s/GPU", "公开训练记录：预测与实测 tokens/s/GPU"))
    for col, just in (
        ("id", "left"),
        ("kind", "left"),
        ("predicted", "right"),
        ("band", "right"),
        ("measured", "right"),
        ("error", "right"),
        ("note", "left"),
    ):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for c in rep.cases:
        _row(t, c)
    console.print(t)
    d = rep.to_dict()
    if rep.mape is not None and rep.max_abs_error is not None:
        console.print(
            f"{tr('steady state', '稳态')}: MAPE {rep.mape:.1%}, max |error| {rep.max_abs_error:.1%} "
            f"({d['steady_state_predicted']} of {d['steady_state_total']} cases predicted)"
        )
    inside, banded = rep.band_coverage()
    if banded:
        console.print(
            f"settings not published (micro-batch, vpp, recompute): {banded} cases predicted as a band over the "
            f"layouts that fit (point = the fastest); the measured figure lies inside the band in {inside} "
            f"({inside / banded:.0%})"
        )
    nofit = sum(1 for c in rep.cases if c.error and "no layout fits" in c.error)
    if nofit:
        console.print(f"{nofit} cases not predicted: no layout fits in HBM (the memory limit is never relaxed)")
    if rep.campaign_mape is not None:
        console.print(f"campaign: MAPE {rep.campaign_mape:.1%}")
    if rep.superseded:
        console.print(
            f"superseded rows (older software releases, outside the headline): "
            f"{len(rep.superseded)} cases, MAPE {rep.superseded_mape:.1%}"
            if rep.superseded_mape is not None
            else ""
        )
