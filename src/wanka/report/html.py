"""The compare report as one self-contained HTML page: tables, plots as data URIs, print CSS.

The page fetches nothing (its Content-Security-Policy allows only inline styles and ``data:``
images); the template and stylesheet are package data under ``wanka/report/templates``.
"""

from __future__ import annotations

import html
from importlib import metadata, resources
from string import Template
from typing import Any

from wanka.report.compare import Comparison
from wanka.report.i18n import label
from wanka.report.plots import Plot, compare_plots
from wanka.report.summary import (
    fmt_duration,
    fmt_energy,
    fmt_pct,
    fmt_power,
    fmt_usd,
    summary_rows,
    what_if_table,
)
from wanka.units import format_bytes

__all__ = ["conclusion_text", "render_claims", "render_compare_body", "render_compare_html", "render_story"]

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


def render_compare_body(cmp: Comparison, lang: str, claims: list[Any] | None = None) -> str:
    """The report's sections (conclusion and story, table, plots, claims, definitions, assumptions,
    sources) as HTML."""
    plots = compare_plots(cmp, lang)
    parts = [
        render_story(cmp, lang),
        f'<section id="summary"><h2>{_e(_t(lang, "逐项对比", "Side by side"))}</h2>{_summary(cmp, lang)}</section>',
        f'<section id="plots"><h2>{_e(label("section_plots", lang))}</h2>{_plots(plots, lang)}</section>',
        render_claims(claims, lang) if claims else "",
        f'<section id="definitions"><h2>{_e(label("section_definitions", lang))}</h2>{_definitions(cmp, lang)}'
        "</section>",
        f'<section id="assumptions"><h2>{_e(label("section_assumptions", lang))}</h2>{_assumptions(cmp, lang)}'
        "</section>",
        f'<section id="sources"><h2>{_e(label("section_sources", lang))}</h2>{_sources(cmp)}</section>',
    ]
    return "\n".join(parts)


def render_compare_html(cmp: Comparison, lang: str, claims: list[Any] | None = None) -> str:
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
        body=render_compare_body(cmp, lang, claims),
        footer=_e(f"{label('generated_by', lang)} {version} · {_TERMS}"),
    )


# ---------------------------------------------------------------- the story (conclusion on top)
def _t(lang: str, zh: str, en: str) -> str:
    return zh if lang == "zh" else en


def _pct(x: Any) -> str:
    return fmt_pct(x)


def _ratio(a: Any, b: Any) -> float | None:
    try:
        return float(a) / float(b) if a and b else None
    except (TypeError, ValueError):
        return None


def conclusion_text(st: dict[str, Any], lang: str) -> str:
    """The conclusion of a comparison's story as plain text in ``lang`` (empty without a story)."""
    if not st:
        return ""
    h = st["headline"]
    f, t = h["from"], h["to"]
    n = _ratio(t["accelerators"], f["accelerators"])
    parts = []
    if lang == "zh":
        parts.append(
            f"从 {st['from']} 到 {st['to']}：加速卡 {f['accelerators']:,} → {t['accelerators']:,}"
            + (f"（{n:,.0f} 倍）" if n else "")
            + "。"
        )
    else:
        parts.append(
            f"From {st['from']} to {st['to']}: {f['accelerators']:,} → {t['accelerators']:,} accelerators"
            + (f" ({n:,.0f}×)" if n else "")
            + "."
        )
    sj = st.get("same_job")
    if sj:
        sp = _ratio(
            sj["small_wall_clock_s"] or sj["small_time_to_train_s"], sj["big_wall_clock_s"] or sj["big_time_to_train_s"]
        )
        parts.append(
            _t(
                lang,
                f"同一任务 {sj['model']}：传统集群需 {fmt_duration(sj['small_wall_clock_s'], lang)}，万卡集群 "
                f"{fmt_duration(sj['big_wall_clock_s'], lang)}" + (f"，快 {sp:,.0f} 倍。" if sp else "。"),
                f"The same job ({sj['model']}) takes {fmt_duration(sj['small_wall_clock_s'], lang)} on the traditional "
                f"cluster and {fmt_duration(sj['big_wall_clock_s'], lang)} on the 万卡 one"
                + (f", {sp:,.0f}× faster." if sp else "."),
            )
        )
    parts.append(
        _t(
            lang,
            f"原因：速度来自卡数，而效率（高效训练）基本守住——MFU {_pct(f['mfu'])} → {_pct(t['mfu'])}，"
            f"线性加速比 {_pct(f['scaling'])} → {_pct(t['scaling'])}，暴露通信占比 {_pct(f['exposed_comm_share'])} → "
            f"{_pct(t['exposed_comm_share'])}；代价在长稳可靠：每日故障 {f['failures_per_day'] or 0:.2f} → "
            f"{t['failures_per_day'] or 0:.1f} 次，有效训练时长 ETTR {_pct(f['ettr'])} → {_pct(t['ettr'])}；"
            f"设施功率 {fmt_power(f['facility_power_w'])} → {fmt_power(t['facility_power_w'])}。",
            f"Why: the speed comes from the number of GPUs while efficiency (高效训练) mostly holds — MFU "
            f"{_pct(f['mfu'])} → {_pct(t['mfu'])}, scaling efficiency {_pct(f['scaling'])} → {_pct(t['scaling'])}, "
            f"exposed communication {_pct(f['exposed_comm_share'])} → {_pct(t['exposed_comm_share'])}; the price is "
            f"paid in 长稳可靠: failures per day {f['failures_per_day'] or 0:.2f} → {t['failures_per_day'] or 0:.1f}, "
            f"ETTR {_pct(f['ettr'])} → {_pct(t['ettr'])}; facility power {fmt_power(f['facility_power_w'])} → "
            f"{fmt_power(t['facility_power_w'])}.",
        )
    )
    return ("" if lang == "zh" else " ").join(parts)


def _conclusion(st: dict[str, Any], lang: str) -> str:
    return "<p>" + _e(conclusion_text(st, lang)) + "</p>"


def _rows_table(rows: list[dict[str, Any]], head0: str, lang: str, ep: bool = False) -> str:
    cols, body = what_if_table(rows, head0, lang, ep)
    out = [
        "<table class='compare story-table'><thead><tr>",
        *(f"<th>{_e(c)}</th>" for c in cols),
        "</tr></thead><tbody>",
    ]
    for r in body:
        if isinstance(r, tuple):
            out.append(f"<tr><td>{_e(r[0])}</td><td colspan='{len(cols) - 1}'>{_e(r[1])}</td></tr>")
        else:
            out.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _four_layers(cmp: Comparison, lang: str) -> str:
    cs = cmp.clusters
    rows = [
        (
            _t(lang, "机房配套层", "Facility layer (机房配套层)"),
            [
                f"{fmt_power(c.facility.get('facility_power_w'))}, PUE {c.facility.get('pue', 0):.2f}, "
                f"{c.facility.get('racks', 0):,} {label('racks', lang)}"
                if c.facility
                else "—"
                for c in cs
            ],
        ),
        (
            _t(lang, "基础设施层", "Infrastructure layer (基础设施层)"),
            [
                f"{c.scale['accelerators']:,} × {c.scale['accelerator']}; {c.network.get('tiers')} "
                + _t(lang, "层组网", "-tier fabric")
                + (f", {c.network['switches']:,} " + label("switches", lang) if c.network.get("switches") else "")
                for c in cs
            ],
        ),
        (
            _t(lang, "智算平台层", "Platform layer (智算平台层)"),
            [
                f"{c.scale['job_gpus']:,} / {c.scale['accelerators']:,} "
                + _t(lang, "卡用于本任务（作业调度见 wanka schedule）", "GPUs in this job (scheduling: wanka schedule)")
                for c in cs
            ],
        ),
        (
            _t(lang, "应用使能层", "Application layer (应用使能层)"),
            [
                f"{c.job['model']}: MFU {_pct(c.efficiency['mfu'])}, {c.efficiency['step_time_s']:.2f} s/step"
                for c in cs
            ],
        ),
        (
            _t(lang, "智算运营和运维域", "Operations domain (智算运营和运维域)"),
            [
                f"{c.reliability.get('failures_per_day', 0):.2f} "
                + _t(lang, "次故障/天", "failures/day")
                + f", ETTR {_pct(c.reliability.get('ettr'))}"
                if c.reliability
                else "—"
                for c in cs
            ],
        ),
    ]
    head = "".join(f"<th>{_e(c.name)}</th>" for c in cs)
    body = "".join(f"<tr><td>{_e(k)}</td>{''.join(f'<td>{_e(v)}</td>' for v in vals)}</tr>" for k, vals in rows)
    return f"<table class='compare story-table'><thead><tr><th></th>{head}</tr></thead><tbody>{body}</tbody></table>"


def _storage_energy(st: dict[str, Any], lang: str) -> tuple[str, str]:
    srows = []
    for x in st.get("storage", []):
        dr = x.get("data_read") or {}
        bw = x.get("checkpoint_write_bandwidth")
        srows.append(
            [
                x["name"],
                format_bytes(x["checkpoint_size_bytes"]) if x.get("checkpoint_size_bytes") else "—",
                f"{bw / 1e9:,.0f} GB/s ({x.get('checkpoint_limited_by') or '—'})" if bw else "—",
                fmt_duration(x.get("checkpoint_blocking_s"), lang)
                + " / "
                + fmt_duration(x.get("checkpoint_save_s"), lang),
                (
                    f"{dr['demand_bytes_per_s'] / 1e9:,.2f} / {dr['supply_bytes_per_s'] / 1e9:,.0f} GB/s "
                    + ("✓" if dr.get("ok") else "✗")
                )
                if dr
                else "—",
            ]
        )
    shead = [
        "",
        _t(lang, "检查点大小", "checkpoint size"),
        _t(lang, "写带宽（瓶颈）", "write bandwidth (limited by)"),
        label("ckpt_save", lang),
        _t(lang, "数据读取 需求 / 供给", "data read demand / supply"),
    ]
    erows = [
        [
            x["name"],
            fmt_power(x.get("facility_power_w")),
            fmt_duration(x.get("wall_clock_s"), lang),
            fmt_energy(x.get("energy_j")),
            fmt_usd(x.get("energy_cost_usd")),
            f"{x['co2_kg'] / 1e3:,.0f} t" if x.get("co2_kg") else "—",
        ]
        for x in st.get("energy", [])
    ]
    ehead = [
        "",
        label("facility_power", lang),
        label("ttt_wall", lang),
        label("energy", lang),
        label("cost", lang),
        label("co2", lang),
    ]

    def table(head: list[str], rows: list[list[str]]) -> str:
        return (
            "<table class='compare story-table'><thead><tr>"
            + "".join(f"<th>{_e(h)}</th>" for h in head)
            + "</tr></thead><tbody>"
            + "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows)
            + "</tbody></table>"
        )

    return table(shead, srows), table(ehead, erows)


def render_story(cmp: Comparison, lang: str) -> str:
    """The story: conclusion, 四层一域, 高效训练 / 长稳可靠, 超节点, MoE, FP8, storage, energy."""
    st = cmp.story
    if not st:
        return ""
    out = [
        '<section id="story" class="story">',
        f"<h2>{_e(_t(lang, '结论', 'Conclusion'))}</h2>",
        _conclusion(st, lang),
    ]
    out.append(f"<h3>{_e(label('section_four_layers', lang))}</h3>{_four_layers(cmp, lang)}")
    sp = st.get("superpod") or {}
    if sp.get("rows"):
        out.append(f"<h3>{_e(_t(lang, '超节点（Scale-up 域）', 'Supernode (超节点): the scale-up domain'))}</h3>")
        out.append(
            "<p>"
            + _e(
                _t(
                    lang,
                    f"同一任务、同样卡数，把 {st['subject']} 的机内互联域从 {sp['domain_now']} 卡"
                    "扩大到 72 卡（NVL72 级）"
                    "和 384 卡（CloudMatrix 级），并行策略重新搜索：张量/专家并行可以留在高带宽域内，跨节点通信减少。"
                    "（假设：每卡 scale-up 带宽不变，只改变域的大小。）",
                    f"The same job on the same number of GPUs, with {st['subject']}'s scale-up domain grown from "
                    f"{sp['domain_now']} to 72 GPUs (NVL72-class) and 384 (CloudMatrix-class), strategy searched "
                    "again: tensor and expert parallelism can stay inside the fast domain. (Assumed: the per-GPU "
                    "scale-up bandwidth stays the accelerator's; only the size of the domain changes.)",
                )
            )
            + "</p>"
        )
        out.append(_rows_table(sp["rows"], _t(lang, "域大小（卡）", "domain (GPUs)"), lang))
    moe = st.get("moe") or {}
    if moe.get("rows"):
        out.append(f"<h3>{_e(_t(lang, 'MoE 与 All2All', 'MoE and All2All'))}</h3>")
        out.append(
            "<p>"
            + _e(
                _t(
                    lang,
                    f"{moe['model']}（{moe.get('experts')} 个专家）放在 {st['subject']} 上："
                    "专家并行的 All2All 暴露时间，"
                    "DeepEP 类（按节点去重）分发的效果，以及更大超节点的效果。",
                    f"{moe['model']} ({moe.get('experts')} experts) on {st['subject']}: the exposed expert-parallel "
                    "all-to-all, what DeepEP-class (node-deduplicated) dispatch does to it, and what a larger "
                    "scale-up domain does.",
                )
            )
            + "</p>"
        )
        out.append(_rows_table(moe["rows"], _t(lang, "方案", "variant"), lang, ep=True))
    elif moe.get("error"):
        out.append(f"<p class='error'>MoE: {_e(moe['error'])}</p>")
    fp8 = st.get("fp8") or {}
    out.append("<h3>FP8 vs BF16</h3>")
    if fp8.get("rows"):
        rows = fp8["rows"]
        ok = all("error" not in r for r in rows)
        if ok:
            sp8 = rows[0]["step_time_s"] / rows[1]["step_time_s"]
            out.append(
                "<p>"
                + _e(
                    _t(
                        lang,
                        f"同一任务、同一并行策略，FP8 单步快 {sp8:.2f} 倍"
                        "（MFU 以各自精度的峰值为分母，所以 FP8 的 MFU 更低）。",
                        f"The same job and strategy: FP8 steps are {sp8:.2f}× faster (MFU is against each "
                        "precision's own peak, so FP8's MFU is lower).",
                    )
                )
                + "</p>"
            )
        out.append(_rows_table(rows, _t(lang, "精度", "precision"), lang))
    elif fp8.get("error"):
        out.append(f"<p>{_e(fp8['error'])}</p>")
    s_tab, e_tab = _storage_energy(st, lang)
    out.append(f"<h3>{_e(_t(lang, '并行存储：需求与供给', 'Parallel storage: demand against supply'))}</h3>{s_tab}")
    out.append(f"<h3>{_e(_t(lang, '能耗', 'Energy'))}</h3>{e_tab}")
    out.append("</section>")
    return "".join(out)


def render_claims(results: list[Any], lang: str) -> str:
    """The article's claims with their verdicts, in ``lang``."""
    rows = []
    for r in results:
        d = r.to_dict() if hasattr(r, "to_dict") else dict(r)
        v = label(d["verdict"], lang) + (f" ×{d['factor']:.2g}" if d.get("factor") else "")
        expl = d.get("explanation_zh") if lang == "zh" and d.get("explanation_zh") else d["explanation"]
        stmt = d["quote"] if lang == "zh" else d["statement"]
        comp = d.get("computed_zh") if lang == "zh" and d.get("computed_zh") else d["computed"]
        rows.append(
            f"<tr><td>{_e(stmt)}</td><td>{_e(comp)}</td>"
            f"<td><span class='verdict {_e(d['verdict'])}'>{_e(v)}</span></td><td>{_e(expl)}</td></tr>"
        )
    head = "".join(f"<th>{_e(label(k, lang))}</th>" for k in ("statement", "computed", "verdict", "explanation"))
    return (
        f'<section id="claims"><h2>{_e(label("title_claims", lang))}</h2>'
        f"<table class='compare claims'><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )
