"""Small inline-SVG charts for the pages (no script, no external file): stacked bars, lines, a timeline.

Every chart has a ``<title>`` (read by screen readers), axis labels with units and a legend.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["COLORS", "Series", "line_chart", "stacked_bar", "timeline"]

COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


@dataclass(frozen=True)
class Series:
    label: str
    xs: Sequence[float]
    ys: Sequence[float]
    dashed: bool = False
    width: float = 2.0
    marker: bool = True


def stacked_bar(
    title: str, parts: Sequence[tuple[str, float]], unit: str, *, fmt: str = "{:.3g}", total_label: str = ""
) -> str:
    """One horizontal bar split into ``parts`` (label, value), a legend with values and shares."""
    parts = [(k, v) for k, v in parts if v > 0 and math.isfinite(v)]
    total = sum(v for _, v in parts) or 1.0
    w, h, bar_h = 640, 40 + 22 * ((len(parts) + 1) // 2) + 40, 28
    x = 10.0
    out = [
        f'<svg class="chart" role="img" viewBox="0 0 {w} {h}" width="100%" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{_e(title)}</title>",
        f'<text x="10" y="16" class="ct">{_e(title)}{_e(total_label)}</text>',
    ]
    for i, (k, v) in enumerate(parts):
        bw = (w - 20) * v / total
        out.append(
            f'<rect x="{x:.1f}" y="26" width="{max(bw, 0.5):.1f}" height="{bar_h}" fill="{COLORS[i % 10]}">'
            f"<title>{_e(k)}: {_e(fmt.format(v))} {_e(unit)} ({v / total:.0%})</title></rect>"
        )
        x += bw
    for i, (k, v) in enumerate(parts):
        cx = 10 + (i % 2) * 320
        cy = 26 + bar_h + 18 + 22 * (i // 2)
        out.append(f'<rect x="{cx}" y="{cy - 10}" width="12" height="12" fill="{COLORS[i % 10]}"/>')
        out.append(
            f'<text x="{cx + 18}" y="{cy}" class="cl">{_e(k)} — {_e(fmt.format(v))} {_e(unit)} ({v / total:.0%})</text>'
        )
    out.append("</svg>")
    return "".join(out)


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    if log:
        a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        return [10.0**k for k in range(a, b + 1) if lo <= 10.0**k <= hi] or [lo, hi]
    span = hi - lo or 1.0
    step = 10 ** math.floor(math.log10(span / 4))
    for m in (1, 2, 5, 10):
        if span / (step * m) <= 6:
            step *= m
            break
    t = math.ceil(lo / step) * step
    out = []
    while t <= hi + 1e-12 * span:
        out.append(t)
        t += step
    return out


def _fmt_tick(v: float, percent: bool) -> str:
    if percent:
        return f"{v * 100:.0f}%" if abs(v * 100 - round(v * 100)) < 1e-6 else f"{v * 100:.1f}%"
    if abs(v) >= 1e4 or (0 < abs(v) < 1e-2):
        exp = math.floor(math.log10(abs(v)))
        m = v / 10**exp
        return f"{m:g}e{exp}" if abs(m - 1) > 1e-9 else f"1e{exp}"
    return f"{v:g}"


def line_chart(
    title: str,
    series: Sequence[Series],
    *,
    xlabel: str,
    ylabel: str,
    xlog: bool = False,
    ylog: bool = False,
    ypercent: bool = False,
    vlines: Sequence[tuple[float, str]] = (),
) -> str:
    """Lines (with markers) on linear or log axes; ``ypercent`` writes the y ticks as percentages."""
    pts = [(x, y) for s in series for x, y in zip(s.xs, s.ys, strict=False) if math.isfinite(x) and math.isfinite(y)]
    pts = [(x, y) for x, y in pts if (x > 0 or not xlog) and (y > 0 or not ylog)]
    w, h = 640, 330
    ml, mr, mt, mb = 64, 16, 28, 78
    out = [
        f'<svg class="chart" role="img" viewBox="0 0 {w} {h}" width="100%" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{_e(title)}</title>",
        f'<text x="{ml}" y="16" class="ct">{_e(title)}</text>',
    ]
    if not pts:
        out.append(f'<text x="{ml}" y="{h / 2}" class="cl">—</text></svg>')
        return "".join(out)
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    for xv, _ in vlines:
        if math.isfinite(xv) and (xv > 0 or not xlog):
            x0, x1 = min(x0, xv), max(x1, xv)
    if x0 == x1:
        x0, x1 = (x0 / 2, x1 * 2) if xlog else (x0 - 1, x1 + 1)
    if ypercent and not ylog:
        y0, y1 = max(0.0, y0 - 0.05 * (y1 - y0 or 0.1)), min(1.0, y1 + 0.05 * (y1 - y0 or 0.1))
    if y0 == y1:
        y0, y1 = (y0 / 2, y1 * 2) if ylog else (y0 - 1, y1 + 1)

    def fx(x: float) -> float:
        a, b, v = (math.log10(x0), math.log10(x1), math.log10(x)) if xlog else (x0, x1, x)
        return ml + (w - ml - mr) * (v - a) / (b - a)

    def fy(y: float) -> float:
        a, b, v = (math.log10(y0), math.log10(y1), math.log10(y)) if ylog else (y0, y1, y)
        return h - mb - (h - mt - mb) * (v - a) / (b - a)

    out.append(f'<line x1="{ml}" y1="{h - mb}" x2="{w - mr}" y2="{h - mb}" class="ax"/>')
    out.append(f'<line x1="{ml}" y1="{mt}" x2="{ml}" y2="{h - mb}" class="ax"/>')
    for t in _ticks(x0, x1, xlog):
        out.append(
            f'<text x="{fx(t):.1f}" y="{h - mb + 16}" class="tk" text-anchor="middle">{_fmt_tick(t, False)}</text>'
        )
        out.append(f'<line x1="{fx(t):.1f}" y1="{mt}" x2="{fx(t):.1f}" y2="{h - mb}" class="gr"/>')
    for t in _ticks(y0, y1, ylog):
        out.append(
            f'<text x="{ml - 6}" y="{fy(t) + 4:.1f}" class="tk" text-anchor="end">{_fmt_tick(t, ypercent)}</text>'
        )
        out.append(f'<line x1="{ml}" y1="{fy(t):.1f}" x2="{w - mr}" y2="{fy(t):.1f}" class="gr"/>')
    out.append(f'<text x="{(ml + w - mr) / 2}" y="{h - mb + 34}" class="cl" text-anchor="middle">{_e(xlabel)}</text>')
    out.append(
        f'<text x="14" y="{(mt + h - mb) / 2}" class="cl" text-anchor="middle" '
        f'transform="rotate(-90 14 {(mt + h - mb) / 2})">{_e(ylabel)}</text>'
    )
    for xv, lab in vlines:
        if math.isfinite(xv) and (xv > 0 or not xlog):
            out.append(f'<line x1="{fx(xv):.1f}" y1="{mt}" x2="{fx(xv):.1f}" y2="{h - mb}" class="vl"/>')
            out.append(f'<text x="{fx(xv) + 3:.1f}" y="{mt + 10}" class="tk">{_e(lab)}</text>')
    # draw the widest lines first so a thinner one on top stays visible where they overlap
    order = sorted(range(len(series)), key=lambda i: -series[i].width)
    for i in order:
        s = series[i]
        p = [(fx(x), fy(y)) for x, y in zip(s.xs, s.ys, strict=False) if (x, y) in set(pts)]
        if not p:
            continue
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        col = COLORS[i % 10]
        out.append(
            f'<polyline fill="none" stroke="{col}" stroke-width="{s.width}"{dash} '
            f'points="{" ".join(f"{a:.1f},{b:.1f}" for a, b in p)}"><title>{_e(s.label)}</title></polyline>'
        )
        if s.marker:
            out.extend(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{col}"/>' for a, b in p)
    for i, s in enumerate(series):
        lx = ml + (i % 2) * 290
        ly = h - mb + 50 + 16 * (i // 2)
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        out.append(
            f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 22}" y2="{ly - 4}" stroke="{COLORS[i % 10]}" '
            f'stroke-width="{s.width}"{dash}/>'
        )
        out.append(f'<text x="{lx + 28}" y="{ly}" class="cl">{_e(s.label)}</text>')
    out.append("</svg>")
    return "".join(out)


def timeline(
    title: str, events: Sequence[dict[str, object]], lanes: dict[tuple[int, int], str], unit_label: str
) -> str:
    """Chrome-trace complete events (``ph: X``, µs) as one bar per event, a lane per (pid, tid)."""
    xs = [e for e in events if e.get("ph") == "X"][:3000]
    keys = sorted(lanes)
    if not xs or not keys:
        return ""
    end = max(float(e["ts"]) + float(e["dur"]) for e in xs)  # type: ignore[arg-type]
    lane_h, ml, w = 18, 150, 640
    h = 40 + lane_h * len(keys) + 40
    idx = {k: i for i, k in enumerate(keys)}
    cats = sorted({str(e.get("cat", "")) for e in xs})
    out = [
        f'<svg class="chart" role="img" viewBox="0 0 {w} {h}" width="100%" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{_e(title)}</title>",
        f'<text x="10" y="16" class="ct">{_e(title)}</text>',
    ]
    for k in keys:
        y = 28 + lane_h * idx[k]
        out.append(f'<text x="{ml - 6}" y="{y + 12}" class="tk" text-anchor="end">{_e(lanes[k])}</text>')
    for e in xs:
        k = (int(e.get("pid", 0)), int(e.get("tid", 0)))  # type: ignore[call-overload]
        if k not in idx:
            continue
        x = ml + (w - ml - 10) * float(e["ts"]) / end  # type: ignore[arg-type]
        bw = max((w - ml - 10) * float(e["dur"]) / end, 0.6)  # type: ignore[arg-type]
        col = COLORS[cats.index(str(e.get("cat", ""))) % 10]
        out.append(
            f'<rect x="{x:.2f}" y="{28 + lane_h * idx[k] + 2}" width="{bw:.2f}" height="{lane_h - 4}" fill="{col}">'
            f"<title>{_e(e.get('name', ''))}: {float(e['dur']) / 1e3:.2f} ms</title></rect>"  # type: ignore[arg-type]
        )
    y = 28 + lane_h * len(keys) + 16
    out.append(f'<text x="{ml}" y="{y}" class="tk">0</text>')
    out.append(f'<text x="{w - 10}" y="{y}" class="tk" text-anchor="end">{end / 1e6:.3f} s</text>')
    out.append(f'<text x="{(ml + w) / 2}" y="{y}" class="cl" text-anchor="middle">{_e(unit_label)}</text>')
    for i, c in enumerate(cats):
        out.append(f'<rect x="{ml + 110 * i}" y="{y + 8}" width="12" height="12" fill="{COLORS[i % 10]}"/>')
        out.append(f'<text x="{ml + 110 * i + 16}" y="{y + 18}" class="cl">{_e(c)}</text>')
    out.append("</svg>")
    return "".join(out)
