"""Fit the engine's global calibration constants on the public validation cases.

Coordinate descent over a log grid of each fitted constant in :mod:`wanka.calibration`,
minimising the mean absolute relative error of steady-state tokens/s/GPU plus a steep penalty on
any case beyond 19% (the target bounds every case at 20%). Uses ``cases`` only (never
``superseded_cases``) and never looks at a case id.
Prints the fitted values; copy them into ``wanka/data/calibration.yaml``.

    python -m benchmarks.fit_calibration [--rounds 4]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

from wanka.calibration import Calibration, calibration_info, default_calibration
from wanka.engine import Context, Strategies, evaluate_batch, make_context
from wanka.validate.cases import case_scenario, load_cases
from wanka.validate.run import _candidates, choose

# the fitted constants and their search bounds, from the calibration file
FITTED = {n: i.bounds for n, i in calibration_info().items() if i.provenance == "fit" and i.bounds is not None}


Prepared = list[tuple[Context, Strategies, float]]


def prepare() -> Prepared:
    cases, _ = load_cases()
    out = []
    for c in cases:
        if c.kind != "steady_state":
            continue
        sc, unknown = case_scenario(c)
        out.append((make_context(sc), _candidates(sc, unknown), c.truth))
    return out


def errors(prepared: Prepared, cal: Calibration | None = None) -> np.ndarray:
    errs = []
    for ctx, st, truth in prepared:
        r = evaluate_batch(ctx if cal is None else replace(ctx, cal=cal), st, 1.0)
        chosen = choose(r, ctx.hbm_bytes)
        errs.append(np.inf if chosen is None else chosen[1] / truth - 1.0)
    return np.array(errs)


# The targets are a mean (MAPE <= 8%) and a bound on every case (<= 20%): the objective is
# the mean absolute relative error plus a steep penalty on whatever lies beyond 19%.
PENALTY = 20.0
PENALTY_FROM = 0.19


def objective(e: np.ndarray) -> float:
    a = np.abs(e)
    return float(a.mean() + PENALTY * np.maximum(a - PENALTY_FROM, 0.0).mean())


def fit_round(prepared: Prepared, cal: Calibration, rnd: int, points: int) -> tuple[Calibration, float]:
    """One coordinate-descent pass over every fitted constant (grid narrows as rounds go on)."""
    best = float("inf")
    for name, (lo, hi) in FITTED.items():
        cur = getattr(cal, name)
        span = 0.5**rnd
        around = cur * np.exp(np.linspace(-span, span, points)) if cur > 0 else np.linspace(lo, hi, points)
        grid = np.unique(np.clip(np.concatenate([[cur], around]), lo, hi))
        scores = [objective(errors(prepared, replace(cal, **{name: float(g)}))) for g in grid]
        i = int(np.argmin(scores))
        cal = replace(cal, **{name: float(grid[i])})
        best = scores[i]
    return cal, best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--points", type=int, default=9)
    ap.add_argument("--cv", action="store_true", help="leave-one-family-out cross-validation instead")
    ap.add_argument("--folds", type=int, default=0, help="with --cv: random k-fold instead of by family")
    args = ap.parse_args()
    if args.cv:
        cross_validate(folds=args.folds)
        return
    prepared = prepare()
    cal = default_calibration()
    t0 = time.time()
    best = objective(errors(prepared, cal))
    print(f"start: objective {best:.4f}")
    for rnd in range(args.rounds):
        cal, best = fit_round(prepared, cal, rnd, args.points)
        e = errors(prepared, cal)
        print(
            f"round {rnd}: objective {best:.4f}  MAPE {np.abs(e).mean():.3%}  max {np.abs(e).max():.3%}"
            f"  ({time.time() - t0:.0f} s)"
        )
    for name in FITTED:
        print(f"{name}: {getattr(cal, name):.4g}")


def show(prepared_ids: list[str] | None = None) -> None:
    """Per-case errors at the current constants (for reading, not for fitting)."""
    cases, _ = load_cases()
    ids = [c.id for c in cases if c.kind == "steady_state"]
    e = errors(prepare())
    for i, err in sorted(zip(ids, e, strict=True), key=lambda t: -abs(t[1])):
        print(f"{i:45s} {err:+.1%}")


def cross_validate(rounds: int = 2, points: int = 7, folds: int = 0) -> None:
    """Refit without a group of cases, predict them, restore the constants.

    ``folds = 0``: leave one source family out (the id prefixes: megatron2021, korthikanti2022,
    mcore08, megascale, nemotron4, gpt_neox, nemo) — a harsh test, since some families are the only
    source of a regime (FP8 and Blackwell: NeMo; fp16 and ZeRO-3: Megatron 2021). ``folds = k``:
    random k-fold (seed 0), closer to how an unseen run of a known kind is predicted.
    """
    cases, _ = load_cases()
    steady = [c for c in cases if c.kind == "steady_state"]
    prepared = prepare()
    if folds:
        rng = np.random.default_rng(0)
        fam = [f"fold{i % folds}" for i in rng.permutation(len(steady))]
    else:
        fam = [c.id.split("_")[0].rstrip("0123456789") or c.id for c in steady]
        fam = ["nemo" if f.startswith("nemo") and not f.startswith("nemotron") else f for f in fam]
    held: list[float] = []
    for f in sorted(set(fam)):
        train = [p for p, g in zip(prepared, fam, strict=True) if g != f]
        test = [p for p, g in zip(prepared, fam, strict=True) if g == f]
        cal = default_calibration()
        for rnd in range(rounds):
            cal, _ = fit_round(train, cal, rnd, points)
        e = np.abs(errors(test, cal))
        held.extend(e.tolist())
        print(f"held out {f:15s} {len(test):3d} cases: MAPE {e.mean():.1%}  max {e.max():.1%}")
    h = np.array(held)
    how = f"{folds}-fold" if folds else "leave-one-family-out"
    print(f"{how} over {h.size} cases: MAPE {h.mean():.1%}  max {h.max():.1%}")


if __name__ == "__main__":
    main()
