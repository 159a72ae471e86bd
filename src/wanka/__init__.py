"""wanka — a digital twin of 万卡 (10,000+ GPU) AI training clusters.

Describe a cluster, a model and a training job; wanka predicts step time, MFU, memory, network
load, failures and effective training time, scheduling outcomes, power, energy and cost.

>>> import wanka
>>> s = wanka.load_scenario("meta-24k-h100-roce")
>>> s.cluster.accelerators
24576
"""

from typing import TYPE_CHECKING, Any

from wanka.errors import CatalogError, InfeasibleError, SpecError, TraceError, WankaError

if TYPE_CHECKING:
    from wanka.spec import Scenario, load_model, load_scenario

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``Scenario``, ``load_model`` and ``load_scenario`` import pydantic on first use, not at start-up."""
    if name in ("Scenario", "load_model", "load_scenario"):
        import wanka.spec

        return getattr(wanka.spec, name)
    raise AttributeError(f"module 'wanka' has no attribute {name!r}")


__all__ = [
    "CatalogError",
    "InfeasibleError",
    "Scenario",
    "SpecError",
    "TraceError",
    "WankaError",
    "__version__",
    "load_model",
    "load_scenario",
]
