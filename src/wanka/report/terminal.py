"""Rich renderables of the compare and claims reports (the CLI prints them; this module never prints)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from wanka.report.claims import ClaimResult
from wanka.report.compare import Comparison
from wanka.report.i18n import label
from wanka.report.summary import summary_rows

__all__ = ["claims_renderable", "compare_renderable"]

_VERDICT_STYLE = {
    "consistent": "green",
    "optimistic": "yellow",
    "inconsistent": "red",
    "mapped": "cyan",
    "unverifiable": "magenta",
}


def compare_renderable(cmp: Comparison, lang: str, *, assumptions: bool = True) -> RenderableType:
    """The side-by-side table (UX.md layout) and, below it, the assumptions per cluster."""
    t = Table(title=label("title_compare", lang), show_lines=False, box=None, pad_edge=False, expand=False)
    t.add_column("", no_wrap=True)
    for c in cmp.clusters:
        t.add_column(c.name, overflow="fold", min_width=min(len(c.name), 24))
    for r in summary_rows(cmp, lang):
        if r.section:
            t.add_row(Text(r.label, style="bold"), *[""] * len(cmp.clusters))
        else:
            t.add_row("  " * r.indent + r.label, *r.values)
    from wanka.report.html import conclusion_text

    parts: list[RenderableType] = []
    text = conclusion_text(cmp.story, lang)
    if text:
        parts += [Text(text), Text("")]
    parts.append(t)
    for c in cmp.clusters:
        for k, v in c.errors.items():
            parts.append(Text(f"{c.name}: {k} n/a — {v}", style="yellow"))
    if assumptions:
        parts.append(Text(""))
        parts.append(Text(label("section_assumptions", lang), style="bold"))
        for c in cmp.clusters:
            parts.append(Text(f"{c.name}", style="bold"))
            for a in c.assumptions:
                parts.append(Text(f"  [{a.origin}] {a.text}", style="dim"))
    return Group(*parts)


def claims_renderable(results: list[ClaimResult], lang: str) -> RenderableType:
    """One table row per claim, then the arithmetic of each."""
    t = Table(title=label("title_claims", lang), show_lines=True)
    t.add_column("id", no_wrap=True)
    t.add_column(label("statement", lang), ratio=3, overflow="fold")
    t.add_column(label("computed", lang), ratio=3, overflow="fold")
    t.add_column(label("verdict", lang), no_wrap=True)
    for r in results:
        v = label(r.verdict, lang) + (f" ×{r.factor:.2g}" if r.factor is not None else "")
        t.add_row(
            r.id,
            r.quote if lang == "zh" else r.statement,
            r.computed_zh if lang == "zh" and r.computed_zh else r.computed,
            Text(v, style=_VERDICT_STYLE.get(r.verdict, "")),
        )
    parts: list[RenderableType] = [t]
    for r in results:
        parts.append(Text(f"\n{r.id} — {label(r.verdict, lang)}", style="bold"))
        parts.append(Text(r.explanation_zh if lang == "zh" and r.explanation_zh else r.explanation))
        for line in r.arithmetic:
            parts.append(Text(f"  {line}", style="dim"))
    return Group(*parts)
