"""Published runs outside the public validation file: how well does wanka generalise?

``benchmarks/extra_runs/`` holds further published training runs in the same `wanka-validation/1`
schema (NVIDIA's NeMo / Megatron-Bridge performance tables of every release, and papers: MT-NLG,
BLOOM, OPT, Llama 3, torchtitan, MosaicML MPT, Nemotron-4 340B, MegaScale, LLaMA). The calibration
fit never reads them. Prints, per file and per family (source, accelerator, dense/MoE), the
number of cases predicted, MAPE, median and maximum error, and the share within 20%.

    python -m benchmarks.check_extra_runs [FILE ...]
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from wanka.validate import run_validation
from wanka.validate.cases import load_cases

EXTRA = Path(__file__).resolve().parent / "extra_runs"


def _family(case_id: str, gpu: str, moe: bool) -> str:
    src = re.split(r"[_\d]", case_id, maxsplit=1)[0] or case_id
    return f"{src}/{gpu.split('-')[0]}/{'moe' if moe else 'dense'}"


def _line(name: str, errs: list[float], failed: int = 0) -> str:
    a = np.abs(np.asarray(errs))
    if a.size == 0:
        return f"{name:28s} no case predicted ({failed} failed)"
    tail = f", {failed} not predicted" if failed else ""
    return (
        f"{name:28s} {a.size:4d} cases  MAPE {a.mean():6.1%}  median {np.median(a):6.1%}  "
        f"max {a.max():7.1%}  within 20% {np.mean(a <= 0.2):5.0%}{tail}"
    )


def check(path: Path) -> None:
    rep = run_validation(path)
    cases, _ = load_cases(path)
    raw = {c.id: c.raw for c in cases}
    steady = [c for c in rep.cases if c.kind == "steady_state"]
    failed = [c for c in steady if c.rel_error is None]
    print(_line(path.name, [c.rel_error for c in steady if c.rel_error is not None], len(failed)))
    fams: dict[str, list[float]] = defaultdict(list)
    for c in steady:
        if c.rel_error is None:
            continue
        r = raw[c.id]
        fams[_family(c.id, str(r["hardware"]["gpu"]), r["model"].get("moe") is not None)].append(c.rel_error)
    for fam in sorted(fams):
        print("  " + _line(fam, fams[fam]))
    reasons: dict[str, int] = defaultdict(int)
    for c in failed:
        reasons[(c.error or "?").split(":")[0][:60]] += 1
    for why, n in sorted(reasons.items(), key=lambda t: -t[1]):
        print(f"  not predicted ({n}): {why}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args()
    for f in args.files or sorted(EXTRA.glob("*.yaml")):
        check(f)


if __name__ == "__main__":
    main()
