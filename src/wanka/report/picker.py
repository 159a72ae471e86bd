"""A simple strategy picker for moving a training job onto another cluster (compare, claims).

Not the planner (``wanka.planner`` searches far wider); this picks among a handful of candidates so
that ``wanka compare --job`` and ``wanka claims`` can put one job on clusters it was not written
for. The rule, in full:

* candidates: tp in {1, 2, 4, 8, ...} up to the scale-up domain (tensor parallelism stays on
  NVLink/HCCS); pp in {1, 2, 4, 8, 16, 32} up to the layer count; vpp in {1, 2, 4} when pp > 1;
  ep in the divisors of the expert count up to 64 (MoE only); cp 1; ZeRO 1 or 3; recompute
  selective or full; micro-batch 1 or 2;
* data parallelism: for each (tp, pp, cp) the largest dp with tp·pp·cp·dp <= the cluster's
  accelerators that divides the global batch (in micro-batches) and is a multiple of ep, plus that
  dp halved and quartered;
* choice: among the candidates the engine finds feasible (shape rules) and that fit in HBM, the one
  with the shortest steady-state time to train (ties: fewer GPUs).

The global batch (sequences) and sequence length stay the job's own; only the strategy and the
number of GPUs used change.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from wanka.engine import Strategies, evaluate_batch, make_context
from wanka.errors import InfeasibleError
from wanka.spec import Scenario, parse_scenario

__all__ = ["PickResult", "pick_strategy", "with_strategy"]

_PP = (1, 2, 4, 8, 16, 32)
_VPP = (1, 2, 4)
_ZERO = (1, 3)
_RECOMPUTE = (1, 2)  # selective, full (engine RECOMPUTE_CODES)
_MICRO = (1, 2)
_MAX_EP = 64


@dataclass(frozen=True)
class PickResult:
    """The picked strategy, how many candidates were tried and how many could run."""

    scenario: Scenario
    strategy: dict[str, Any]
    candidates: int
    feasible: int
    rule: str = "feasible + fits in HBM + shortest steady-state time to train (wanka.report.picker)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": dict(self.strategy),
            "candidates": self.candidates,
            "feasible": self.feasible,
            "rule": self.rule,
        }


def _pow2_upto(n: int) -> list[int]:
    out, x = [], 1
    while x <= n:
        out.append(x)
        x *= 2
    return out


def _dp_options(batch: int, mb: int, mp: int, n_gpus: int, ep: int) -> list[int]:
    if batch % mb:
        return []
    per = batch // mb
    cap = n_gpus // mp
    best = next((d for d in range(min(cap, per), 0, -1) if per % d == 0 and d % ep == 0), 0)
    if best == 0:
        return []
    opts = {best}
    for f in (2, 4):
        if best % f == 0 and (best // f) % ep == 0:
            opts.add(best // f)
    return sorted(opts)


def with_strategy(scenario: Scenario, strategy: dict[str, Any], **training: Any) -> Scenario:
    """``scenario`` with ``strategy`` (a Strategies row) as its parallel block; ``training`` overrides."""
    data = scenario.model_dump(mode="python")
    par = dict(data.get("parallel") or {})
    rec = strategy["recompute"]
    par.update(
        tp=strategy["tp"],
        pp=strategy["pp"],
        dp=strategy["dp"],
        cp=strategy["cp"],
        ep=strategy["ep"],
        vpp=strategy["vpp"],
        zero=strategy["zero"],
        recompute=rec,
        sp=strategy["sp"],
    )
    data["parallel"] = par
    data["job_gpus"] = None
    tr = dict(data["training"])
    tr["micro_batch"] = strategy["micro_batch"]
    tr.update(training)
    data["training"] = tr
    return parse_scenario(data, source=f"{scenario.name} (picked strategy)")


def pick_strategy(scenario: Scenario) -> PickResult:
    """Pick a strategy for ``scenario``'s model and training on its cluster (see module docstring)."""
    if scenario.model is None or scenario.training is None:
        raise InfeasibleError(f"scenario {scenario.name!r} has no training job to place")
    ctx = make_context(scenario)
    m, c = scenario.model, scenario.cluster
    n_gpus = c.accelerators
    batch = scenario.training.global_batch_seqs
    tps = [t for t in _pow2_upto(min(c.scale_up.domain_size, m.n_heads)) if m.n_heads % t == 0]
    pps = [p for p in _PP if p <= m.n_layers]
    eps = [1]
    if m.moe is not None:
        eps = [e for e in range(1, min(m.moe.n_experts, _MAX_EP) + 1) if m.moe.n_experts % e == 0]
    groups: dict[int, list[tuple[int, ...]]] = {}
    for tp in tps:
        for pp in pps:
            for ep in eps:
                for mb in _MICRO:
                    for dp in _dp_options(batch, mb, tp * pp, n_gpus, ep):
                        for vpp in _VPP if pp > 1 else (1,):
                            for z in _ZERO:
                                for rc in _RECOMPUTE:
                                    groups.setdefault(tp * pp * dp, []).append((tp, pp, dp, ep, vpp, mb, z, rc))
    best: tuple[float, int, Strategies, int] | None = None
    total = feasible = 0
    for world, rows in sorted(groups.items()):
        cols = np.array(rows, dtype=np.int64).T
        st = Strategies.from_columns(
            tp=cols[0],
            pp=cols[1],
            dp=cols[2],
            cp=1,
            ep=cols[3],
            vpp=cols[4],
            micro_batch=cols[5],
            zero=cols[6],
            recompute=cols[7],
            sp=cols[0] > 1,
        )
        res = evaluate_batch(replace(ctx, gpus=world), st, scenario.training.tokens)
        ok = res.feasible & np.isfinite(res.time_to_train_s)
        total += len(st)
        feasible += int(ok.sum())
        if not ok.any():
            continue
        t = np.where(ok, res.time_to_train_s, np.inf)
        i = int(np.argmin(t))
        key = (float(t[i]), world)
        if best is None or key < (best[0], best[1]):
            best = (key[0], world, st, i)
    if best is None:
        raise InfeasibleError(
            f"no candidate strategy for {m.name} runs on {scenario.cluster.name} ({n_gpus:,} × "
            f"{c.accelerator}, global batch {batch:,} sequences): none fits in HBM or divides the batch"
        )
    row = best[2].row(best[3])
    return PickResult(with_strategy(scenario, row), row, total, feasible)
