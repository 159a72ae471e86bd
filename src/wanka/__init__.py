"""wanka — a digital twin of 万卡 (10,000+ GPU) AI training clusters.

Describe a cluster, a model and a training job; wanka predicts step time, MFU, memory, network
load, failures and effective training time, scheduling outcomes, power, energy and cost.

>>> import wanka
>>> s = wanka.load_scenario("meta-24k-h100-roce")
>>> s.cluster.accelerators
24576
"""

from wanka.errors import CatalogError, InfeasibleError, SpecError, TraceError, WankaError
from wanka.spec import Scenario, load_model, load_scenario

__version__ = "0.1.0"

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
