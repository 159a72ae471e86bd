"""Split strong-scaling series into the part of the step that shrinks with the local batch and the part
that does not, for the published step times and for wanka's predictions of them.

A series is a set of steady-state cases with the same model, accelerator, layout (tp, pp, vpp, cp, ep),
global batch, sequence length, precision and framework that differ only in the data-parallel size.
With the global batch fixed, each GPU's share of the work falls as 1/dp while the pipeline bubble, the
data-parallel reduction and the optimizer step stay per step, so both the published and the predicted
step times follow ``T(dp) = a / dp + b``: ``a`` is the work of the whole batch on one replica, ``b``
the per-step cost that does not shrink with the local batch. A least-squares fit of each gives where a
residual lies: in the per-GPU work (``a``) or in the per-step costs (``b``). A diagnostic, never fitted.

    python -m benchmarks.strong_scaling                                      # the public file
    python -m benchmarks.strong_scaling benchmarks/extra_runs/papers.yaml    # any case file
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from wanka.validate.cases import load_cases
from wanka.validate.run import predict_case


@dataclass(frozen=True)
class Split:
    """``T = a / dp + b`` fitted to a series: ``a`` (s x replicas) and ``b`` (s)."""

    a: float
    b: float


def split(dp: np.ndarray, step_s: np.ndarray) -> Split:
    """Least-squares ``step_s = a / dp + b`` over two or more distinct ``dp``."""
    x = 1.0 / np.asarray(dp, dtype=float)
    if np.unique(x).size < 2:
        raise ValueError("a strong-scaling split needs at least two distinct dp")
    a, b = np.polyfit(x, np.asarray(step_s, dtype=float), 1)
    return Split(a=float(a), b=float(b))


def _series_key(raw: dict[str, Any]) -> str:
    p, b = raw["parallelism"], raw["batch"]
    key = {
        "model": raw["model"],
        "gpu": raw["hardware"]["gpu"],
        "layout": [p.get(k) for k in ("tp", "pp", "vpp", "cp", "ep", "recompute", "zero")],
        "batch": b["global_batch_seqs"],
        "precision": raw["precision"],
        "software": raw.get("software"),
    }
    return json.dumps(key, sort_keys=True, default=str)


def series(path: Path | None = None) -> list[dict[str, Any]]:
    """Every strong-scaling series of a case file, with the published and predicted splits."""
    cases, _ = load_cases(path)
    groups: dict[str, list[Any]] = defaultdict(list)
    for c in cases:
        if c.kind == "steady_state":
            groups[_series_key(c.raw)].append(c)
    out = []
    for members in groups.values():
        if len({c.raw["parallelism"]["dp"] for c in members}) < 2:
            continue
        rows = []
        for c in sorted(members, key=lambda c: c.raw["parallelism"]["dp"]):
            pr = predict_case(c)
            if pr.predicted is None:
                continue
            tokens = float(c.raw["batch"]["global_batch_seqs"]) * float(c.raw["model"]["seq_len"])
            gpus = float(c.raw["hardware"]["count"])
            rows.append((c.id, c.raw["parallelism"]["dp"], tokens / (pr.truth * gpus), tokens / (pr.predicted * gpus)))
        if len({r[1] for r in rows}) < 2:
            continue
        dp = np.array([r[1] for r in rows], dtype=float)
        truth = split(dp, np.array([r[2] for r in rows]))
        pred = split(dp, np.array([r[3] for r in rows]))
        out.append({"cases": rows, "truth": truth, "predicted": pred})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", type=Path, default=None, help="a case file (default: the public runs)")
    args = ap.parse_args()
    for s in series(args.path):
        t, p = s["truth"], s["predicted"]
        print(f"{s['cases'][0][0]} .. {s['cases'][-1][0]}")
        for _, dp, st, sp in s["cases"]:
            print(f"  dp {dp:5d}  published {st:8.2f} s  wanka {sp:8.2f} s  (wanka {st / sp - 1:+6.1%} faster)")
        print(
            f"  shrinks with the local batch a/dp: published a = {t.a:9.1f}, wanka {p.a:9.1f} ({p.a / t.a - 1:+6.1%})\n"
            f"  per-step cost b:                  published b = {t.b:9.2f} s, wanka {p.b:7.2f} s ({p.b - t.b:+.2f} s)"
        )


if __name__ == "__main__":
    main()
