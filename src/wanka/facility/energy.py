"""First-order training time and throughput, for when no step model result is given.

``time = 6 · N_active · tokens / (GPUs · peak · u)`` — the 6N FLOPs per token of a forward and
backward pass (Kaplan et al. 2020; PaLM App. B without the attention term), at compute utilisation
``u`` (MFU). The engine's ``StepResult.time_to_train_s`` replaces it whenever a caller has one.
"""

from __future__ import annotations

from wanka.catalog import accelerator
from wanka.errors import SpecError
from wanka.facility.power import check_utilization
from wanka.spec import Scenario
from wanka.storage import parameter_count

__all__ = ["first_order_time_to_train_s", "first_order_tokens_per_s"]


def first_order_tokens_per_s(scenario: Scenario, utilization: float) -> float:
    """Tokens/s the job trains at with utilisation ``utilization`` of the accelerators' dense peak."""
    if scenario.model is None:
        raise SpecError("throughput needs a model; add a model block", field="model")
    u = check_utilization(utilization)
    precision = scenario.training.precision if scenario.training is not None else "bf16"
    peak = accelerator(scenario.cluster.accelerator).peak(precision)
    _, active = parameter_count(scenario.model)
    return scenario.gpus * peak * u / (6.0 * active)


def first_order_time_to_train_s(scenario: Scenario, utilization: float) -> float:
    """Seconds to train ``scenario.training.tokens`` at ``utilization`` (see module docstring)."""
    if scenario.training is None:
        raise SpecError("time to train needs a training block (tokens)", field="training")
    if utilization <= 0:
        raise SpecError(f"= {utilization!r}: must be above 0 to train", field="utilization")
    return scenario.training.tokens / first_order_tokens_per_s(scenario, utilization)
