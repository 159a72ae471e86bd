"""`wanka validate`: predict every published case and compare with its measured throughput.

Settings a source did not print (``vpp``, ``micro_batch``, ``recompute`` left null; activation
offloading, which no source in the schema prints, is completed as ``offload_layers`` in eighths of the
model's layers where pp = 1 and recompute is none or unprinted, as Megatron-Core allows it) are not known, so
the prediction is a **band**: the lowest and highest predicted throughput over every layout with
those settings filled in that is valid and fits in HBM (the memory limit is never relaxed). The
**point estimate** is the top of the band, the fastest layout that fits, as a tuned run would be
set up (and as ``wanka search`` would choose); predictions describe well-tuned software of the run's
release. A case with no layout that fits is reported as such and not predicted. The report gives
how often the published figure lies inside the band (``band_coverage``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from wanka.engine import BatchResult, Strategies, evaluate_batch, make_context
from wanka.engine.strategies import OFFLOAD_EIGHTHS, offload_layer_counts, software_columns
from wanka.errors import WankaError
from wanka.validate.cases import Case, case_scenario, load_cases

__all__ = ["Band", "CaseResult", "ValidationReport", "choose", "predict_case", "run_validation"]

_MB_CHOICES = (1, 2, 4, 8, 16)
_RECOMPUTE_CHOICES = ("none", "selective", "full")


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
    band: tuple[float, float] | None = None  # min..max over the layouts that fit (steady state)
    layouts: int = 0  # layouts that fit (1 when every setting was published)
    unknown: tuple[str, ...] = ()  # settings the source did not publish
    # a published global batch the layout cannot run: (published, the batch predicted instead)
    batch_adjusted: tuple[int, int] | None = None

    @property
    def in_band(self) -> bool | None:
        """Whether the published figure lies inside the band (None without a band)."""
        if self.band is None or self.truth != self.truth:
            return None
        return self.band[0] <= self.truth <= self.band[1]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "predicted": self.predicted,
            "truth": self.truth,
            "rel_error": self.rel_error,
        }
        if self.band is not None:
            d["band"] = list(self.band)
            d["in_band"] = self.in_band
            d["layouts"] = self.layouts
            d["unknown"] = list(self.unknown)
        if self.batch_adjusted:
            pub, runs = self.batch_adjusted
            d["adjusted"] = {"global_batch_seqs": {"published": pub, "predicted_at": runs}}
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

    def band_coverage(self) -> tuple[int, int]:
        """(cases whose published figure lies inside the band, steady-state cases with a band wider than
        one layout): how often the truth is among what the unpublished settings allow."""
        rows = [c for c in self.cases if c.kind == "steady_state" and c.band is not None and c.unknown]
        return sum(1 for c in rows if c.in_band), len(rows)

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
            "band_coverage": dict(zip(("inside", "cases"), self.band_coverage(), strict=True)),
        }


def _candidates(sc: Any, unknown: dict[str, bool]) -> Strategies:
    """Every completion of the case's layout over the settings its source did not publish."""
    par = sc.parallel
    L = sc.model.n_layers + sc.model.mtp_layers
    vpps = [par.vpp]
    if unknown.get("vpp") and par.pp > 1:
        # up to 16, and beyond it the even splits (pp·vpp dividing the layers, or the layers + the embedding
        # and the loss: one layer per virtual stage); the engine's rules decide which the release builds
        even = {v for v in range(17, (L + 2) // par.pp + 1) if any((L + k) % (par.pp * v) == 0 for k in (0, 1, 2))}
        vpps = sorted(set(range(1, min(L // par.pp, 16) + 1)) | even) or [1]
    mbs = [sc.training.micro_batch]
    if unknown.get("micro_batch"):
        mbs = list(_MB_CHOICES)
    recs = [par.recompute]
    if unknown.get("recompute"):
        recs = list(_RECOMPUTE_CHOICES)
    rows = [(v, m, r, par.offload_layers) for v in vpps for m in mbs for r in recs]
    if (
        par.pp == 1
        and (unknown.get("recompute") or par.recompute == "none")
        and not par.offload_layers
        and par.activation_offload  # a framework that can (the feasibility rule also asks its Megatron-Core)
    ):
        rows += [(v, m, "none", o) for v in vpps for m in mbs for o in offload_layer_counts(L, OFFLOAD_EIGHTHS)]
    base = {k: getattr(par, k) for k in ("tp", "pp", "dp", "cp", "ep", "zero", "sp")}
    return Strategies.from_columns(
        **base,
        **software_columns(par),
        cp_comm=par.cp_comm_type,
        cp_a2a=par.cp_a2a_size or 0,
        vpp=[r[0] for r in rows],
        micro_batch=[r[1] for r in rows],
        recompute=[r[2] for r in rows],
        offload=[r[3] for r in rows],
        rc_layers=[-1 if r[2] != "full" or par.recompute_layers is None else par.recompute_layers for r in rows],
    )


@dataclass(frozen=True)
class Band:
    """What the engine predicts for a case: the point estimate and the band around it."""

    index: int  # the point estimate's candidate
    point: float  # fastest layout that fits (tokens/s/GPU)
    low: float  # slowest layout that fits
    layouts: int  # layouts that fit


def choose(res: BatchResult, hbm_bytes: float | None = None) -> Band | None:
    """The band over the candidates that are valid and fit in HBM, or None when none does.

    Fitting is the engine's own verdict (``reason == -1``: every structural rule holds and the memory
    model, with its margins, fits in HBM); nothing that does not fit is ever predicted.
    ``hbm_bytes`` is accepted for callers that pass it and not used.
    """
    ok = res.reason == -1
    if not ok.any():
        return None
    tps = np.where(ok, res.tokens_per_s_per_gpu, -np.inf)
    i = int(np.argmax(tps))
    return Band(i, float(tps[i]), float(np.min(res.tokens_per_s_per_gpu[ok])), int(ok.sum()))


def _why_none(res: BatchResult, hbm_bytes: float) -> str:
    mem = res.reason == -2
    if mem.any():
        need = float(np.min(res.memory_bytes[mem]))
        return (
            f"no layout fits: the smallest of {int(mem.sum())} valid layouts needs {need / 2**30:.1f} GiB "
            f"per GPU of {hbm_bytes / 2**30:.0f} GiB HBM"
        )
    return f"infeasible: {res.reason_text(0)}"


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
        band = choose(res)
        if band is None:
            return _failed(case, truth, _why_none(res, ctx.hbm_bytes))
        i, pred = band.index, band.point
        open_ = tuple(k for k, v in unknown.items() if v)
        gbs, runs = case.raw.get("batch", {}).get("global_batch_seqs"), int(ctx.global_batch_seqs)
        adjusted = (int(gbs), runs) if gbs is not None and runs != gbs else None
    except WankaError as e:
        return _failed(case, truth, str(e))
    same: dict[str, Any] = {"strategy": st.row(i), "superseded": case.superseded, "batch_adjusted": adjusted}
    if case.kind == "campaign":
        # whole-run average: failures, restarts and checkpoints from the operations model
        from wanka.ops import campaign_throughput

        try:
            step = float(res.step_time_s[i])
            tokens_step = float(ctx.global_batch_seqs * ctx.seq_len)
            pred = campaign_throughput(sc, step, tokens_step, seed=0)
        except WankaError as e:
            return _failed(case, truth, str(e))
        return CaseResult(case.id, case.kind, pred, truth, pred / truth - 1.0, **same)
    elif case.kind != "steady_state":
        return _failed(case, truth, f"unknown kind {case.kind!r}")
    band_of: dict[str, Any] = {"band": (band.low, band.point), "layouts": band.layouts, "unknown": open_}
    return CaseResult(case.id, case.kind, pred, truth, pred / truth - 1.0, **same, **band_of)


def run_validation(path: str | Path | None = None) -> ValidationReport:
    """Predict every case of a `wanka-validation/1` file."""
    cases, sup = load_cases(path)
    return ValidationReport([predict_case(c) for c in cases], [predict_case(c) for c in sup])
