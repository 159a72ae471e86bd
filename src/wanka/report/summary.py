"""The compare table as rows (section headers and labelled values), shared by terminal and HTML."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from wanka.engine import BREAKDOWN_KEYS
from wanka.report.compare import ClusterReport, Comparison
from wanka.report.i18n import label

__all__ = ["Row", "fmt_count", "fmt_duration", "fmt_pct", "fmt_power", "summary_rows", "what_if_table"]


@dataclass(frozen=True)
class Row:
    """A section header (``values`` empty) or a labelled row with one value per cluster."""

    label: str
    values: tuple[str, ...] = ()
    section: bool = False
    indent: int = 1


def _ok(x: Any) -> bool:
    return isinstance(x, int | float) and math.isfinite(x)


def fmt_pct(x: Any, digits: int = 1) -> str:
    return f"{x:.{digits}%}" if _ok(x) else "—"


def fmt_count(x: Any) -> str:
    return f"{x:,.0f}" if _ok(x) else "—"


def fmt_duration(s: Any, lang: str) -> str:
    if not _ok(s):
        return "—"
    zh = lang == "zh"
    if s < 120:
        return f"{s:.1f} s" if s >= 1 else f"{s * 1e3:.0f} ms"
    if s < 7200:
        return f"{s / 60:.1f} {'分钟' if zh else 'min'}"
    if s < 3 * 86400:
        return f"{s / 3600:.1f} {'小时' if zh else 'h'}"
    if s < 730 * 86400:
        return f"{s / 86400:,.1f} {'天' if zh else 'days'}"
    return f"{s / (365.25 * 86400):,.1f} {'年' if zh else 'years'}"


def fmt_power(w: Any) -> str:
    if not _ok(w):
        return "—"
    if w >= 1e6:
        return f"{w / 1e6:,.2f} MW"
    return f"{w / 1e3:,.1f} kW"


def fmt_energy(j: Any) -> str:
    if not _ok(j):
        return "—"
    mwh = j / 3.6e9
    return f"{mwh / 1e3:,.2f} GWh" if mwh >= 1e3 else f"{mwh:,.1f} MWh"


def _fmt_cost(x: Any) -> str:
    """Electricity cost in the scenario's currency (USD as $, others with their code)."""
    if not x:
        return "—"
    cur = x.get("currency", "USD")
    if cur == "USD":
        return fmt_usd(x.get("energy_cost_usd", x.get("energy_cost")))
    v = x.get("energy_cost")
    if not _ok(v):
        return "—"
    f = float(v)
    return f"{f / 1e6:,.2f}M {cur}" if f >= 1e6 else f"{f:,.0f} {cur}"


def fmt_usd(x: Any) -> str:
    if not _ok(x):
        return "—"
    return f"${x / 1e6:,.2f}M" if x >= 1e6 else f"${x:,.0f}"


def fmt_flops(x: Any) -> str:
    return f"{x / 1e15:,.0f} PFLOPS" if _ok(x) else "—"


def _peak_dtype(c: ClusterReport) -> str:
    prec = c.job.get("precision", "bf16")
    if prec in c.peak_flops:
        return str(prec)
    return "bf16" if "bf16" in c.peak_flops else next(iter(c.peak_flops), "bf16")


def _strategy(st: dict[str, Any]) -> str:
    parts = [f"tp{st['tp']}", f"pp{st['pp']}" + (f"(v{st['vpp']})" if st.get("vpp", 1) > 1 else ""), f"dp{st['dp']}"]
    if st.get("cp", 1) > 1:
        parts.append(f"cp{st['cp']}")
    if st.get("ep", 1) > 1:
        parts.append(f"ep{st['ep']}")
    parts.append(f"zero{st['zero']}")
    return "·".join(parts)


def _network_text(n: dict[str, Any], lang: str) -> str:
    if n.get("switches") is None:
        return f"{n.get('tiers', '?')}-tier {n.get('kind', '')}" + (" (BOM n/a)" if n.get("error") else "")
    tiers = " / ".join(f"{v:,}" for v in n.get("switches_per_tier", {}).values())
    if lang == "zh":
        return f"{n['tiers']} 层 {n['kind']}，交换机 {n['switches']:,}（{tiers}）"
    return f"{n['tiers']}-tier {n['kind']}, {n['switches']:,} switches ({tiers})"


def summary_rows(cmp: Comparison, lang: str) -> list[Row]:
    """Rows of the compare table in ``lang`` (values are display strings)."""
    cs = cmp.clusters
    L = lambda k: label(k, lang)  # noqa: E731
    rows: list[Row] = []

    def sec(key: str) -> None:
        rows.append(Row(L(key), section=True, indent=0))

    def row(key_or_label: str, vals: list[str], indent: int = 1) -> None:
        rows.append(Row(L(key_or_label), tuple(vals), indent=indent))

    sec("section_scale")
    row("accelerators", [f"{c.scale['accelerators']:,} × {c.scale['accelerator']}" for c in cs])
    row("nodes", [f"{c.scale['nodes']:,} × {c.scale['gpus_per_node']}" for c in cs])
    row(
        "scale_up",
        [
            (
                f"{c.scale['scale_up_domain']} 卡/域 × {c.scale['scale_up_domains']:,} 个域"
                if lang == "zh"
                else f"{c.scale['scale_up_domain']} GPUs/domain × {c.scale['scale_up_domains']:,} domains"
            )
            for c in cs
        ],
    )
    for dt in ("fp8", "bf16"):
        if any(dt in c.peak_flops for c in cs):
            row(f"{L('peak')} ({dt.upper()})", [fmt_flops(c.peak_flops.get(dt)) for c in cs])
    sec("section_job")
    row("model", [f"{c.job['model']} ({c.job['params'] / 1e9:,.0f}B)" for c in cs])
    row("tokens", [f"{c.job['tokens'] / 1e12:,.2f} T" for c in cs])
    row("batch", [f"{c.job['global_batch_seqs']:,} × {c.job['seq_len']:,}" for c in cs])
    row("job_gpus", [fmt_count(c.scale["job_gpus"]) for c in cs])
    row("strategy", [_strategy(c.job["strategy"]) for c in cs])
    row(
        "strategy_source",
        [
            L("preset")
            if c.job["strategy_source"] == "preset"
            else f"{L('picked')}" + (" ⚠" if "infeasible" in c.job["strategy_source"] else "")
            for c in cs
        ],
    )
    sec("section_efficiency")
    e = [c.efficiency for c in cs]
    row("mfu", [fmt_pct(x["mfu"]) for x in e])
    row(
        "scaling",
        [
            fmt_pct((x["scaling"] or {}).get("efficiency"))
            + (f" (vs {x['scaling']['reference_gpus']:,})" if x["scaling"] else "")
            for x in e
        ],
    )
    row("exposed_comm", [fmt_pct(x["exposed_comm_share"]) for x in e])
    row("step_time", [fmt_duration(x["step_time_s"], lang) for x in e])
    row("tokens_per_s_per_gpu", [fmt_count(x["tokens_per_s_per_gpu"]) for x in e])
    for k in BREAKDOWN_KEYS:
        vals = [x["breakdown_s"][k] for x in e]
        if all(v == 0 for v in vals):
            continue
        cells = [f"{v:.2f} s ({v / x['step_time_s']:.0%})" for v, x in zip(vals, e, strict=True)]
        if k.endswith("_comm") and vals[0] > 0:  # exposed communication: the change against the first cluster
            vs = f"较 {cs[0].name}" if lang == "zh" else f"vs {cs[0].name}"
            cells[1:] = [f"{c} {v / vals[0] - 1.0:+.0%} {vs}" for c, v in zip(cells[1:], vals[1:], strict=True)]
        row(k, cells, indent=2)
    sec("section_reliability")
    r = [c.reliability for c in cs]
    row("failures_per_day", [f"{x['failures_per_day']:.2f}" if x else "—" for x in r])
    row("mtbf", [fmt_duration(x.get("job_mtbf_s"), lang) for x in r])
    row(
        "ckpt_save",
        [
            f"{fmt_duration(x.get('checkpoint_blocking_s'), lang)} / {fmt_duration(x.get('checkpoint_save_s'), lang)}"
            if x
            else "—"
            for x in r
        ],
    )
    row("ckpt_interval", [fmt_duration(x.get("checkpoint_interval_s"), lang) for x in r])
    row(
        "ettr",
        [
            fmt_pct(x.get("ettr")) + (f" ({fmt_pct(x['ettr_p5'], 0)}–{fmt_pct(x['ettr_p95'], 0)})" if x else "")
            for x in r
        ],
    )
    sec("section_network")
    row("fabric", [_network_text(c.network, lang) for c in cs])
    row("optics", [fmt_count(c.network.get("optics")) for c in cs])
    row(
        "bisection",
        [
            f"{c.network['bisection_bytes_per_s'] * 8 / 1e12:,.0f} Tb/s"
            if _ok(c.network.get("bisection_bytes_per_s"))
            else "—"
            for c in cs
        ],
    )
    sec("section_facility")
    f = [c.facility for c in cs]
    row("it_power", [fmt_power(x.get("it_power_w")) for x in f])
    row("facility_power", [f"{fmt_power(x['facility_power_w'])} (PUE {x['pue']:.2f})" if x else "—" for x in f])
    row("racks", [f"{x['racks']:,} × {fmt_power(x['rack_power_w'])}" if x else "—" for x in f])
    row("energy", [fmt_energy(x.get("energy_j")) for x in f])
    row("cost", [_fmt_cost(x) for x in f])
    row("co2", [f"{x['co2_kg'] / 1e3:,.0f} t" if _ok(x.get("co2_kg")) else "—" for x in f])
    row("ttt_steady", [fmt_duration(x["time_to_train_s"], lang) for x in e], indent=0)
    row("ttt_wall", [fmt_duration(x.get("wall_clock_s"), lang) for x in r], indent=0)
    same = [c.same_job for c in cs]
    if any(s is not None for s in same):
        src = next(s for s in same if s is not None)
        rows.append(Row(L("section_same_job"), section=True, indent=0))
        own = [c.name == src.source for c in cs]
        row("model", [f"{src.model} · {src.tokens / 1e12:,.1f} T" for _ in cs])
        row(
            "job_gpus",
            [
                fmt_count(c.scale["job_gpus"] if o else (s.gpus if s else None))
                for c, s, o in zip(cs, same, own, strict=True)
            ],
        )
        row(
            "mfu",
            [
                fmt_pct(c.efficiency["mfu"])
                if o
                else fmt_pct(s.mfu if s else None) + (f" ({L('above_published')})" if s and s.above_published else "")
                for c, s, o in zip(cs, same, own, strict=True)
            ],
        )
        row(
            "ttt_steady",
            [
                fmt_duration(c.efficiency["time_to_train_s"] if o else (s.time_to_train_s if s else None), lang)
                for c, s, o in zip(cs, same, own, strict=True)
            ],
        )
        row(
            "ttt_wall",
            [
                fmt_duration(c.reliability.get("wall_clock_s") if o else (s.wall_clock_s if s else None), lang)
                for c, s, o in zip(cs, same, own, strict=True)
            ],
        )
    return rows


def strategy_text(st: dict[str, Any]) -> str:
    """A what-if row's parallel layout, compactly: TP8·PP16(v8)·DP128·CP2·EP8."""
    s = f"TP{st['tp']}·PP{st['pp']}" + (f"(v{st['vpp']})" if st.get("vpp", 1) > 1 else "")
    s += f"·DP{st['dp']}" + (f"·CP{st['cp']}" if st.get("cp", 1) > 1 else "")
    return s + (f"·EP{st['ep']}" if st.get("ep", 1) > 1 else "")


def what_if_table(
    rows: list[dict[str, Any]], head0: str, lang: str, ep: bool = False
) -> tuple[list[str], list[list[str] | tuple[str, str]]]:
    """The columns and rows of one what-if of the compare story (超节点, MoE All2All, FP8), for the HTML
    report and the terminal alike: a row is its cells, or ``(label, error)`` where it could not run."""
    cols = [head0, label("strategy", lang), label("step_time", lang), label("mfu", lang), label("exposed_comm", lang)]
    if ep:
        cols.append("暴露 EP（All2All）时间" if lang == "zh" else "exposed EP (all-to-all)")
    cols.append(label("ttt_steady", lang))
    out: list[list[str] | tuple[str, str]] = []
    for r in rows:
        if "error" in r:
            out.append((str(r["label"]), str(r["error"])))
            continue
        cells = [
            str(r["label"]),
            strategy_text(r["strategy"]),
            f"{r['step_time_s']:.2f} s",
            fmt_pct(r["mfu"]),
            fmt_pct(r["exposed_comm_share"]),
        ]
        if ep:
            cells.append(f"{r['ep_comm_s']:.3f} s ({fmt_pct(r['ep_share'])})")
        cells.append(fmt_duration(r["time_to_train_s"], lang))
        out.append(cells)
    return cols, out
