"""The compare report as one self-contained HTML page: tables, plots as data URIs, print CSS.

The page fetches nothing (its Content-Security-Policy allows only inline styles and ``data:``
images); the template and stylesheet are package data under ``wanka/report/templates``.
"""

from __future__ import annotations

import html
from importlib import metadata, resources
from string import Template

from wanka.report.compare import Comparison
from wanka.report.i18n import label
from wanka.report.plots import Plot, compare_plots
from wanka.report.summary import summary_rows

__all__ = ["render_compare_body", "render_compare_html"]

_TERMS = "高效训练 · 长稳可靠 · 有效训练时长 · 线性加速比 · 四层一域"


def _template(name: str) -> str:
    return (resources.files("wanka.report") / "templates" / name).read_text(encoding="utf-8")


def _version() -> str:
    try:
        return metadata.version("wanka")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "dev"


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def _summary(cmp: Comparison, lang: str) -> str:
    head = "".join(f"<th>{_e(c.name)}</th>" for c in cmp.clusters)
    body = []
    for r in summary_rows(cmp, lang):
        if r.section:
            body.append(f'<tr class="section"><td colspan="{len(cmp.clusters) + 1}">{_e(r.label)}</td></tr>')
        else:
            cells = "".join(f"<td>{_e(v)}</td>" for v in r.values)
            body.append(f'<tr><td class="indent-{r.indent}">{_e(r.label)}</td>{cells}</tr>')
    errors = [
        f'<p class="error">{_e(c.name)}: {_e(k)} n/a — {_e(v)}</p>' for c in cmp.clusters for k, v in c.errors.items()
    ]
    return (
        f'<table class="compare"><thead><tr><th></th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        + "".join(errors)
    )


def _plots(plots: list[Plot], lang: str) -> str:
    out = []
    for p in plots:
        note = ""
        if p.lang != lang:
            note = "（未安装中文字体：图中标签为英文）" if lang == "zh" else " (plot labels in English)"
        out.append(
            f'<figure id="plot-{_e(p.id)}"><img src="{p.data_uri}" alt="{_e(p.title)}" '
            f'data-plot="{_e(p.id)}"><figcaption>{_e(p.title)}{_e(note)}</figcaption></figure>'
        )
    return "\n".join(out)


def _definitions(cmp: Comparison, lang: str) -> str:
    from wanka.report.i18n import definition

    items = [definition(k, v, lang) for k, v in cmp.definitions.items()]
    return "<dl>" + "".join(f"<dt>{_e(t)}</dt><dd>{_e(d)}</dd>" for t, d in items) + "</dl>"


def _assumptions(cmp: Comparison, lang: str) -> str:
    out = []
    for c in cmp.clusters:
        items = []
        for a in c.assumptions:
            from wanka.report.i18n import origin_label, plain_words

            tag = origin_label(a.origin, lang)
            items.append(
                f'<li><span class="origin {_e(a.origin)}">{_e(tag)}</span>{_e(plain_words(a.text, lang))}</li>'
            )
        out.append(f'<h3>{_e(c.name)}</h3><ul class="assumptions">{"".join(items)}</ul>')
    return "\n".join(out)


def _sources(cmp: Comparison) -> str:
    return "\n".join(
        f"<h3>{_e(c.name)}</h3><ul>{''.join(f'<li>{_e(s)}</li>' for s in c.sources)}</ul>" for c in cmp.clusters
    )


def render_compare_body(cmp: Comparison, lang: str) -> str:
    """The report's sections (conclusion, table, plots, definitions, assumptions, sources) as HTML."""
    plots = compare_plots(cmp, lang)
    parts = [
        f'<section id="summary">{_summary(cmp, lang)}</section>',
        f'<section id="plots"><h2>{_e(label("section_plots", lang))}</h2>{_plots(plots, lang)}</section>',
        f'<section id="definitions"><h2>{_e(label("section_definitions", lang))}</h2>{_definitions(cmp, lang)}'
        "</section>",
        f'<section id="assumptions"><h2>{_e(label("section_assumptions", lang))}</h2>{_assumptions(cmp, lang)}'
        "</section>",
        f'<section id="sources"><h2>{_e(label("section_sources", lang))}</h2>{_sources(cmp)}</section>',
    ]
    return "\n".join(parts)


def render_compare_html(cmp: Comparison, lang: str) -> str:
    """The whole page for ``cmp`` in ``lang`` (``zh`` or ``en``)."""
    names = " vs ".join(c.name for c in cmp.clusters)
    if cmp.job_mode == "same":
        job = (
            f"同一训练任务：{cmp.job_model}，各集群自动选择并行策略"
            if lang == "zh"
            else f"the same job on every cluster: {cmp.job_model}, strategy picked per cluster"
        )
    else:
        job = (
            "各集群运行其预置任务；“同一任务”一节为最大集群的任务"
            if lang == "zh"
            else ("each cluster runs its preset's job; the 'same job' block puts the largest cluster's job on all")
        )
    version = _version()
    return Template(_template("report.html")).substitute(
        html_lang="zh-CN" if lang == "zh" else "en",
        version=_e(version),
        title=_e(label("title_compare", lang)),
        subtitle=_e(f"{names} · {job}"),
        css=_template("report.css"),
        body=render_compare_body(cmp, lang),
        footer=_e(f"{label('generated_by', lang)} {version} · {_TERMS}"),
    )
