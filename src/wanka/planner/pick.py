"""One way for every command to get a strategy when a scenario gives none: ``wanka search``'s fastest.

>>> from wanka.spec import load_scenario
>>> sc, chosen = with_strategy(load_scenario("traditional-512-a100"))
>>> chosen, sc.parallel is not None
(False, True)
"""

from __future__ import annotations

from wanka.errors import InfeasibleError
from wanka.spec import Scenario

__all__ = ["STRATEGY_FROM_SEARCH", "with_strategy"]

STRATEGY_FROM_SEARCH = "wanka search (fastest)"


def with_strategy(scenario: Scenario) -> tuple[Scenario, bool]:
    """``scenario`` with a parallel strategy, and whether it was chosen here.

    A scenario with a ``parallel:`` block keeps it. One with a model and a training job but no
    strategy gets the fastest strategy ``search`` finds (the same choice ``plan`` makes); a scenario
    without a training job is returned as it is.
    """
    if scenario.parallel is not None or scenario.model is None or scenario.training is None:
        return scenario, False
    from wanka.planner.search import candidate_scenario, search

    best = search(scenario, top=1).top
    if not best:
        raise InfeasibleError(f"no parallel strategy for {scenario.name!r} fits; see `wanka search`")
    return candidate_scenario(scenario, best[0]), True
