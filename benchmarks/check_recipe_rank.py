"""Where `wanka search` ranks NVIDIA's published tuned recipe (measured, never fitted).

For Llama 3.1 405B on H100 at the GPU count of the NeMo / Megatron-Bridge performance tables
(``benchmarks/extra_runs/nemo_perf_tables.yaml``, 1,024 GPUs), the published layout (tp, pp, cp, vpp,
micro-batch, distributed optimizer; recompute, which the tables do not print, as the validator's
point estimate: the fastest setting that fits) is placed in the search's ranking of every valid
layout that fits. Prints its rank and percentile, how far the search's best layout is from it
(predicted throughput), and what separates the two: the step-time terms (seconds per step, best
minus recipe) that differ most. Targets (issue 13): within the top 5%, best layout within 5%.

``--set NAME=VALUE`` (repeatable) ranks again under the shipped calibration with those constants
replaced: a sensitivity, never a fit (nothing is written with it).

``--all`` does the same for every recipe of the tables, not only the 405B: each configuration
(model, accelerator, GPU count, precision, its id without the release) at its latest release, and
summarises where the recipes rank and how far the search's best lies above them (median, the share
within the top 5% and within 5%). A best close to the recipe is the search agreeing with NVIDIA's
tuning; a best far above a recipe the engine predicts well is a layout the engine prefers that NVIDIA
did not publish (the printed terms say where it gains); one far above a recipe the engine
under-predicts says more about that prediction than about the search.

``--file PATH`` ranks every steady-state row of another case file the same way, e.g. the MLPerf Training
submissions (``benchmarks/extra_runs/mlperf_training.yaml``), whose layouts their submitters tuned.

    python -m benchmarks.check_recipe_rank [--results] [--all | --file PATH] [--set tp_overlap_efficiency=0.5]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import statistics
from pathlib import Path
from typing import Any

from wanka.calibration import Calibration, default_calibration
from wanka.engine import evaluate_batch, make_context
from wanka.engine.strategies import memory_saving
from wanka.errors import WankaError
from wanka.planner import search
from wanka.validate.cases import Case, case_scenario, load_cases
from wanka.validate.run import _candidates, choose

EXTRA = Path(__file__).resolve().parent / "extra_runs" / "nemo_perf_tables.yaml"
RESULTS = Path(__file__).resolve().parent / "results" / "calibration.json"


def recipe_cases(model: str = "llama31_405b", gpu: str = "H100") -> list[Case]:
    """The table's rows for one model on one accelerator (the id names model and GPU; the rows are
    chosen by what they are, not to tune anything)."""
    cases, _ = load_cases(EXTRA)
    return [c for c in cases if model in c.id and c.raw["hardware"]["gpu"].startswith(gpu)]


def rank(case: Case, cal: Calibration | None = None) -> dict[str, Any]:
    """The recipe's rank in the search, and the search's best layout against it (``cal``: a
    calibration other than the shipped one)."""
    sc, unknown = case_scenario(case)
    ctx = make_context(sc, cal)
    st = _candidates(sc, unknown)
    band = choose(evaluate_batch(ctx, st, 1.0))
    if band is None:
        return {"id": case.id, "error": "the recipe does not fit in the memory model"}
    row = st.row(band.index)
    assert sc.parallel is not None and sc.training is not None
    # the completion the validator chose for what the table does not print (activation offload included)
    par = sc.parallel.model_copy(
        update={"vpp": row["vpp"], "recompute": row["recompute"], "offload_layers": row["offload_layers"]}
    )
    tr = sc.training.model_copy(update={"micro_batch": row["micro_batch"]})
    sc = sc.model_copy(update={"parallel": par, "training": tr})
    res = search(sc, top=1, cal=cal)
    b = res.baseline
    assert b is not None
    best = res.best.tokens_per_s_per_gpu
    recipe = b.candidate.tokens_per_s_per_gpu
    # seconds per step by which the best layout differs from the recipe, term by term (they sum to
    # the difference of the step times)
    gap = {k: res.best.breakdown_s[k] - b.candidate.breakdown_s[k] for k in b.candidate.breakdown_s}
    return {
        "id": case.id,
        "gpus": sc.gpus,
        "recipe": {
            k: row[k] for k in ("tp", "pp", "dp", "cp", "vpp", "micro_batch", "zero", "recompute", "offload_layers")
        },
        "rank": b.rank,
        "feasible": b.feasible_total,
        "percentile": None if b.rank is None else b.rank / b.feasible_total,
        "recipe_predicted": recipe,
        "truth": case.truth,
        "best_predicted": best,
        "best_over_recipe": best / recipe - 1.0,
        "best": {
            k: getattr(res.best, k)
            for k in ("tp", "pp", "dp", "cp", "vpp", "micro_batch", "zero", "recompute", "offload_layers")
        },
        "recipe_step_s": b.candidate.step_time_s,
        "best_step_s": res.best.step_time_s,
        "gap_s": gap,
    }


def gap_text(r: dict[str, Any], n: int = 4) -> str:
    """The ``n`` terms that separate the best layout from the recipe most, in s/step (best - recipe)."""
    terms = sorted(r["gap_s"].items(), key=lambda kv: -abs(kv[1]))[:n]
    return ", ".join(f"{k} {v:+.2f}" for k, v in terms if v != 0.0)


def _layout(d: dict[str, Any]) -> str:
    saving = memory_saving(d["recompute"], d["offload_layers"])
    return (
        f"TP{d['tp']} PP{d['pp']} CP{d['cp']} DP{d['dp']} vpp{d['vpp']} mb{d['micro_batch']} zero{d['zero']} {saving}"
    )


def latest_recipes() -> list[Case]:
    """Every configuration of the tables (its id without the ``nemoYYMM[NN]_`` release) at its latest
    release, in table order."""
    cases, _ = load_cases(EXTRA)

    def release(c: Case) -> tuple[int, int]:
        m = re.match(r"nemo(\d{4})(\d*)_", c.id)
        return (int(m.group(1)), int(m.group(2) or 0)) if m else (0, 0)

    latest: dict[str, Case] = {}
    for c in cases:
        if c.kind != "steady_state":
            continue
        key = re.sub(r"^nemo\d+_", "", c.id)
        if key not in latest or release(c) > release(latest[key]):
            latest[key] = c
    return list(latest.values())


def file_rows(path: Path) -> list[Case]:
    """Every steady-state row of a case file, each placed in the search's ranking as a recipe (the
    MLPerf Training submissions' layouts are tuned as NVIDIA's published recipes are)."""
    cases, _ = load_cases(path)
    return [c for c in cases if c.kind == "steady_state"]


def summary(out: list[dict[str, Any]]) -> dict[str, Any]:
    """Where the recipes rank, and how far the search's best lies above them, over ranked recipes."""
    ranked = [r for r in out if r.get("rank") is not None]
    pct = [r["percentile"] for r in ranked]
    gap = [r["best_over_recipe"] for r in ranked]
    return {
        "recipes": len(out),
        "ranked": len(ranked),
        "not_ranked": {
            r["id"]: r.get("error") or "the recipe is not feasible in the search" for r in out if r not in ranked
        },
        "median_percentile": statistics.median(pct) if pct else None,
        "top_5pct": sum(p <= 0.05 for p in pct),
        "median_best_over_recipe": statistics.median(gap) if gap else None,
        "best_within_5pct": sum(g <= 0.05 for g in gap),
        "best_within_10pct": sum(g <= 0.10 for g in gap),
    }


def calibration_with(settings: list[str]) -> Calibration | None:
    """The shipped calibration with ``NAME=VALUE`` constants replaced (None when none are given)."""
    if not settings:
        return None
    base = default_calibration()
    names = {f.name for f in dataclasses.fields(base)}
    kw: dict[str, float] = {}
    for item in settings:
        name, sep, value = item.partition("=")
        if not sep or name not in names:
            raise ValueError(f"--set {item!r}: expected NAME=VALUE with NAME one of {', '.join(sorted(names))}")
        try:
            kw[name] = float(value)
        except ValueError:
            raise ValueError(f"--set {item!r}: VALUE must be a number") from None
    return dataclasses.replace(base, **kw)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", action="store_true", help="record in benchmarks/results/calibration.json")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="replace a calibration constant")
    rows_from = ap.add_mutually_exclusive_group()
    rows_from.add_argument("--all", action="store_true", help="every recipe of the tables at its latest release")
    rows_from.add_argument(
        "--file",
        type=Path,
        help="rank every steady-state row of this case file instead (e.g. benchmarks/extra_runs/mlperf_training.yaml)",
    )
    args = ap.parse_args()
    try:
        cal = calibration_with(args.set)
    except ValueError as e:
        ap.error(str(e))
    if cal is not None and args.results:
        ap.error("--results records the shipped calibration's figures; drop --set")
    out = []
    try:
        rows = file_rows(args.file) if args.file is not None else latest_recipes() if args.all else recipe_cases()
    except WankaError as e:  # a missing or malformed case file: the validated door's message
        ap.error(str(e))
    for c in rows:
        try:
            r = rank(c, cal)
        except WankaError as e:  # a published layout the engine's rules reject (named in the error)
            r = {"id": c.id, "error": str(e)}
        out.append(r)
        if "error" in r:
            print(f"{r['id']}: {r['error']}")
            continue
        if r["rank"] is None:
            print(f"{r['id']}: the recipe is not feasible in the search (search best {_layout(r['best'])})")
            continue
        print(
            f"{r['id']:42s} recipe rank {r['rank']} of {r['feasible']} ({r['percentile']:.1%})  "
            f"search best {r['best_over_recipe']:+.1%} over the recipe  "
            f"(recipe predicted {r['recipe_predicted']:.0f}, published {r['truth']:.0f} tok/s/GPU)"
        )
        print(
            f"    recipe {_layout(r['recipe'])}: {r['recipe_step_s']:.2f} s/step; best {_layout(r['best'])}: "
            f"{r['best_step_s']:.2f} s/step ({gap_text(r)})"
        )
    many = args.all or args.file is not None
    sm = summary(out) if many else {}
    if many:
        print(
            f"{sm['ranked']} of {sm['recipes']} recipes ranked: median percentile {sm['median_percentile']:.2%}, "
            f"{sm['top_5pct']} in the top 5%; search best over the recipe median "
            f"{sm['median_best_over_recipe']:+.1%}, within 5% for {sm['best_within_5pct']}, "
            f"within 10% for {sm['best_within_10pct']}"
        )
        for k, v in sm["not_ranked"].items():
            print(f"  not ranked: {k}: {v}")
    if args.results:
        RESULTS.parent.mkdir(exist_ok=True)
        doc = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
        if many:  # one line a recipe: its rank and how far the best is
            keep = ("rank", "feasible", "percentile", "best_over_recipe", "recipe_predicted", "truth", "error")
            table = {r["id"]: {k: r[k] for k in keep if k in r} for r in out}
            key = "recipe_rank_all" if args.all else f"recipe_rank_{args.file.stem}"
            doc[key] = {"summary": sm, "recipes": table}
        else:
            doc["recipe_rank"] = out
        RESULTS.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
