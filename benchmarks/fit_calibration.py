"""Fit the engine's global calibration constants on the public validation cases, and cross-validate.

The fit is :func:`scipy.optimize.least_squares` (trust-region reflective, under each constant's bounds
from ``wanka/data/calibration.yaml``) on the relative errors of steady-state tokens/s/GPU, with a
robust ``soft_l1`` loss so that a few cases the model cannot describe do not drag the rest. Nothing in
the objective refers to an acceptance threshold. Constants are searched in a unit box: linear in
their bounds, or logarithmic where the bounds span a factor of 10 or more (scale constants). The fit
starts from **neutral** values (the middle of each range, log-middle for scale constants), never
from the shipped ones, and so does every cross-validation fold.

Uses ``cases`` only (never ``superseded_cases``) and never looks at a case id, except to name a
source family for leave-one-family-out cross-validation. A case with no layout that fits in HBM is
not predicted and not fitted (feasibility does not depend on any fitted constant).

    python -m benchmarks.fit_calibration                 # fit on every case, print values and errors
    python -m benchmarks.fit_calibration --write         # ... and write them into data/calibration.yaml
    python -m benchmarks.fit_calibration --cv            # 5-fold x 5 seeds and leave-one-family-out, neutral starts
    python -m benchmarks.fit_calibration --cv --results  # ... and record the figures in benchmarks/results/
"""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from wanka.calibration import Calibration, calibration_info, default_calibration
from wanka.engine import Context, Strategies, evaluate_batch, make_context
from wanka.validate.cases import case_scenario, load_cases
from wanka.validate.run import _candidates, _why_none, choose

RESULTS = Path(__file__).resolve().parent / "results" / "calibration.json"

# the fitted constants and their search bounds, from the calibration file
FITTED: dict[str, tuple[float, float]] = {
    n: i.bounds for n, i in calibration_info().items() if i.provenance == "fit" and i.bounds is not None
}
LOSS = "soft_l1"
F_SCALE = 0.05  # relative error where the robust loss turns from quadratic to linear
DIFF_STEP = 0.02  # finite-difference step in the unit box
MAX_NFEV = 40
TOL = 1e-3  # ftol and xtol: stop when a step changes the cost or the constants by less than 0.1%


def _is_log(lo: float, hi: float) -> bool:
    return lo > 0 and hi / lo >= 10.0


def to_unit(cal: Calibration) -> np.ndarray:
    out = []
    for name, (lo, hi) in FITTED.items():
        v = float(np.clip(getattr(cal, name), lo, hi))
        if hi == lo:
            out.append(0.5)
        elif _is_log(lo, hi):
            out.append(np.log(v / lo) / np.log(hi / lo))
        else:
            out.append((v - lo) / (hi - lo))
    return np.array(out)


def from_unit(x: np.ndarray, base: Calibration) -> Calibration:
    vals = {}
    for u, (name, (lo, hi)) in zip(np.clip(x, 0.0, 1.0), FITTED.items(), strict=True):
        vals[name] = float(lo * (hi / lo) ** u if _is_log(lo, hi) else lo + u * (hi - lo))
    return replace(base, **vals)


def neutral(base: Calibration | None = None) -> Calibration:
    """Every fitted constant at the middle of its range (log-middle for scale constants)."""
    return from_unit(np.full(len(FITTED), 0.5), base or default_calibration())


@dataclass(frozen=True)
class Case:
    id: str
    family: str
    ctx: Context
    st: Strategies  # only the candidates that are valid and fit (independent of the fitted constants)
    truth: float


def family(case_id: str) -> str:
    """A case's source family, from its id prefix (for leave-one-family-out only)."""
    f = case_id.split("_")[0].rstrip("0123456789") or case_id
    return "nemo" if f.startswith("nemo") and not f.startswith("nemotron") else f


def prepare() -> tuple[list[Case], list[str]]:
    """Steady-state public cases with at least one valid layout that fits; and the ids left out."""
    cases, _ = load_cases()
    out, skipped = [], []
    for c in cases:
        if c.kind != "steady_state":
            continue
        sc, unknown = case_scenario(c)
        ctx = make_context(sc)
        st = _candidates(sc, unknown)
        res = evaluate_batch(ctx, st, 1.0)
        ok = res.reason == -1
        if not ok.any():
            skipped.append(f"{c.id} ({_why_none(res, ctx.hbm_bytes)})")
            continue
        idx = np.flatnonzero(ok)
        sub = Strategies(**{k: getattr(st, k)[idx] for k in st.__dataclass_fields__})
        out.append(Case(c.id, family(c.id), ctx, sub, c.truth))
    return out, skipped


def errors(cases: list[Case], cal: Calibration | None = None) -> np.ndarray:
    """Relative error of the point estimate (fastest layout that fits) per case."""
    errs = []
    for c in cases:
        band = choose(evaluate_batch(c.ctx if cal is None else replace(c.ctx, cal=cal), c.st, 1.0))
        errs.append(1.0 if band is None else band.point / c.truth - 1.0)
    return np.array(errs)


@dataclass(frozen=True)
class Fit:
    cal: Calibration
    start: Calibration
    nfev: int
    at_bound: tuple[str, ...]
    unidentified: tuple[str, ...] = ()  # constants no fitted case responds to (they stay at their start)


def fit(cases: list[Case], start: Calibration, max_nfev: int = MAX_NFEV) -> Fit:
    """Least squares with a robust loss on relative errors, under the bounds, from ``start``."""
    base = start

    def res(x: np.ndarray) -> np.ndarray:
        e = errors(cases, from_unit(x, base))
        return np.where(np.isfinite(e), e, 1.0)

    r = least_squares(
        res,
        to_unit(start),
        bounds=(0.0, 1.0),
        loss=LOSS,
        f_scale=F_SCALE,
        diff_step=DIFF_STEP,
        max_nfev=max_nfev,
        ftol=TOL,
        xtol=TOL,
        method="trf",
    )
    cal = from_unit(r.x, base)
    at = tuple(n for n, u in zip(FITTED, r.x, strict=True) if u <= 1e-3 or u >= 1 - 1e-3)
    flat = tuple(n for n, col in zip(FITTED, np.abs(r.jac).max(axis=0), strict=True) if col == 0.0)
    return Fit(cal, start, int(r.nfev), at, flat)


def summary(e: np.ndarray) -> dict[str, float]:
    a = np.abs(e)
    return {
        "cases": int(a.size),
        "mape": float(a.mean()),
        "median": float(np.median(a)),
        "max": float(a.max()),
        "within_20pct": float(np.mean(a <= 0.2)),
        "within_30pct": float(np.mean(a <= 0.3)),
    }


def _line(name: str, s: dict[str, float]) -> str:
    return (
        f"{name:28s} {s['cases']:3d} cases  MAPE {s['mape']:6.1%}  median {s['median']:6.1%}  max {s['max']:6.1%}"
        f"  within 30% {s['within_30pct']:5.0%}"
    )


_POOL_CASES: list[Case] = []  # shared with forked workers


def _fold(args: tuple[list[int], list[int], int]) -> tuple[np.ndarray, Fit]:
    train_i, test_i, max_nfev = args
    f = fit([_POOL_CASES[i] for i in train_i], neutral(), max_nfev)
    return errors([_POOL_CASES[i] for i in test_i], f.cal), f


def cross_validate(
    cases: list[Case], folds: int, max_nfev: int = MAX_NFEV, seed: int = 0, verbose: bool = True, jobs: int = 1
) -> dict[str, Any]:
    """Refit without each group from neutral starting values, predict the group.

    ``folds = k > 0``: random k-fold (``seed``); ``folds = 0``: leave one source family out (a harsh
    test, since some families are the only source of a regime). ``jobs > 1`` runs folds in forked
    worker processes.
    """
    if folds:
        rng = np.random.default_rng(seed)
        groups = [f"fold{i % folds}" for i in rng.permutation(len(cases))]
    else:
        groups = [c.family for c in cases]
    names = sorted(set(groups))
    tasks = [
        ([i for i, gg in enumerate(groups) if gg != g], [i for i, gg in enumerate(groups) if gg == g], max_nfev)
        for g in names
    ]
    _POOL_CASES[:] = cases
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            outs = pool.map(_fold, tasks)
    else:
        outs = [_fold(task) for task in tasks]
    held = np.full(len(cases), np.nan)
    per: dict[str, Any] = {}
    for g, (_, test_i, _), (e, f) in zip(names, tasks, outs, strict=True):
        held[test_i] = e
        per[g] = {**summary(e), "at_bound": list(f.at_bound), "unidentified": list(f.unidentified)}
        if verbose:
            print("  held out " + _line(g, per[g]))
    out = {
        "how": f"{folds}-fold (seed {seed})" if folds else "leave-one-family-out",
        "max_nfev": max_nfev,
        **summary(held),
        "groups": per,
        "errors": {c.id: float(e) for c, e in zip(cases, held, strict=True)},
    }
    out["_starts"] = [f.start for _, f in outs]  # for the smoke test: where each fold started
    return out


def repeated_cross_validate(
    cases: list[Case], folds: int, repeats: int, max_nfev: int = MAX_NFEV, jobs: int = 1
) -> dict[str, Any]:
    """Random ``folds``-fold cross-validation repeated over ``repeats`` seeds (0, 1, ...), every fold of
    every repeat refitted from neutral starting values (scikit-learn's RepeatedKFold). One split's
    figure moves by about half a point with the seed, and its worst case by ten: the MAPE and median are
    over every out-of-fold error of every repeat, the worst is the largest of them, and ``errors`` holds
    each case's mean over the repeats."""
    runs = [cross_validate(cases, folds, max_nfev, seed=s, verbose=False, jobs=jobs) for s in range(repeats)]
    every = np.array([[r["errors"][c.id] for c in cases] for r in runs])
    return {
        "how": f"{folds}-fold x {repeats} (seeds 0-{repeats - 1})",
        "max_nfev": max_nfev,
        **summary(every.ravel()),
        "cases": len(cases),
        "repeats": [{"seed": s, "mape": r["mape"], "max": r["max"]} for s, r in enumerate(runs)],
        "errors": {c.id: float(e) for c, e in zip(cases, every.mean(axis=0), strict=True)},
        "_starts": [s for r in runs for s in r["_starts"]],
    }


def per_case_table(cases: list[Case], held: dict[str, dict[str, float]]) -> str:
    """Out-of-fold error of every case under each cross-validation (columns), worst first by the
    largest of them: which cases the fit cannot carry to data it did not see."""
    hows = list(held)
    rows = sorted(cases, key=lambda c: -max(abs(held[h][c.id]) for h in hows))
    head = f"{'case':50s} {'family':12s}" + "".join(f" {h[:22]:>22s}" for h in hows)
    lines = ["out-of-fold error per case (predicted / published - 1):", head]
    for c in rows:
        lines.append(f"{c.id:50s} {c.family:12s}" + "".join(f" {held[h][c.id]:>+22.1%}" for h in hows))
    return "\n".join(lines)


CAL_FILE = "data/calibration.yaml"


def write_calibration(cal: Calibration, path: Path | None = None, at_bound: tuple[str, ...] = ()) -> Path:
    """Replace the fitted constants' values in the calibration file, keeping everything else; a value
    the fit left at a bound says so in a comment."""
    p = path or Path(str(resources.files("wanka").joinpath(CAL_FILE)))
    text = p.read_text(encoding="utf-8")
    for name, (lo, hi) in FITTED.items():
        pat = re.compile(rf"(^  {name}:\n    value: )([^\n]+)", re.M)
        if not pat.search(text):
            raise SystemExit(f"{p}: no 'value:' line for {name}")
        v = float(f"{getattr(cal, name):.4g}")
        v = min(max(v, lo), hi)  # rounding must not leave the bounds
        note = ""
        if name in at_bound:
            note = f"  # at its {'lower' if abs(v - lo) <= abs(v - hi) else 'upper'} bound in the last fit"
        text = pat.sub(lambda m, s=f"{v:.4g}{note}": m.group(1) + s, text, count=1)
    p.write_text(text, encoding="utf-8")
    return p


def _record(key: str, value: Any) -> None:
    RESULTS.parent.mkdir(exist_ok=True)
    doc = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    doc[key] = value
    doc["_how"] = (
        "written by python -m benchmarks.fit_calibration --results and python -m benchmarks.check_extra_runs "
        "--results; every CV fold is refitted from neutral starting values"
    )
    RESULTS.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-nfev", type=int, default=MAX_NFEV, help="least-squares iterations per fit")
    ap.add_argument("--write", action="store_true", help="write the fitted values into data/calibration.yaml")
    ap.add_argument("--cv", action="store_true", help="cross-validate instead of fitting")
    ap.add_argument("--folds", type=int, default=5, help="with --cv: random k-fold (k) besides leave-one-family-out")
    ap.add_argument("--repeats", type=int, default=5, help="with --cv: repeat the random k-fold over this many seeds")
    ap.add_argument("--results", action="store_true", help="record the figures in benchmarks/results/calibration.json")
    ap.add_argument("--jobs", type=int, default=1, help="with --cv: folds in this many worker processes")
    args = ap.parse_args()
    if args.repeats < 1 or args.folds < 2:
        ap.error("--repeats must be at least 1 and --folds at least 2")
    t0 = time.time()
    cases, skipped = prepare()
    if skipped:
        print("not fitted (the engine predicts no layout of theirs):\n  " + "\n  ".join(skipped))
    if args.cv:
        held: dict[str, dict[str, float]] = {}
        for k in (args.folds, 0):
            if k:
                print(f"{k}-fold, repeated over {args.repeats} seeds:")
                cv = repeated_cross_validate(cases, k, args.repeats, args.max_nfev, jobs=args.jobs)
                for r in cv["repeats"]:
                    print(f"  seed {r['seed']}: MAPE {r['mape']:6.1%}  max {r['max']:6.1%}")
            else:
                print("leave-one-family-out:")
                cv = cross_validate(cases, k, args.max_nfev, jobs=args.jobs)
            cv.pop("_starts")
            held[cv["how"]] = cv["errors"]
            print(_line(cv["how"], cv) + f"  ({time.time() - t0:.0f} s)")
            if args.results:
                _record("cv_kfold" if k else "cv_family", cv)
        print(per_case_table(cases, held))
        return
    start = neutral()
    print(_line("neutral start", summary(errors(cases, start))))
    f = fit(cases, start, args.max_nfev)
    e = errors(cases, f.cal)
    print(_line("in-sample (all cases)", summary(e)) + f"  ({f.nfev} evaluations, {time.time() - t0:.0f} s)")
    shipped = default_calibration()
    for name, (lo, hi) in FITTED.items():
        v = getattr(f.cal, name)
        flag = "  AT BOUND" if name in f.at_bound else ""
        flag += "  NOT IDENTIFIED (no case responds)" if name in f.unidentified else ""
        print(f"  {name:28s} {v:<10.4g} [{lo:g}, {hi:g}]  shipped {getattr(shipped, name):.4g}{flag}")
    for cid, err in sorted(zip((c.id for c in cases), e, strict=True), key=lambda t: -abs(t[1]))[:8]:
        print(f"  worst: {cid:45s} {err:+.1%}")
    if args.write:
        print(f"wrote {write_calibration(f.cal, at_bound=f.at_bound)}")
    if args.results:
        _record(
            "in_sample",
            {
                **summary(e),
                "not_predicted": skipped,
                "values": {n: getattr(f.cal, n) for n in FITTED},
                "at_bound": list(f.at_bound),
                "unidentified": list(f.unidentified),
            },
        )


if __name__ == "__main__":
    main()
