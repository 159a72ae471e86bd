"""Where `wanka search` ranks NVIDIA's published tuned recipe (measured, never fitted).

For Llama 3.1 405B on H100 at the GPU count of the NeMo / Megatron-Bridge performance tables
(``benchmarks/extra_runs/nemo_perf_tables.yaml``, 1,024 GPUs), the published layout (tp, pp, cp, vpp,
micro-batch, distributed optimizer; recompute, which the tables do not print, as the validator's
point estimate: the fastest setting that fits) is placed in the search's ranking of every valid
layout that fits. Prints its rank and percentile, and how far the search's best layout is from it
(predicted throughput). Targets (issue 13): within the top 5%, best layout within 5%.

    python -m benchmarks.check_recipe_rank [--results]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from wanka.engine import evaluate_batch, make_context
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


def rank(case: Case) -> dict[str, Any]:
    sc, unknown = case_scenario(case)
    ctx = make_context(sc)
    st = _candidates(sc, unknown)
    band = choose(evaluate_batch(ctx, st, 1.0))
    if band is None:
        return {"id": case.id, "error": "the recipe does not fit in the memory model"}
    row = st.row(band.index)
    assert sc.parallel is not None and sc.training is not None
    par = sc.parallel.model_copy(update={"vpp": row["vpp"], "recompute": row["recompute"]})
    tr = sc.training.model_copy(update={"micro_batch": row["micro_batch"]})
    sc = sc.model_copy(update={"parallel": par, "training": tr})
    res = search(sc, top=1)
    b = res.baseline
    assert b is not None
    best = res.best.tokens_per_s_per_gpu
    recipe = b.candidate.tokens_per_s_per_gpu
    return {
        "id": case.id,
        "gpus": sc.gpus,
        "recipe": {k: row[k] for k in ("tp", "pp", "dp", "cp", "vpp", "micro_batch", "zero", "recompute")},
        "rank": b.rank,
        "feasible": b.feasible_total,
        "percentile": None if b.rank is None else b.rank / b.feasible_total,
        "recipe_predicted": recipe,
        "truth": case.truth,
        "best_predicted": best,
        "best_over_recipe": best / recipe - 1.0,
        "best": {k: getattr(res.best, k) for k in ("tp", "pp", "dp", "cp", "vpp", "micro_batch", "zero", "recompute")},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", action="store_true", help="record in benchmarks/results/calibration.json")
    args = ap.parse_args()
    out = []
    for c in recipe_cases():
        r = rank(c)
        out.append(r)
        if "error" in r:
            print(f"{r['id']}: {r['error']}")
            continue
        print(
            f"{r['id']:42s} recipe rank {r['rank']} of {r['feasible']} ({r['percentile']:.1%})  "
            f"search best {r['best_over_recipe']:+.1%} over the recipe  "
            f"(recipe predicted {r['recipe_predicted']:.0f}, published {r['truth']:.0f} tok/s/GPU)"
        )
    if args.results:
        RESULTS.parent.mkdir(exist_ok=True)
        doc = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
        doc["recipe_rank"] = out
        RESULTS.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
