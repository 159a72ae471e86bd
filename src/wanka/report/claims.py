"""``claims``: the seed article's quantitative statements (``wanka/data/claims.yaml``) checked.

Each claim names the scenario that tests it and a kind of evaluation (documented in the YAML header);
the engine gives MFU and step time, the operations layer failures, ETTR and the wall clock, the
infrastructure layer counts and peaks. Every result carries its arithmetic and a verdict from
:func:`judge`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from wanka.engine import StepResult, estimate_step
from wanka.errors import InfeasibleError, SpecError, WankaError
from wanka.service import assess, choose_strategy
from wanka.spec import Scenario, load_scenario, parse_scenario

__all__ = ["OPTIMISTIC_LIMIT", "ClaimResult", "Verdict", "evaluate_claims", "judge", "load_claims"]

DAY = 86_400.0
YEAR_DAYS = 365.25
OPTIMISTIC_LIMIT = 3.0  # beyond this the article is not "optimistic" but inconsistent
_REPLICAS = 100


@dataclass(frozen=True)
class Verdict:
    verdict: str  # consistent | optimistic | inconsistent | mapped | unverifiable
    factor: float | None
    direction: str  # within | article-favourable | article-conservative | n/a


def judge(claimed: float | tuple[float, float], computed: float, tolerance: float = 1.5) -> Verdict:
    """Verdict for a claim whose lower value is more favourable (time, cards).

    consistent: ``lo / tol <= computed <= hi * tol``; else the article is favourable (computed above
    its range: optimistic up to :data:`OPTIMISTIC_LIMIT`, inconsistent beyond) or conservative
    (computed below: inconsistent). The factor is ``computed / hi`` or ``lo / computed``.
    """
    lo, hi = (claimed, claimed) if isinstance(claimed, int | float) else claimed
    if not math.isfinite(computed):
        return Verdict("inconsistent", None, "article-favourable")
    if lo / tolerance <= computed <= hi * tolerance:
        f = computed / hi if computed > hi else (lo / computed if computed < lo else 1.0)
        return Verdict("consistent", f, "within")
    if computed > hi:
        f = computed / hi
        return Verdict("optimistic" if f <= OPTIMISTIC_LIMIT else "inconsistent", f, "article-favourable")
    return Verdict("inconsistent", lo / computed, "article-conservative")


@dataclass(frozen=True)
class ClaimResult:
    """One claim: what the article says, what wanka computes, and the verdict."""

    id: str
    paragraph: str
    quote: str
    statement: str
    scenario: str | None
    computed: str
    verdict: str
    factor: float | None
    direction: str
    explanation: str
    arithmetic: tuple[str, ...]
    values: dict[str, Any] = field(default_factory=dict)
    explanation_zh: str = ""
    computed_zh: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "statement": self.statement,
            "computed": self.computed,
            "verdict": self.verdict,
            "explanation": self.explanation,
            "explanation_zh": self.explanation_zh,
            "computed_zh": self.computed_zh,
            "factor": self.factor,
            "direction": self.direction,
            "quote": self.quote,
            "paragraph": self.paragraph,
            "scenario": self.scenario,
            "arithmetic": list(self.arithmetic),
            "values": dict(self.values),
        }


@lru_cache(maxsize=1)
def load_claims() -> tuple[dict[str, Any], ...]:
    """The claims file as a tuple of mappings (validated for the keys every claim needs)."""
    path = resources.files("wanka") / "data" / "claims.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    out = []
    for i, c in enumerate(data.get("claims", [])):
        for k in ("id", "paragraph", "quote", "statement", "evaluate"):
            if k not in c:
                raise SpecError(f"claim #{i} has no {k!r}", field=f"claims[{i}].{k}", source=str(path))
        out.append(c)
    return tuple(out)


# ---------------------------------------------------------------- shared helpers
class _Runs:
    """Engine and ops results per scenario, computed once per evaluation."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._steps: dict[str, tuple[Scenario, StepResult, str | None]] = {}

    def step(self, s: Scenario) -> tuple[Scenario, StepResult, str | None]:
        """The scenario's job through the engine; a picked strategy when the preset's cannot run."""
        key = s.model_dump_json()
        if key not in self._steps:
            a = assess(s, ("engine",))
            if a.step is None:
                raise InfeasibleError(a.errors.get("engine", f"{s.name}: the engine gave no result"))
            note = None
            if a.strategy is not None and a.strategy.searched:
                r0 = a.step.strategy
                why = f"preset strategy cannot run ({a.strategy.why})" if a.strategy.why else "no preset strategy"
                note = f"{why}; wanka search picked {_strat(r0)}"
            self._steps[key] = (a.scenario, a.step, note)
        return self._steps[key]

    def campaign(self, s: Scenario, r: StepResult) -> Any:
        a = assess(s, ("engine", "ops"), seed=self.seed, replicas=_REPLICAS, until_trained=True)
        if a.campaign is None:
            raise WankaError(a.errors.get("ops") or a.errors.get("engine") or "no campaign")
        return a.campaign


def _strat(st: dict[str, Any]) -> str:
    return (
        f"tp{st['tp']}·pp{st['pp']}"
        + (f"(v{st['vpp']})" if st["vpp"] > 1 else "")
        + f"·dp{st['dp']}"
        + (f"·ep{st['ep']}" if st["ep"] > 1 else "")
        + f"·zero{st['zero']}"
    )


def _days(x: float) -> str:
    return f"{x:,.0f} days ({x / YEAR_DAYS:.2f} years)" if x >= 365 else f"{x:,.1f} days"


def _range(v: Any) -> tuple[float, float]:
    if isinstance(v, list | tuple):
        return float(v[0]), float(v[1])
    return float(v), float(v)


def _tokens(ev: dict[str, Any]) -> float:
    return float(ev["data_bytes"]) / float(ev["bytes_per_token"])


def _result(
    c: dict[str, Any], computed: str, v: Verdict, explanation: str, arith: list[str], values: dict[str, Any]
) -> ClaimResult:
    return ClaimResult(
        c["id"],
        c["paragraph"],
        c["quote"],
        c["statement"],
        c.get("scenario"),
        computed,
        v.verdict,
        v.factor,
        v.direction,
        explanation,
        tuple(arith),
        values,
    )


def _verdict_words(v: Verdict, what: str) -> str:
    if v.verdict == "consistent":
        return f"consistent: the computed {what} is within the article's figure (x{v.factor:.2f} of its range)"
    if v.direction == "article-favourable":
        return f"{v.verdict}: the article's {what} is {v.factor:.1f}x more favourable than computed"
    return f"{v.verdict}: the article's {what} is {v.factor:.1f}x less favourable (more conservative) than computed"


# ---------------------------------------------------------------- kinds
def _time_on_peak(c: dict[str, Any], runs: _Runs) -> ClaimResult:
    ev = c["evaluate"]
    s0 = load_scenario(c["scenario"])
    s, r, note = runs.step(s0)
    n, tokens, peak = float(ev["params"]), _tokens(ev), float(ev["peak_pflops"]) * 1e15
    flops_6nd = 6 * n * tokens
    flops = r.model_flops_per_token * tokens
    t = flops / (peak * r.mfu) / DAY
    lo, hi = _range(ev["claimed_days"])
    v = judge((lo, hi), t, ev.get("tolerance", 1.5))
    implied_mfu = flops / (peak * hi * DAY)
    arith = [
        f"tokens = {ev['data_bytes']:.3g} B / {ev['bytes_per_token']} B per token = {tokens:.3g} "
        f"(at 1 B/token: {float(ev['data_bytes']):.3g} tokens, 4x the time)",
        f"6·N·D = 6 x {n:.3g} x {tokens:.3g} = {flops_6nd:.3g} FLOP; engine (6·N + attention) per token "
        f"{r.model_flops_per_token:.3g} x {tokens:.3g} = {flops:.3g} FLOP ({s.model.name if s.model else ''})",
        f"MFU {r.mfu:.1%} (engine on {s.name}, {_strat(r.strategy)}{'; ' + note if note else ''})",
        f"time = {flops:.3g} / ({peak:.3g} FLOP/s x {r.mfu:.3f}) = {t * DAY:.3g} s = {_days(t)}",
        f"the article's {_days(hi)} implies MFU = {flops:.3g} / ({peak:.3g} x {hi * DAY:.3g} s) = {implied_mfu:.1%}",
    ]
    expl = (
        _verdict_words(v, "time") + f". At the engine's {r.mfu:.0%} MFU 1,000 PFLOPS needs {_days(t)}; "
        f"three years would mean {implied_mfu:.0%} MFU, or about {4 * implied_mfu:.0%} if 15 TB were "
        "15 T tokens (1 byte per token)."
    )
    return _result(
        c,
        f"{_days(t)} at {r.mfu:.0%} MFU",
        v,
        expl,
        arith,
        {
            "tokens": tokens,
            "flops": flops,
            "flops_6nd": flops_6nd,
            "mfu": r.mfu,
            "days": t,
            "implied_mfu": implied_mfu,
            "peak_flops": peak,
        },
    )


def _time_at_peak_range(c: dict[str, Any], runs: _Runs) -> ClaimResult:
    ev = c["evaluate"]
    s0 = load_scenario(c["scenario"])
    s, r, note = runs.step(s0)
    tokens, peak = _tokens(ev), float(ev["peak_pflops"]) * 1e15
    flops = r.model_flops_per_token * tokens
    t = flops / (peak * r.mfu) / DAY
    lo, hi = _range(ev["claimed_days"])
    v = judge((lo, hi), t, ev.get("tolerance", 1.5))
    need = {d: flops / (r.mfu * d * DAY) for d in (lo, hi)}
    from wanka.infra import inventory

    cluster_peak = inventory(s.cluster).peak_flops.get(s.training.precision if s.training else "bf16", math.nan)
    wall = None
    arith = [
        f"FLOP = {r.model_flops_per_token:.3g} per token x {tokens:.3g} tokens = {flops:.3g}",
        f"time on {peak / 1e15:,.0f} PFLOPS at the engine's MFU {r.mfu:.1%} = {flops:.3g} / ({peak:.3g} x "
        f"{r.mfu:.3f}) = {_days(t)}",
        *[
            f"peak needed for {d:g} days = {flops:.3g} / ({r.mfu:.3f} x {d * DAY:.3g} s) = {p / 1e15:,.0f} PFLOPS"
            for d, p in need.items()
        ],
        f"engine on {s.name} ({s.gpus:,} x {s.cluster.accelerator} = {cluster_peak / 1e15:,.0f} PFLOPS, "
        f"{_strat(r.strategy)}{'; ' + note if note else ''}): {_days(r.time_to_train_s / DAY)} at steady state",
    ]
    try:
        camp = runs.campaign(s, r)
        wall = camp.wall_clock_s.mean / DAY
        arith.append(f"with failures (ops, ETTR {camp.ettr.mean:.1%}): {_days(wall)} wall clock")
    except WankaError as e:
        arith.append(f"ops campaign not available: {e}")
    expl = (
        _verdict_words(v, "time") + f". 10,000 PFLOPS at {r.mfu:.0%} MFU finishes in {_days(t)}; "
        f"two weeks needs {need[lo] / 1e15:,.0f} PFLOPS, a month {need[hi] / 1e15:,.0f} PFLOPS. "
        "The article's two figures are not consistent with each other: 1,000 P for three years implies "
        f"{YEAR_DAYS * 3 / 10:,.0f} days on 10,000 P, not 14-30."
    )
    return _result(
        c,
        f"{_days(t)} on {peak / 1e15:,.0f} PFLOPS at {r.mfu:.0%} MFU",
        v,
        expl,
        arith,
        {
            "days": t,
            "mfu": r.mfu,
            "flops": flops,
            "peak_needed_flops": {str(k): p for k, p in need.items()},
            "preset_days_steady": r.time_to_train_s / DAY,
            "preset_days_wall": wall,
        },
    )


def _campaign_time(c: dict[str, Any], runs: _Runs) -> ClaimResult:
    ev = c["evaluate"]
    s, r, note = runs.step(load_scenario(c["scenario"]))
    assert s.training is not None and s.model is not None
    lo, hi = _range(ev["claimed_days"])
    steady = r.time_to_train_s / DAY
    camp = runs.campaign(s, r)
    wall = camp.wall_clock_s.mean / DAY
    v = judge((lo, hi), wall, ev.get("tolerance", 1.5))
    peak = s.gpus * r.model_flops_per_token * s.training.tokens / (r.mfu * r.time_to_train_s)
    arith = [
        f"{s.model.name}: {r.model_flops_per_token:.3g} FLOP per token (6·N_active + attention) x "
        f"{s.training.tokens:.3g} tokens = {r.model_flops_per_token * s.training.tokens:.3g} FLOP",
        f"{s.gpus:,} x {s.cluster.accelerator} ({peak / s.gpus / 1e12:,.0f} TFLOPS dense), {_strat(r.strategy)}"
        f"{'; ' + note if note else ''}: MFU {r.mfu:.1%}, step {r.step_time_s:.1f} s",
        f"steady state = tokens / (tokens/s/GPU x GPUs) = {s.training.tokens:.3g} / ({r.tokens_per_s_per_gpu:,.1f} x "
        f"{s.gpus:,}) = {_days(steady)}",
        f"with failures: {camp.failures_per_day:.1f} interruptions/day at this scale (MTBF "
        f"{camp.job_mtbf_s / 3600:.1f} h), ETTR {camp.ettr.mean:.1%} -> {_days(wall)} wall clock "
        f"(Monte Carlo, {_REPLICAS} replicas)",
    ]
    expl = _verdict_words(v, "duration") + (
        "; the inputs are rumours (SemiAnalysis 2023), see the preset's assumptions."
        if "rumour" in " ".join(s.assumptions).lower()
        else "."
    )
    return _result(
        c,
        f"{_days(wall)} with failures ({_days(steady)} steady state, MFU {r.mfu:.0%})",
        v,
        expl,
        arith,
        {
            "days_wall": wall,
            "days_steady": steady,
            "mfu": r.mfu,
            "ettr": camp.ettr.mean,
            "failures_per_day": camp.failures_per_day,
        },
    )


def _cards_for_job(c: dict[str, Any], runs: _Runs) -> ClaimResult:
    ev = c["evaluate"]
    base = load_scenario(c["scenario"])
    sb, rb, _ = runs.step(base)
    assert base.training is not None
    claimed_cards, claimed_days = float(ev["claimed_cards"]), float(ev["claimed_days"])
    arith: list[str] = [
        f"baseline {sb.name}: {sb.gpus:,} x {sb.cluster.accelerator}, {rb.tokens_per_s_per_gpu:,.1f} "
        f"tokens/s/GPU, {_days(rb.time_to_train_s / DAY)} at steady state"
    ]
    best: tuple[float, str, StepResult] | None = None
    for prec in ev.get("precisions", ["bf16"]):
        data = base.model_dump(mode="python")
        cl = dict(data["cluster"])
        cl.update({k: v for k, v in ev["cluster"].items() if k != "fabric"})
        cl["fabric"] = {**cl["fabric"], **ev["cluster"].get("fabric", {})}
        cl["name"] = f"{base.name}-on-{cl['nodes'] * cl['gpus_per_node']}-{cl['accelerator']}"
        data.update(cluster=cl, parallel=None, job_gpus=None, campaign_days=None)
        data["training"] = {**data["training"], "precision": prec}
        s = parse_scenario(data, source=f"claim {c['id']}")
        try:
            picked, _choice = choose_strategy(s)
        except InfeasibleError as e:
            arith.append(f"{prec}: no strategy runs ({e})")
            continue
        r = estimate_step(picked)
        d = r.time_to_train_s / DAY
        arith.append(
            f"{prec} on {cl['nodes'] * cl['gpus_per_node']:,} x {cl['accelerator']} ({_strat(r.strategy)}, "
            f"{r.gpus:,} used): MFU {r.mfu:.1%}, {r.tokens_per_s_per_gpu:,.1f} tokens/s/GPU -> {_days(d)}"
        )
        if best is None or d < best[0]:
            best = (d, prec, r)
    if best is None:
        v = Verdict("inconsistent", None, "article-favourable")
        return _result(
            c,
            "the job does not fit on the claimed cards",
            v,
            "no strategy of the job fits on the claimed cluster",
            arith,
            {},
        )
    d, prec, r = best
    needed = r.gpus * d / claimed_days  # linear scaling: generous to the claim
    v = judge(claimed_cards, needed, ev.get("tolerance", 1.5))
    ratio = r.tokens_per_s_per_gpu / rb.tokens_per_s_per_gpu
    arith += [
        f"per-GPU speed-up over {sb.cluster.accelerator} (engine, {prec}): {r.tokens_per_s_per_gpu:,.1f} / "
        f"{rb.tokens_per_s_per_gpu:,.1f} = {ratio:.2f}x",
        f"cards for {claimed_days:g} days at that speed (linear scaling, generous) = {r.gpus:,} x {d:,.0f} / "
        f"{claimed_days:g} = {needed:,.0f}",
        f"the claim needs a {sb.gpus / claimed_cards:.0f}x per-card speed-up; H100/A100 dense peak is "
        "3.2x (BF16) and 6.3x (FP8 vs A100 BF16)",
    ]
    expl = (
        _verdict_words(v, "card count") + f": 1,000 H100 would take {_days(d)} ({prec}), and "
        f"{needed:,.0f} H100 would be needed for {claimed_days:g} days."
    )
    return _result(
        c,
        f"1,000 H100: {_days(d)}; {needed:,.0f} H100 for {claimed_days:g} days",
        v,
        expl,
        arith,
        {
            "days_on_claimed_cards": d,
            "cards_needed": needed,
            "per_gpu_speedup": ratio,
            "precision": prec,
            "gpus_used": r.gpus,
        },
    )


def _scale_point(c: dict[str, Any], runs: _Runs) -> ClaimResult:
    from wanka.infra import inventory

    ev = c["evaluate"]
    s0 = load_scenario(c["scenario"])
    n = s0.cluster.accelerators
    lo, hi = _range(ev["claimed"])
    v = judge((lo, hi), float(n), ev.get("tolerance", 1.01))
    inv = inventory(s0.cluster, s0.facility)
    peak = inv.peak_flops.get("bf16") or inv.peak_flops.get("fp16") or max(inv.peak_flops.values())
    arith = [
        f"{s0.name}: {s0.cluster.nodes:,} nodes x {s0.cluster.gpus_per_node} = {n:,} x {s0.cluster.accelerator}; "
        f"peak {peak / 1e15:,.0f} PFLOPS (BF16/FP16 dense)",
        f"万卡 threshold (article §一: 一万张及以上): {n:,} {'>=' if n >= 10_000 else '<'} 10,000",
    ]
    values: dict[str, Any] = {"accelerators": n, "peak_flops": peak}
    if s0.model is not None and s0.training is not None:
        try:
            s, r, note = runs.step(s0)
            camp = runs.campaign(s, r)
            arith.append(
                f"its job ({s.model.name if s.model else ''}, {s.gpus:,} GPUs, {_strat(r.strategy)}"
                f"{'; ' + note if note else ''}): MFU {r.mfu:.1%}; {camp.failures_per_day:.1f} "
                f"interruptions/day, job MTBF {camp.job_mtbf_s / 3600:.1f} h, ETTR {camp.ettr.mean:.1%}"
            )
            values.update(
                mfu=r.mfu, failures_per_day=camp.failures_per_day, job_mtbf_s=camp.job_mtbf_s, ettr=camp.ettr.mean
            )
        except WankaError as e:
            arith.append(f"its job could not be evaluated: {e}")
    claim_txt = f"{lo:,.0f}" if lo == hi else f"{lo:,.0f}-{hi:,.0f}"
    expl = (
        f"{v.verdict}: the preset models {n:,} accelerators against the article's {claim_txt}"
        + (f"; {ev['note']}" if ev.get("note") else "")
        + ". The job numbers show what that scale means for "
        "长稳可靠."
    )
    return _result(c, f"{n:,} x {s0.cluster.accelerator}, {peak / 1e15:,.0f} PFLOPS", v, expl, arith, values)


def _speedup(c: dict[str, Any], runs: _Runs) -> ClaimResult:
    from wanka.catalog import accelerator
    from wanka.report.compare import move_job

    ev = c["evaluate"]
    src = load_scenario(c["scenario"])
    s, r, _ = runs.step(src)
    assert s.model is not None and s.training is not None
    tr = s.training.model_dump(mode="python")
    tr["seq_len"] = s.seq_len
    moved, _pick = move_job(load_scenario(ev["baseline"]), model=s.model, training=tr, note="speed-up claim")
    rb = estimate_step(moved)
    speed = rb.time_to_train_s / r.time_to_train_s
    g = r.gpus / rb.gpus
    prec = s.training.precision
    pr = accelerator(s.cluster.accelerator).peak(prec) / accelerator(moved.cluster.accelerator).peak(prec)
    eta = speed / (g * pr)
    v = Verdict("optimistic" if eta <= 1.05 else "consistent", None, "article-favourable")
    arith = [
        f"same job ({s.model.name}, {s.training.tokens:.3g} tokens) on {moved.name}: {rb.gpus:,} GPUs "
        f"({_strat(rb.strategy)}), MFU {rb.mfu:.1%} -> {_days(rb.time_to_train_s / DAY)}",
        f"on {s.name}: {r.gpus:,} GPUs ({_strat(r.strategy)}), MFU {r.mfu:.1%} -> {_days(r.time_to_train_s / DAY)}",
        f"speed-up {speed:,.1f}x = GPUs {g:,.1f}x x per-GPU peak {pr:.2f}x x efficiency {eta:.2f}",
    ]
    expl = (
        f"{v.verdict}: the speed-up from scale is at most linear — GPUs x per-GPU speed x an efficiency "
        f"of {eta:.2f} ({speed:,.0f}x for {g:,.0f}x the GPUs) — not exponential."
    )
    return _result(
        c,
        f"{speed:,.0f}x faster for {g:,.0f}x GPUs x {pr:.1f}x peak (efficiency {eta:.2f})",
        v,
        expl,
        arith,
        {"speedup": speed, "gpu_ratio": g, "peak_ratio": pr, "efficiency": eta},
    )


def _silent(c: dict[str, Any], runs: _Runs) -> ClaimResult:
    ev = c["evaluate"]
    v = Verdict("unverifiable", None, "n/a")
    named = list(ev.get("named_elsewhere", []))
    expl = (
        f"The article announces {ev['count']} core principles and lists none (the paragraph after the colon "
        "is empty). wanka does not invent them. What the article does name elsewhere, and where wanka "
        "quantifies it: " + "; ".join(named) + "."
    )
    return _result(c, "nothing to compute: the principles are not listed", v, expl, named, {})


def _layer_map(c: dict[str, Any], runs: _Runs) -> ClaimResult:
    s0 = load_scenario(c["scenario"])
    s, r, _ = runs.step(s0)
    lines = []
    values: dict[str, Any] = {}
    try:
        from wanka.facility import assess

        f = assess(s, utilization=r.mfu, hfu=min(max(r.hfu, 0.0), 1.0))
        lines.append(
            f"机房配套层 -> wanka.facility: PUE {f.pue:.2f}, {f.facility_power_w / 1e6:,.1f} MW, "
            f"{f.racks:,} racks of {f.rack_power_w / 1e3:.0f} kW"
        )
        values["facility_power_w"] = f.facility_power_w
    except WankaError as e:
        lines.append(f"机房配套层 -> wanka.facility: n/a ({e})")
    try:
        from wanka.network.bom import bill_of_materials

        b = bill_of_materials(s.cluster)
        lines.append(
            f"基础设施层 -> wanka.infra / network / storage: {s.cluster.accelerators:,} GPUs, {b.tiers}-tier "
            f"fabric, {b.switch_count:,} switches, {b.optics_count:,} optics"
        )
        values["switches"] = b.switch_count
    except (WankaError, ImportError, AttributeError) as e:
        lines.append(f"基础设施层 -> wanka.infra / network / storage: n/a ({e})")
    lines.append("智算平台层 -> wanka.platform: gang scheduling, placement, preemption (`wanka schedule`)")
    lines.append(f"应用使能层 -> wanka.workload / engine: MFU {r.mfu:.1%}, step {r.step_time_s:.1f} s")
    try:
        camp = runs.campaign(s, r)
        lines.append(
            f"智算运营和运维域 -> wanka.ops: {camp.failures_per_day:.1f} interruptions/day, ETTR {camp.ettr.mean:.1%}"
        )
        values["ettr"] = camp.ettr.mean
    except WankaError as e:
        lines.append(f"智算运营和运维域 -> wanka.ops: n/a ({e})")
    values["mfu"] = r.mfu
    v = Verdict("mapped", None, "n/a")
    expl = (
        f"四层一域 is an architecture, not a number; each layer maps to a wanka package, shown with one "
        f"number it computes for {s.name}."
    )
    return _result(c, "5 of 5 layers/domains mapped", v, expl, lines, values)


_KINDS = {
    "time_on_peak": _time_on_peak,
    "time_at_peak_range": _time_at_peak_range,
    "campaign_time": _campaign_time,
    "cards_for_job": _cards_for_job,
    "scale_point": _scale_point,
    "speedup": _speedup,
    "silent": _silent,
    "layer_map": _layer_map,
}


def evaluate_claims(*, seed: int = 0, only: list[str] | None = None) -> list[ClaimResult]:
    """Evaluate every claim (or those in ``only``) in file order."""
    claims = load_claims()
    known = [c["id"] for c in claims]
    if only:
        bad = [i for i in only if i not in known]
        if bad:
            raise SpecError(f"= {bad[0]!r}: unknown claim; known: {', '.join(known)}", field="claim id")
    runs = _Runs(seed)
    out = []
    for c in claims:
        if only and c["id"] not in only:
            continue
        kind = c["evaluate"].get("kind")
        fn = _KINDS.get(kind)
        if fn is None:
            raise SpecError(f"= {kind!r}: unknown kind; known: {', '.join(_KINDS)}", field=f"{c['id']}.evaluate.kind")
        r = fn(c, runs)
        ev = c["evaluate"]
        out.append(replace(r, explanation_zh=explain_zh(kind, r, ev), computed_zh=computed_zh(kind, r, ev)))
    return out


# ---------------------------------------------------------------- Chinese explanations
_WHAT_ZH = {
    "time_on_peak": "训练时间",
    "time_at_peak_range": "训练时间",
    "campaign_time": "训练时长",
    "cards_for_job": "卡数",
}


def _verdict_zh(r: ClaimResult, what: str) -> str:
    f = r.factor
    if r.verdict == "consistent":
        return f"一致：计算的{what}落在文章数字的范围内（×{f or 1:.2f}）"
    if r.direction == "article-favourable":
        word = "偏乐观" if r.verdict == "optimistic" else "不一致"
        return f"{word}：文章的{what}比计算结果有利 {f or 0:.1f} 倍"
    return f"不一致：文章的{what}比计算结果保守（不利）{f or 0:.1f} 倍"


def _days_zh(d: float) -> str:
    return f"{d:,.0f} 天（{d / YEAR_DAYS:.2f} 年）" if d >= 365 else f"{d:,.1f} 天"


def explain_zh(kind: str, r: ClaimResult, ev: dict[str, Any]) -> str:
    """The explanation of ``r`` in Chinese, from the same numbers as the English one."""
    v = r.values
    head = _verdict_zh(r, _WHAT_ZH.get(kind, "数字"))
    if kind == "time_on_peak" and "days" in v:
        return (
            f"{head}。按引擎给出的 {v['mfu']:.0%} MFU，1,000 PFLOPS 需要 {_days_zh(v['days'])}；"
            f"三年意味着 MFU 只有 {v['implied_mfu']:.0%}，若 15 TB 指 15 万亿 token（每 token 1 字节）"
            f"则约为 {4 * v['implied_mfu']:.0%}。"
        )
    if kind == "time_at_peak_range" and "days" in v:
        need = list(v["peak_needed_flops"].values())
        return (
            f"{head}。10,000 PFLOPS 在 {v['mfu']:.0%} MFU 下 {_days_zh(v['days'])} 完成；两周需要 "
            f"{need[0] / 1e15:,.0f} PFLOPS，一个月需要 {need[-1] / 1e15:,.0f} PFLOPS。文章的两处数字彼此不一致："
            f"1,000P 需三年意味着 10,000P 需约 {YEAR_DAYS * 3 / 10:,.0f} 天，而不是 14–30 天。"
        )
    if kind == "campaign_time" and "days_wall" in v:
        return (
            f"{head}：含故障的墙钟时间 {_days_zh(v['days_wall'])}（稳态 {_days_zh(v['days_steady'])}，MFU "
            f"{v['mfu']:.0%}，每日 {v['failures_per_day']:.1f} 次中断，有效训练时长 ETTR {v['ettr']:.0%}）；"
            "输入来自传闻（SemiAnalysis 2023），见预置的假设。"
        )
    if kind == "cards_for_job":
        if "cards_needed" not in v:
            return "不一致：在文章给出的集群上，该任务的任何并行策略都放不下。"
        return (
            f"{head}：1,000 张 H100 需要 {_days_zh(v['days_on_claimed_cards'])}（{v['precision'].upper()}），"
            f"要在 {float(ev['claimed_days']):g} 天内完成约需 {v['cards_needed']:,.0f} 张 H100。"
        )
    if kind == "scale_point":
        lo, hi = _range(ev["claimed"])
        claim = f"{lo:,.0f}" if lo == hi else f"{lo:,.0f}–{hi:,.0f}"
        tail = ""
        if "ettr" in v:
            tail = (
                f"在这个规模下，其训练任务每日 {v['failures_per_day']:.1f} 次中断，任务级 MTBF "
                f"{v['job_mtbf_s'] / 3600:.1f} 小时，有效训练时长 ETTR {v['ettr']:.0%}（长稳可靠）。"
            )
        word = {"consistent": "一致", "optimistic": "偏乐观", "inconsistent": "不一致"}.get(r.verdict, r.verdict)
        return f"{word}：预置模型含 {v['accelerators']:,} 张加速卡，文章为 {claim}。{tail}"
    if kind == "speedup" and "speedup" in v:
        return (
            f"规模带来的加速至多是线性的：卡数 {v['gpu_ratio']:,.0f} 倍 × 单卡峰值 {v['peak_ratio']:.1f} 倍 × "
            f"效率 {v['efficiency']:.2f} = {v['speedup']:,.0f} 倍，并非“指数级”。"
        )
    if kind == "silent":
        return (
            f"文章宣称有 {ev.get('count', '')} 大核心原则，但冒号后没有列出任何一条；wanka 不替它编造。"
            "文中其他地方提到的：高效训练 → wanka.engine（MFU、线性加速比）；"
            "长稳可靠 → wanka.ops（每日故障、MTBF、ETTR）。"
        )
    if kind == "layer_map":
        return f"四层一域是架构而非数字；每一层对应一个 wanka 包，并给出它为 {r.scenario} 计算的一个数字。"
    return r.explanation


def computed_zh(kind: str, r: ClaimResult, ev: dict[str, Any]) -> str:
    """The computed figure of ``r`` in Chinese (the same numbers as ``r.computed``)."""
    v = r.values
    if kind == "time_on_peak" and "days" in v:
        return f"{_days_zh(v['days'])}（MFU {v['mfu']:.0%}）"
    if kind == "time_at_peak_range" and "days" in v:
        return f"{float(ev['peak_pflops']):,.0f} PFLOPS 上 {_days_zh(v['days'])}（MFU {v['mfu']:.0%}）"
    if kind == "campaign_time" and "days_wall" in v:
        return f"含故障 {_days_zh(v['days_wall'])}（稳态 {_days_zh(v['days_steady'])}，MFU {v['mfu']:.0%}）"
    if kind == "cards_for_job" and "cards_needed" in v:
        return (
            f"{float(ev['claimed_cards']):,.0f} 张：{_days_zh(v['days_on_claimed_cards'])}；"
            f"{float(ev['claimed_days']):g} 天需 {v['cards_needed']:,.0f} 张"
        )
    if kind == "scale_point" and "accelerators" in v:
        return f"{v['accelerators']:,} 张加速卡，{v['peak_flops'] / 1e15:,.0f} PFLOPS"
    if kind == "speedup" and "speedup" in v:
        return (
            f"卡数 {v['gpu_ratio']:,.0f} 倍 × 单卡峰值 {v['peak_ratio']:.1f} 倍，快 {v['speedup']:,.0f} 倍"
            f"（效率 {v['efficiency']:.2f}）"
        )
    if kind == "silent":
        return "无可计算：原则未列出"
    if kind == "layer_map":
        return "五个层/域均已对应"
    return r.computed
