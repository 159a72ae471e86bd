"""Step-time and memory engine (应用使能层 on 基础设施层).

>>> from wanka.spec import load_scenario
>>> from wanka.engine import estimate_step
>>> r = estimate_step(load_scenario("meta-24k-h100-roce"))
>>> abs(sum(r.breakdown.values()) - r.step_time_s) < 1e-9 * r.step_time_s
True
"""

from wanka.engine.api import BatchResult, estimate_many, estimate_step, evaluate_batch, result_at
from wanka.engine.context import Context, make_context
from wanka.engine.core import BREAKDOWN_KEYS, MEMORY_KEYS
from wanka.engine.feasibility import REASONS
from wanka.engine.result import MemoryBreakdown, StepResult
from wanka.engine.strategies import CP_COMM_CODES, RECOMPUTE_CODES, Strategies
from wanka.engine.trace import chrome_trace

__all__ = [
    "BREAKDOWN_KEYS",
    "CP_COMM_CODES",
    "MEMORY_KEYS",
    "REASONS",
    "RECOMPUTE_CODES",
    "BatchResult",
    "Context",
    "MemoryBreakdown",
    "StepResult",
    "Strategies",
    "chrome_trace",
    "estimate_many",
    "estimate_step",
    "evaluate_batch",
    "make_context",
    "result_at",
]
