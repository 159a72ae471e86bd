"""`wanka validate`: predict every published case and compare with its measured throughput.

Unknowns a source did not print (``vpp: null``, ``micro_batch: null``) are filled the way a tuned
run would fill them: the value with the best predicted throughput among those that fit in memory
(as the search would choose; predictions describe well-tuned software of the run's release).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from wanka.calibration import default_calibration
from wanka.engine import BatchResult, Strategies, evaluate_batch, make_context
from wanka.engine.strategies import software_columns
from wanka.errors import WankaError
from wanka.validate.cases import Case, case_scenario, load_cases

__all__ = ["CaseResult", "ValidationReport", "predict_case", "run_validation"]

_MB_CHOICES = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class CaseResult:
    id: str
    kind: str
    predicted: float | None
    truth: float
    rel_error: float | None
    error: str | None = None
    strategy: dict[str, Any] = field(default_factory=dict)
    superseded: bool = False

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "predicted": self.predicted,
            "truth": self.truth,
            "rel_error": self.rel_error,
        }
        if self.error:
            d["error"] = self.error
        if self.strategy:
            d["strategy"] = self.strategy
        return d


@dataclass(frozen=True)
class ValidationReport:
    cases: list[CaseResult]
    superseded: list[CaseResult]

    @staticmethod
    def _mape(rows: list[CaseResult], kind: str) -> float | None:
        errs = [abs(r.rel_error) for r in rows if r.kind == kind and r.rel_error is not None]
        return float(np.mean(errs)) if errs else None

    @property
    def mape(self) -> float | None:
        return self._mape(self.cases, "steady_state")

    @property
    def max_abs_error(self) -> float | None:
        errs = [abs(r.rel_error) for r in self.cases if r.kind == "steady_state" and r.rel_error is not None]
        return float(max(errs)) if errs else None

    @property
    def campaign_mape(self) -> float | None:
        return self._mape(self.cases, "campaign")

    @property
    def superseded_mape(self) -> float | None:
        return self._mape(self.superseded, "steady_state")

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": [c.to_dict() for c in self.cases],
            "mape": self.mape,
            "max_abs_error": self.max_abs_error,
            "campaign_mape": self.campaign_mape,
            "superseded_cases": [c.to_dict() for c in self.superseded],
            "superseded_mape": self.superseded_mape,
            "steady_state_predicted": sum(
                1 for c in self.cases if c.kind == "steady_state" and c.predicted is not None
            ),
            "steady_state_total": sum(1 for c in self.cases if c.kind == "steady_state"),
        }


def _candidates(sc: Any, unknown: dict[str, bool]) -> Strategies:
    par = sc.parallel
    L = sc.model.n_layers + sc.model.mtp_layers
    vpps = [par.vpp]
    if unknown["vpp"] and par.pp > 1:
        vpps = [v for v in range(1, min(L // par.pp, 16) + 1)] or [1]  # uneven stages allowed (feasibility)
    mbs = [sc.training.micro_batch]
    if unknown["micro_batch"]:
        mbs = list(_MB_CHOICES)
    rows = [(v, m) for v in vpps for m in mbs]
    base = {k: getattr(par, k) for k in ("tp", "pp", "dp", "cp", "ep", "zero", "recompute", "sp")}
    return Strategies.from_columns(
        **base,
        **software_columns(par),
        vpp=[r[0] for r in rows],
        micro_batch=[r[1] for r in rows],
    )


def choose(res: BatchResult, hbm_bytes: float) -> tuple[int, float] | None:
    """The candidate a case is predicted from, or None when none can run.

    Unpublished settings (``vpp``, micro-batch) are filled as a tuned run fills them: the fastest
    candidate that fits in memory. "Fits" allows the memory model its own error
    (the calibration's ``memory_model_tolerance``): a run that was published did run, and the memory
    model should not rule out a setting it cannot tell apart from one that fits. A published run
    whose every candidate breaks a memory or batch-rounding rule is still predicted (it ran); one
    whose shape breaks a structural rule is not.
    """
    runnable = (res.reason == -1) | (res.reason == -2)
    shape_ok = runnable | (res.reason == 5)
    pool = runnable if runnable.any() else shape_ok
    if not pool.any():
        return None
    fits = res.memory_bytes <= hbm_bytes * (1.0 + default_calibration().memory_model_tolerance)
    if (pool & fits).any():
        pool = pool & fits
    score = np.where(pool, res.tokens_per_s_per_gpu, -np.inf)
    i = int(np.argmax(score))
    return i, float(score[i])


def _failed(case: Case, truth: float, error: str) -> CaseResult:
    return CaseResult(case.id, case.kind, None, truth, None, error=error, superseded=case.superseded)


def predict_case(case: Case) -> CaseResult:
    """Predicted steady-state tokens/s/GPU for one case (errors are reported, not raised)."""
    truth = case.truth if "truth" in case.raw else float("nan")
    try:
        sc, unknown = case_scenario(case)
        ctx = make_context(sc)
        st = _candidates(sc, unknown)
        res = evaluate_batch(ctx, st, 1.0)
        chosen = choose(res, ctx.hbm_bytes)
        if chosen is None:
            return _failed(case, truth, f"infeasible: {res.reason_text(0)}")
        i, pred = chosen
    except WankaError as e:
        return _failed(case, truth, str(e))
    if case.kind == "campaign":
        # whole-run average: failures, restarts and checkpoints from the operations model
        from wanka.ops import campaign_throughput

        try:
            step = float(res.step_time_s[i])
            tokens_step = float(ctx.global_batch_seqs * ctx.seq_len)
            pred = campaign_throughput(sc, step, tokens_step, seed=0)
        except WankaError as e:
            return _failed(case, truth, str(e))
    elif case.kind != "steady_state":
        return _failed(case, truth, f"unknown kind {case.kind!r}")
    return CaseResult(
        case.id, case.kind, pred, truth, pred / truth - 1.0, strategy=st.row(i), superseded=case.superseded
    )


def run_validation(path: str | Path | None = None) -> ValidationReport:
    """Predict every case of a `wanka-validation/1` file."""
    cases, sup = load_cases(path)
    return ValidationReport([predict_case(c) for c in cases], [predict_case(c) for c in sup])
