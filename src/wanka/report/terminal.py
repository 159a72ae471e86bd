"""Rich renderables of the compare and claims reports (the CLI prints them; this module never prints)."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from wanka.report.claims import ClaimResult
from wanka.report.compare import Comparison
from wanka.report.i18n import label, origin_label, plain_words
from wanka.report.summary import summary_rows, what_if_table

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
    if cmp.story.get("what_ifs"):
        parts += _what_ifs(cmp.story, lang)
    if assumptions:
        parts.append(Text(""))
        parts.append(Text(label("section_assumptions", lang), style="bold"))
        for c in cmp.clusters:
            parts.append(Text(f"{c.name}", style="bold"))
            for a in c.assumptions:
                if lang == "zh":
                    parts.append(Text(f"  [{origin_label(a.origin, lang)}] {plain_words(a.text, lang)}", style="dim"))
                else:
                    parts.append(Text(f"  [{a.origin}] {a.text}", style="dim"))
    return Group(*parts)


def _what_if(title: str, note: str, rows: list[dict[str, Any]], head0: str, lang: str, ep: bool = False) -> list[Any]:
    cols, body = what_if_table(rows, head0, lang, ep)
    t = Table(title=title, title_justify="left", title_style="bold", box=None, pad_edge=False)
    for i, c in enumerate(cols):  # folds rather than cutting a figure short on a narrow terminal
        whole = max([len(r[i]) for r in body if isinstance(r, list)], default=0) if i < 2 else None
        t.add_column(c, justify="left" if i < 2 else "right", overflow="fold", min_width=whole)
    for r in body:
        t.add_row(*(r if isinstance(r, list) else [r[0], Text(r[1], style="yellow"), *[""] * (len(cols) - 2)]))
    return [Text(""), t, Text(note, style="dim")] if note else [Text(""), t]


def _what_ifs(st: dict[str, Any], lang: str) -> list[Any]:
    """The story's what-ifs on the largest cluster (超节点, MoE All2All, FP8), as the HTML report has them."""
    zh = lang == "zh"
    out: list[Any] = []
    sp = st.get("superpod") or {}
    if sp.get("rows"):
        out += _what_if(
            "超节点（Scale-up 域）：同一任务、同样卡数，策略重新搜索"
            if zh
            else "Supernode (超节点): the same job on the same GPUs with a larger scale-up domain, strategy searched "
            "again",
            "假设：每卡 scale-up 带宽不变，只改变域的大小。"
            if zh
            else "Assumed: the per-GPU scale-up bandwidth stays the accelerator's; only the size of the domain "
            "changes.",
            sp["rows"],
            "域大小（卡）" if zh else "domain (GPUs)",
            lang,
        )
    moe = st.get("moe") or {}
    if moe.get("rows"):
        out += _what_if(
            f"MoE 与 All2All：{moe['model']}（{moe.get('experts')} 个专家）"
            if zh
            else f"MoE and All2All: {moe['model']} ({moe.get('experts')} experts), all-to-all vs DeepEP-class dispatch",
            "",
            moe["rows"],
            "方案" if zh else "variant",
            lang,
            ep=True,
        )
    elif moe.get("error"):
        out += [Text(""), Text(f"MoE: {moe['error']}", style="yellow")]
    fp8 = st.get("fp8") or {}
    if fp8.get("rows"):
        out += _what_if(
            "FP8 与 BF16：同一任务、同一并行策略" if zh else "FP8 vs BF16: the same job and strategy",
            "MFU 以各自精度的峰值为分母。" if zh else "MFU is against each precision's own peak.",
            fp8["rows"],
            "精度" if zh else "precision",
            lang,
        )
    elif fp8.get("error"):
        out += [Text(""), Text(f"FP8: {fp8['error']}", style="yellow")]
    return out


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
