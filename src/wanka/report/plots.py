"""The compare plots (matplotlib, Agg backend), returned as PNG data URIs for a self-contained page.

Chinese plot labels need a CJK font; :func:`cjk_font` looks for one (Noto CJK, WenQuanYi, Source Han
...) and, when there is none, the plots fall back to English labels while the page stays Chinese.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from wanka.engine import BREAKDOWN_KEYS
from wanka.errors import WankaError
from wanka.report.compare import Comparison
from wanka.report.i18n import label

__all__ = ["Plot", "cjk_font", "compare_plots"]

_CJK_HINTS = (
    "Noto Sans CJK",
    "Noto Serif CJK",
    "Source Han",
    "WenQuanYi",
    "Droid Sans Fallback",
    "AR PL",
    "SimHei",
    "Microsoft YaHei",
    "PingFang",
    "Heiti",
)
_POWER_KEYS = ("accelerators_w", "cpus_w", "node_other_w", "network_w", "storage_w", "cooling_overhead_w")


@dataclass(frozen=True)
class Plot:
    """One figure: an id (for tests and anchors), its title and a ``data:image/png;base64`` URI."""

    id: str
    title: str
    data_uri: str
    lang: str  # the language its labels are in


def _mpl() -> Any:
    try:
        import matplotlib  # type: ignore[import-not-found, unused-ignore]

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise WankaError("the HTML report's plots need matplotlib: pip install 'wanka[report]'") from None
    return plt


@lru_cache(maxsize=1)
def cjk_font() -> str | None:
    """Name of an installed font with CJK glyphs that matplotlib can use, or None."""
    _mpl()
    from matplotlib import font_manager  # type: ignore[import-not-found, unused-ignore]

    names = sorted({f.name for f in font_manager.fontManager.ttflist})
    for hint in _CJK_HINTS:
        for n in names:
            if n.startswith(hint) and ("SC" in n or "CN" in n or hint not in ("Noto Sans CJK", "Noto Serif CJK")):
                return n
    return None


def _uri(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def compare_plots(cmp: Comparison, lang: str) -> list[Plot]:
    """Step breakdown, ETTR vs checkpoint interval, failures/day vs size (log-log), power stack."""
    plt = _mpl()
    plot_lang = lang
    rc: dict[str, Any] = {"font.size": 9, "axes.spines.top": False, "axes.spines.right": False}
    if lang == "zh":
        font = cjk_font()
        if font is None:
            plot_lang = "en"
        else:
            rc["font.family"] = [font, "DejaVu Sans"]
            rc["axes.unicode_minus"] = False
    L = lambda k: label(k, plot_lang)  # noqa: E731
    names = [c.name for c in cmp.clusters]
    colors = plt.get_cmap("tab10").colors
    out: list[Plot] = []

    def stacked(
        kind: str,
        series: list[tuple[str, list[float], int]],
        notes: list[str | None],
        xlim: float,
        xlabel: str,
        ncol: int,
    ) -> None:
        """Horizontal stacked shares per cluster, a note right of each bar (plots 1 and 4)."""
        fig, ax = plt.subplots(figsize=(7.5, 0.9 + 0.7 * len(names)))
        left = [0.0] * len(names)
        for key, vals, color in series:
            ax.barh(names, vals, left=left, color=colors[color % 10], label=L(key))
            left = [a + b for a, b in zip(left, vals, strict=True)]
        for j, note in enumerate(notes):
            if note is not None:
                ax.text(1.01, j, note, va="center")
        ax.set_xlim(0, xlim)
        ax.set_xlabel(L(xlabel) + " (%)")
        from matplotlib.ticker import PercentFormatter  # type: ignore[import-not-found, unused-ignore]

        ax.xaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))
        ax.invert_yaxis()
        ax.legend(ncol=ncol, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.35 if len(names) < 3 else -0.2))
        ax.set_title(L(f"plot_{kind}"))
        out.append(Plot(kind, L(f"plot_{kind}"), _uri(fig), plot_lang))
        plt.close(fig)

    with plt.rc_context(rc):
        # 1. step breakdown, share of step time, stacked bars side by side
        shares = [
            (k, [c.efficiency["breakdown_s"][k] / c.efficiency["step_time_s"] for c in cmp.clusters], i)
            for i, k in enumerate(BREAKDOWN_KEYS)
        ]
        stacked(
            "breakdown",
            [row for row in shares if any(v != 0 for v in row[1])],
            [f"{c.efficiency['step_time_s']:.2f} s · MFU {c.efficiency['mfu']:.0%}" for c in cmp.clusters],
            1.25,
            "share_of_step",
            4,
        )
        # 2. ETTR vs checkpoint interval
        fig, ax = plt.subplots(figsize=(7.5, 3.6))
        for j, c in enumerate(cmp.clusters):
            pts = c.series.get("ettr_vs_interval", [])
            if not pts:
                continue
            xs = [p["interval_s"] / 60 for p in pts]
            ax.plot(xs, [p["ettr"] for p in pts], "o-", color=colors[j], label=f"{c.name} (Monte Carlo)")
            ax.plot(xs, [p["ettr_analytic"] for p in pts], "--", color=colors[j], lw=0.8, alpha=0.7)
            tau = c.reliability.get("checkpoint_interval_s")
            if tau:
                ax.axvline(tau / 60, color=colors[j], ls=":", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel(L("interval_min"))
        ax.set_ylabel(L("ettr_axis"))
        from matplotlib.ticker import PercentFormatter  # type: ignore[import-not-found, unused-ignore]

        ax.yaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=1))
        ax.set_title(L("plot_ettr"))
        ax.legend(fontsize=8)
        out.append(Plot("ettr", L("plot_ettr"), _uri(fig), plot_lang))
        plt.close(fig)
        # 3. failures/day vs cluster size, log-log, each cluster's job marked
        fig, ax = plt.subplots(figsize=(7.5, 3.6))
        # the curves overlap where the clusters share failure rates: the first is drawn wide and pale
        # underneath, the later ones narrower and dashed on top, so every one stays visible
        n_cl = len(cmp.clusters)
        for j, c in enumerate(cmp.clusters):
            pts = c.series.get("failures_vs_size", [])
            if not pts:
                continue
            ax.plot(
                [p["gpus"] for p in pts],
                [p["failures_per_day"] for p in pts],
                ls="-" if j == 0 else (0, (5, 3)),
                color=colors[j],
                lw=2.0 + 2.5 * (n_cl - 1 - j),
                alpha=0.55 if j < n_cl - 1 else 1.0,
                label=c.name,
                zorder=2 + j,
            )
            g, f = c.scale["job_gpus"], c.reliability.get("failures_per_day")
            if f:
                ax.plot([g], [f], "o", ms=8, color=colors[j])
                ax.annotate(
                    f"{L('this_job')}: {g:,} GPU, {f:.1f}/d",
                    (g, f),
                    textcoords="offset points",
                    xytext=(6, -12),
                    fontsize=8,
                )
        ax.axvline(10_000, color="grey", ls=":", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(L("gpus_in_job"))
        ax.set_ylabel(L("failures_day_axis"))
        ax.set_title(L("plot_failures"))
        ax.legend(fontsize=8)
        out.append(Plot("failures", L("plot_failures"), _uri(fig), plot_lang))
        plt.close(fig)
        # 4. power stack: share of facility power, total annotated
        stacked(
            "power",
            [
                (
                    k,
                    [
                        c.facility["power_stack_w"][k] / c.facility["facility_power_w"] if c.facility else 0.0
                        for c in cmp.clusters
                    ],
                    i + 3,
                )
                for i, k in enumerate(_POWER_KEYS)
            ],
            [f"{c.facility['facility_power_w'] / 1e6:,.2f} MW" if c.facility else None for c in cmp.clusters],
            1.2,
            "share_of_power",
            3,
        )
    return out
