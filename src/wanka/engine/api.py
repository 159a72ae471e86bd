"""Public entry points of the engine: one strategy (:func:`estimate_step`) or a batch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from wanka.calibration import Calibration
from wanka.engine.context import Context, make_context
from wanka.engine.core import BREAKDOWN_KEYS, evaluate
from wanka.engine.feasibility import PIPELINE_SPLIT_RULES, REASONS, RULE_FIELDS, check
from wanka.engine.result import MemoryBreakdown, StepResult
from wanka.engine.strategies import Strategies
from wanka.errors import InfeasibleError
from wanka.spec.scenario import Scenario
from wanka.spec.training import ParallelSpec
from wanka.units import format_bytes

__all__ = ["BatchResult", "estimate_many", "estimate_step", "evaluate_batch", "result_at"]


@dataclass(frozen=True)
class BatchResult:
    """Column-wise results of :func:`estimate_many` (arrays of one element per strategy)."""

    strategies: Strategies
    step_time_s: npt.NDArray[np.float64]
    tokens_per_s_per_gpu: npt.NDArray[np.float64]
    mfu: npt.NDArray[np.float64]
    memory_bytes: npt.NDArray[np.float64]
    fits: npt.NDArray[np.bool_]
    reason: npt.NDArray[np.int64]  # -1 feasible, else index into REASONS; -2 does not fit in HBM
    time_to_train_s: npt.NDArray[np.float64]
    breakdown: dict[str, npt.NDArray[np.float64]]
    raw: dict[str, Any]

    @property
    def feasible(self) -> npt.NDArray[np.bool_]:
        return self.reason == -1

    def reason_text(self, i: int) -> str:
        r = int(self.reason[i])
        if r == -1:
            return "feasible"
        if r == -2:
            off = np.broadcast_to(np.asarray(self.raw.get("offloaded_bytes", 0.0), dtype=float), self.reason.shape)
            if off[i] > self.raw.get("host_memory_per_gpu", float("inf")):
                return "offloaded activations do not fit in the node's host memory"
            return "does not fit in HBM"
        return REASONS[r]


def _scalar(x: Any, i: int) -> float:
    if isinstance(x, float | int | np.generic):  # one strategy evaluated on numpy scalars
        return float(x)
    a = np.asarray(x)
    return float(a) if a.ndim == 0 else float(a[i])


def result_at(ctx: Context, st: Strategies, raw: dict[str, Any], i: int, tokens: float) -> StepResult:
    """Pack element ``i`` of an :func:`evaluate` output as a :class:`StepResult`."""
    step = _scalar(raw["step_time_s"], i)
    mem = raw["memory"]
    memory = MemoryBreakdown(
        weights=_scalar(mem["weights"], i),
        gradients=_scalar(mem["gradients"], i),
        optimizer=_scalar(mem["optimizer"], i),
        activations=_scalar(mem["activations"], i),
        buffers=_scalar(mem["buffers"], i),
        capacity=ctx.hbm_usable,
        offloaded=_scalar(raw["offloaded_bytes"], i),
        host_capacity=ctx.host_memory_per_gpu,
    )
    tps = _scalar(raw["tokens_per_s_per_gpu"], i)
    return StepResult(
        step_time_s=step,
        breakdown={k: _scalar(raw["breakdown"][k], i) for k in BREAKDOWN_KEYS},
        tokens_per_step=float(ctx.global_batch_seqs * ctx.seq_len),
        tokens_per_s_per_gpu=tps,
        mfu=_scalar(raw["mfu"], i),
        hfu=_scalar(raw["hfu"], i),
        memory=memory,
        traffic_bytes={k: _scalar(v, i) for k, v in raw["traffic"].items()},
        micro_batches=round(_scalar(raw["micro_batches"], i)),
        gpus=ctx.gpus,
        time_to_train_s=tokens / (tps * ctx.gpus),
        model_flops_per_token=ctx.model_flops_per_token,
        strategy=st.row(i),
        assumptions=ctx.assumptions,
        link_busy_s={k: {c: _scalar(t, i) for c, t in v["busy"].items()} for k, v in raw["links"].items()},
    )


def _release_note(ctx: Context, code: int) -> str:
    """For the pipeline-split rules, which release the scenario's software is (they depend on it)."""
    if code not in PIPELINE_SPLIT_RULES:
        return ""
    m = ctx.model
    return f" [this scenario: {ctx.splits.label}; n_layers = {m.n_layers}]"


def estimate_step(scenario: Scenario, *, require_fit: bool = True, cal: Calibration | None = None) -> StepResult:
    """Predict one training step of ``scenario``'s job under its parallel strategy.

    >>> from wanka.spec import load_scenario
    >>> r = estimate_step(load_scenario("meta-24k-h100-roce"))
    >>> 0.2 < r.mfu < 0.6
    True

    Raises :class:`InfeasibleError` naming the rule a strategy breaks (and, with ``require_fit``,
    when it does not fit in HBM). ``cal`` replaces the shipped calibration.
    """
    ctx = make_context(scenario, cal)
    par = scenario.parallel
    if par is None:
        raise InfeasibleError(f"scenario {scenario.name!r} has no `parallel:` strategy; give one or run `wanka search`")
    assert scenario.training is not None
    st = Strategies.from_specs([par], [scenario.training.micro_batch])
    one = st.scalars()  # the same model on numpy scalars: a batch of one pays numpy's cost per call
    code = int(check(ctx, one)[0])
    if code >= 0:
        row = st.row(0)
        field = RULE_FIELDS[code]
        raise InfeasibleError(
            f"{field} = {row.get(field.rsplit('.', 1)[-1])!r}: {REASONS[code]}{_release_note(ctx, code)} "
            f"(parallel strategy {row})"
        )
    try:
        raw = evaluate(ctx, one)
    except ArithmeticError:  # Python floats raise where numpy gives inf or nan: the batch path's numbers
        raw = evaluate(ctx, st)
    res = result_at(ctx, st, raw, 0, scenario.training.tokens)
    if require_fit and res.memory.fits_hbm and not res.memory.fits_host:
        raise InfeasibleError(
            f"parallel.offload_layers = {par.offload_layers}: the offloaded activations need "
            f"{format_bytes(res.memory.offloaded)} of host memory per GPU, more than the node's "
            f"{format_bytes(res.memory.host_capacity)} per GPU ({scenario.cluster.gpus_per_node} GPUs share it); "
            "offload fewer layers, or raise zero, tp or recompute"
        )
    if require_fit and not res.memory.fits:
        raise InfeasibleError(
            f"does not fit: {format_bytes(res.memory.total)} per GPU needed "
            f"(weights {format_bytes(res.memory.weights)}, gradients {format_bytes(res.memory.gradients)}, "
            f"optimizer {format_bytes(res.memory.optimizer)}, activations {format_bytes(res.memory.activations)}, "
            f"buffers {format_bytes(res.memory.buffers)}) > {format_bytes(ctx.hbm_usable)} usable HBM; "
            "raise zero, tp/pp, or recompute"
        )
    return res


def estimate_many(
    scenario: Scenario,
    strategies: Strategies | list[ParallelSpec],
    micro_batches: list[int] | None = None,
    cal: Calibration | None = None,
) -> BatchResult:
    """Evaluate a batch of strategies for ``scenario``'s model, cluster and training at once."""
    ctx = make_context(scenario, cal)
    if not isinstance(strategies, Strategies):
        assert scenario.training is not None
        mbs = micro_batches or [scenario.training.micro_batch] * len(strategies)
        strategies = Strategies.from_specs(strategies, mbs)
    return evaluate_batch(ctx, strategies, scenario.training.tokens if scenario.training else 1.0)


# A batch of n strategies makes ~140 temporaries of 8·n bytes at once; each is freed as soon as it is
# used. glibc's malloc returns the freed top of its heap to the kernel once it exceeds a trim threshold
# that starts at 128 kB and only rises (to twice the size) when a block it had to mmap is freed
# (mallopt(3): dynamic mmap threshold, at most 32 MiB). Until then every batch re-faults its heap a
# page at a time: ~13,000 zero-filled pages per 50,000 strategies, a third of the batch's time.
_HEAP_HINT_BYTES = 30 << 20
_heap_hinted = False


def _raise_heap_thresholds() -> None:
    """Allocate and free one 30 MiB block, untouched (no page is faulted in), once per process: glibc
    serves it by mmap and, on freeing it, raises its mmap threshold to 30 MiB and its trim threshold
    to 60 MiB, as it does after any program frees such a block; later batches then reuse their heap.
    Elsewhere (other allocators) a no-op."""
    global _heap_hinted
    if not _heap_hinted:
        _heap_hinted = True
        np.empty(_HEAP_HINT_BYTES, dtype=np.uint8)


def evaluate_batch(ctx: Context, st: Strategies, tokens: float) -> BatchResult:
    if len(st) >= 4096:
        _raise_heap_thresholds()
    code = check(ctx, st)
    # evaluate only rows whose shape rules pass (others may divide by zero)
    raw = evaluate(ctx, st)
    fits = np.asarray(raw["fits"], dtype=bool)
    reason = np.where((code == -1) & ~fits, -2, code)
    tps = np.asarray(raw["tokens_per_s_per_gpu"], dtype=float)
    return BatchResult(
        strategies=st,
        step_time_s=np.asarray(raw["step_time_s"], dtype=float),
        tokens_per_s_per_gpu=tps,
        mfu=np.asarray(raw["mfu"], dtype=float),
        memory_bytes=np.asarray(raw["memory_bytes"], dtype=float),
        fits=fits,
        reason=reason,
        time_to_train_s=tokens / (tps * ctx.gpus),
        breakdown={k: np.asarray(v, dtype=float) for k, v in raw["breakdown"].items()},
        raw=raw,
    )
