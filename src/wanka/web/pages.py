"""Server-rendered pages: planner, compare, claims, past runs; Chinese or English (``?lang=``).

Each page is one GET form (the URL is the state, so it can be shared and bookmarked), rendered from
the service layer's result; charts are inline SVG (:mod:`wanka.web.charts`); the only assets are
``/static/wanka.css``. Forms are native controls with labels, so every page works from the keyboard.
"""

from __future__ import annotations

import json
import math
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from wanka.errors import WankaError
from wanka.report.i18n import label
from wanka.web.charts import Series, line_chart, stacked_bar, timeline
from wanka.web.inputs import KNOBS
from wanka.web.runtime import offload

__all__ = ["router"]

router = APIRouter(include_in_schema=False)
_ENV = Environment(loader=PackageLoader("wanka.web", "templates"), autoescape=select_autoescape(["html"]))
DEFAULT_PRESET = "meta-24k-h100-roce"
PAGE_REPLICAS = 60
DAY = 86_400.0


def _lang(request: Request) -> str:
    return "zh" if request.query_params.get("lang") == "zh" else "en"


def _switch_url(request: Request, lang: str) -> str:
    q = dict(request.query_params)
    q["lang"] = "en" if lang == "zh" else "zh"
    return f"{request.url.path}?{urlencode(q)}"


def _render(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    lang = _lang(request)
    page = _ENV.get_template(template).render(
        L=lambda k: label(k, lang),
        lang=lang,
        html_lang="zh-CN" if lang == "zh" else "en",
        switch_url=_switch_url(request, lang),
        path=request.url.path,
        **ctx,
    )
    return HTMLResponse(page, status_code=status)


def _fmt_s(s: Any, lang: str) -> str:
    from wanka.report.summary import fmt_duration

    return fmt_duration(s, lang)


def _gib(b: float) -> str:
    return f"{b / 2**30:,.1f} GiB"


# ---------------------------------------------------------------- planner
def _knob_values(q: dict[str, str]) -> tuple[dict[str, Any], str, str]:
    """Overrides from the query string (dotted field -> value), the strategy choice and the search preset."""
    from wanka.errors import SpecError

    out: dict[str, Any] = {}
    if "load" in q:  # "Load preset": the preset's own values
        return out, "scenario", "quick"
    for k, (kind, arg) in KNOBS.items():
        v = q.get(k)
        if v is None or v == "":
            continue
        if kind == "int":
            try:
                n = int(v)
            except ValueError:
                raise SpecError(f"= {v[:40]!r}: must be a whole number", field=k) from None
            lo, hi = arg
            if not lo <= n <= hi:
                raise SpecError(f"= {n}: must be between {lo:,} and {hi:,}", field=k)
            out[k] = n
        elif kind == "float":
            try:
                x = float(v)
            except ValueError:
                raise SpecError(f"= {v[:40]!r}: must be a number", field=k) from None
            lo, hi = arg
            if not (math.isfinite(x) and lo <= x <= hi):
                raise SpecError(f"= {v[:40]}: must be between {lo:g} and {hi:g}", field=k)
            out[k] = x
        else:
            out[k] = v
    strategy = q.get("strategy", "scenario")
    if strategy not in ("scenario", "search"):
        raise SpecError(f"= {strategy[:40]!r}: must be scenario or search", field="strategy")
    sp = q.get("space", "quick")
    if sp not in ("quick", "place", "search"):
        raise SpecError(f"= {sp[:40]!r}: must be quick, place or search", field="space")
    return out, strategy, sp


def _planner_view(q: dict[str, str], lang: str) -> dict[str, Any]:
    from wanka.engine import BREAKDOWN_KEYS, chrome_trace
    from wanka.engine.strategies import memory_saving
    from wanka.ops import sweep_checkpoint_interval, sweep_cluster_size
    from wanka.service import assess
    from wanka.spec import dump_yaml, list_model_presets, list_presets
    from wanka.web.inputs import resolve_scenario

    presets = list_presets()
    preset = q.get("preset", DEFAULT_PRESET)
    ctx: dict[str, Any] = {"presets": presets, "models": list_model_presets(), "preset": preset, "error": None}
    try:
        over, strategy, space = _knob_values(q)
        base = resolve_scenario(preset, field="preset")
        resized = "cluster.nodes" in over and over["cluster.nodes"] != base.cluster.nodes
        remodelled = "model" in over and base.model is not None and over["model"] != base.model.name
        if strategy == "search" or resized or remodelled:
            # the preset's strategy was written for its own cluster size and model
            over["parallel"] = None
            over["job_gpus"] = None
        s = resolve_scenario(preset, over, field="preset")
        a = assess(s, preset=space, replicas=PAGE_REPLICAS, until_trained=True)
    except WankaError as e:
        ctx["error"] = str(e)
        ctx["knobs"] = {k: q.get(k, "") for k in KNOBS}
        ctx["strategy"] = q.get("strategy", "scenario")
        ctx["space"] = q.get("space", "quick")
        return ctx
    sc = a.scenario
    assert sc.training is not None and sc.model is not None
    ctx["knobs"] = {
        "model": sc.model.name,
        "cluster.nodes": sc.cluster.nodes,
        "cluster.fabric.nic_gbps_per_gpu": f"{sc.cluster.fabric.nic_gbps_per_gpu:g}",
        "cluster.scale_up.domain_size": sc.cluster.scale_up.domain_size,
        "training.precision": sc.training.precision,
        "checkpoint.mode": sc.checkpoint.mode,
    }
    ctx["strategy"] = strategy
    ctx["space"] = space
    ctx["yaml"] = dump_yaml(sc)
    ctx["errors"] = a.errors
    from wanka.report.i18n import origin_label, plain_words

    ctx["assumptions"] = [(origin_label(x.origin, lang), plain_words(x.text, lang)) for x in a.assumptions]
    ctx["origins"] = [x.origin for x in a.assumptions]
    L = lambda k: label(k, lang)  # noqa: E731
    step = a.step
    head: list[tuple[str, str, str]] = []
    charts: list[tuple[str, Markup]] = []
    if step is not None:
        st = step.strategy
        lay = f"TP{st['tp']} · PP{st['pp']}" + (f" (VPP{st['vpp']})" if st["vpp"] > 1 else "")
        lay += f" · CP{st['cp']} · DP{st['dp']}" + (f" · EP{st['ep']}" if st["ep"] > 1 else "")
        lay += f" · ZeRO {st['zero']} · {memory_saving(st['recompute'], st['offload_layers'])} · mb {st['micro_batch']}"
        src = L("strategy_scenario") if a.strategy is None or not a.strategy.searched else L("strategy_search")
        head += [
            ("strategy", L("strategy"), f"{lay} ({src}, {step.gpus:,} GPU)"),
            ("step", L("step_time"), f"{step.step_time_s:.3f} s"),
            ("mfu", L("mfu"), f"{step.mfu:.1%}"),
            ("tps", L("tokens_per_s_per_gpu"), f"{step.tokens_per_s_per_gpu:,.0f}"),
            (
                "memory",
                L("memory_stack"),
                f"{_gib(step.memory.total)} / {_gib(step.memory.capacity)}",
            ),
            ("ttt", L("ttt_steady"), _fmt_s(step.time_to_train_s, lang)),
        ]
        parts = [(L(k), step.breakdown[k]) for k in BREAKDOWN_KEYS]
        charts.append(
            (
                "breakdown",
                Markup(stacked_bar(L("plot_breakdown"), parts, "s", total_label=f" — {step.step_time_s:.3f} s")),
            )
        )
        m = step.memory
        mem = [
            (L("weights"), m.weights / 2**30),
            (L("gradients"), m.gradients / 2**30),
            (L("optimizer_states"), m.optimizer / 2**30),
            (L("activations"), m.activations / 2**30),
            (L("buffers"), m.buffers / 2**30),
        ]
        charts.append(
            (
                "memory",
                Markup(
                    stacked_bar(
                        L("memory_stack"),
                        mem,
                        "GiB",
                        fmt="{:,.1f}",
                        total_label=f" — {_gib(m.total)} / {L('capacity')} {_gib(m.capacity)}",
                    )
                ),
            )
        )
        tr = chrome_trace(step, name=sc.name, max_micro_batches=32)
        ev = tr["traceEvents"]
        lanes = {}
        procs = {int(x["pid"]): x["args"]["name"] for x in ev if x.get("name") == "process_name"}
        for x in ev:
            if x.get("name") == "thread_name" and int(x["pid"]) == 0:
                lanes[(0, int(x["tid"]))] = f"{procs.get(0, '')} · {x['args']['name']}"
        stage0 = [x for x in ev if x.get("pid") == 0]
        charts.append(("timeline", Markup(timeline(L("timeline"), stage0, lanes, L("time_s")))))
    c = a.campaign
    if c is not None and step is not None:
        head += [
            ("wall", L("ttt_wall"), _fmt_s(float(c.wall_clock_s.mean), lang)),
            ("ettr", L("ettr"), f"{c.ettr.mean:.1%}"),
            ("fpd", L("failures_per_day"), f"{c.failures_per_day:.2f}"),
        ]
        try:
            pts = sweep_checkpoint_interval(sc, step_time_s=step.step_time_s, replicas=30)
            tau = c.checkpoint_interval_s
            charts.append(
                (
                    "ettr",
                    Markup(
                        line_chart(
                            L("plot_ettr"),
                            [
                                Series("Monte Carlo", [p.x / 60 for p in pts], [p.ettr.mean for p in pts]),
                                Series(
                                    "analytic (Young/Daly)",
                                    [p.x / 60 for p in pts],
                                    [p.ettr_analytic for p in pts],
                                    dashed=True,
                                    width=1.5,
                                    marker=False,
                                ),
                            ],
                            xlabel=L("interval_min"),
                            ylabel=L("ettr_axis"),
                            xlog=True,
                            ypercent=True,
                            vlines=[(tau / 60, L("this_job"))],
                        )
                    ),
                )
            )
            szs = sweep_cluster_size(sc, step_time_s=step.step_time_s, replicas=30)
            charts.append(
                (
                    "ettr_size",
                    Markup(
                        line_chart(
                            L("ettr_vs_size"),
                            [Series(sc.name, [p.x for p in szs], [p.ettr.mean for p in szs])],
                            xlabel=L("gpus_in_job"),
                            ylabel=L("ettr_axis"),
                            xlog=True,
                            ypercent=True,
                            vlines=[(float(step.gpus), L("this_job"))],
                        )
                    ),
                )
            )
        except WankaError as e:
            ctx["errors"] = {**ctx["errors"], "sweep": str(e)}
    f = a.facility
    if f is not None:
        from wanka.report.summary import fmt_energy, fmt_power, fmt_usd

        head += [
            ("power", L("facility_power"), f"{fmt_power(f.facility_power_w)} (PUE {f.pue:.2f})"),
            ("energy", L("energy"), fmt_energy(f.energy_j)),
            ("cost", L("cost"), fmt_usd(f.energy_cost)),
        ]
        stack = [
            (L("accelerators_w"), f.accelerators_w / 1e6),
            (L("cpus_w"), f.cpus_w / 1e6),
            (L("node_other_w"), f.node_other_w / 1e6),
            (L("network_w"), f.network_w / 1e6),
            (L("storage_w"), f.storage_w / 1e6),
            (L("cooling_overhead_w"), f.cooling_overhead_w / 1e6),
        ]
        charts.append(
            (
                "power",
                Markup(
                    stacked_bar(
                        L("plot_power"),
                        stack,
                        "MW",
                        fmt="{:,.2f}",
                        total_label=f" — {fmt_power(f.facility_power_w)}, {fmt_energy(f.energy_j)}",
                    )
                ),
            )
        )
    ctx["head"] = head
    ctx["charts"] = charts
    ctx["plan_json"] = json.dumps({"scenario": preset, "set": over}, ensure_ascii=False)
    return ctx


@router.get("/", response_class=HTMLResponse)
async def home() -> RedirectResponse:
    return RedirectResponse("/planner", status_code=307)


@router.get("/favicon.ico")
async def favicon() -> RedirectResponse:
    return RedirectResponse("/static/favicon.svg", status_code=301)


@router.get("/planner", response_class=HTMLResponse)
async def planner(request: Request) -> HTMLResponse:
    q = {k: v[:200] for k, v in request.query_params.items()}
    lang = _lang(request)
    ctx = await offload(lambda: _planner_view(q, lang))
    ctx["share_url"] = str(request.url)
    return _render(request, "planner.html", status=422 if ctx["error"] else 200, **ctx)


@router.post("/runs/save")
async def save(request: Request) -> RedirectResponse:
    from urllib.parse import parse_qsl

    from wanka.web.inputs import resolve_scenario
    from wanka.web.runtime import save_plan_run

    raw = (await request.body()).decode("utf-8", errors="replace")  # urlencoded form, bounded by BodyLimit
    try:
        q = {k: v[:200] for k, v in parse_qsl(raw, max_num_fields=64)}
    except ValueError as e:
        from wanka.errors import SpecError

        raise SpecError(f"malformed form: {e}", field="form") from None
    over, strategy, space = _knob_values(q)
    if strategy == "search":
        over.update(parallel=None, job_gpus=None)
    s = resolve_scenario(q.get("preset", DEFAULT_PRESET), over, field="preset")
    await save_plan_run(request, s, space)
    return RedirectResponse(f"/runs?lang={_lang(request) if 'lang' not in q else q['lang']}", status_code=303)


@router.get("/runs", response_class=HTMLResponse)
async def runs(request: Request) -> HTMLResponse:
    from wanka.web.runtime import store_call

    def get(st: Any) -> list[dict[str, Any]]:
        out = []
        for r in reversed(st.runs()[-200:]):
            pts = st.points(r.id)[:1] if r.mode == "plan" else []
            out.append({**r.to_dict(), "result": pts[0].result if pts and pts[0].result else None})
        return out

    rows = await store_call(request, get)
    return _render(request, "runs.html", runs=rows)


# ---------------------------------------------------------------- compare and claims
_CLAIMS: list[Any] = []


def _claims() -> list[Any]:
    """The article's claims, evaluated once per server (they depend on nothing the client sends)."""
    from wanka.report.claims import evaluate_claims

    if not _CLAIMS:
        _CLAIMS.extend(evaluate_claims())
    return list(_CLAIMS)


@router.get("/compare", response_class=HTMLResponse)
async def compare_page(request: Request) -> HTMLResponse:
    from wanka.spec import list_model_presets, list_presets

    lang = _lang(request)
    q = {k: v[:200] for k, v in request.query_params.items()}
    a = q.get("a", "traditional-512-a100")
    b = q.get("b", "meta-24k-h100-roce")
    job = q.get("job") or None

    def run() -> Any:
        from wanka.errors import SpecError
        from wanka.report.compare import compare
        from wanka.web.inputs import resolve_scenario

        try:
            if job is not None and job not in list_model_presets():
                raise SpecError(f"= {job[:40]!r}: must be a model preset name", field="job")
            scs = [resolve_scenario(a, field="a"), resolve_scenario(b, field="b")]
            return compare(scs, job=job, replicas=PAGE_REPLICAS)
        except WankaError as e:
            return str(e)

    from wanka.report.html import render_compare_body

    cmp = await offload(run, limit_s=120.0, cache_key=("compare-page", a, b, job))
    if isinstance(cmp, str):
        ctx: dict[str, Any] = {"error": cmp, "body": ""}
    else:
        body = await offload(lambda: render_compare_body(cmp, lang, claims=_claims()), limit_s=120.0)
        ctx = {"error": None, "body": Markup(body)}
    return _render(
        request,
        "compare.html",
        status=422 if ctx["error"] else 200,
        presets=list_presets(),
        models=list_model_presets(),
        a=a,
        b=b,
        job=job or "",
        **ctx,
    )


@router.get("/claims", response_class=HTMLResponse)
async def claims_page(request: Request) -> HTMLResponse:

    rows = await offload(lambda: [r.to_dict() for r in _claims()], limit_s=120.0)
    return _render(request, "claims.html", claims=rows)
