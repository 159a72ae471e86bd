"""The one way to pick a strategy when a scenario gives none: the fastest of a named search preset.

Every face goes through :func:`pick_strategy`: ``plan``, ``reliability``, ``facility`` and ``storage``
(preset ``search``: the scenario's own GPU count, what ``wanka search`` ranks first), and
:func:`wanka.service.choose_strategy` (``compare``, ``claims``, the pages and the API, with the
preset they name). The search itself is :func:`wanka.planner.presets.search_preset` (cached).

>>> from wanka.spec import load_scenario
>>> sc, chosen = with_strategy(load_scenario("traditional-512-a100"))
>>> chosen, sc.parallel is not None
(False, True)
"""

from __future__ import annotations

from wanka.errors import InfeasibleError
from wanka.planner.presets import search_preset
from wanka.planner.search import SearchResult, candidate_scenario
from wanka.spec import Scenario

__all__ = ["DEFAULT_PRESET", "STRATEGY_FROM_SEARCH", "pick_strategy", "with_strategy"]

STRATEGY_FROM_SEARCH = "wanka search (fastest)"
DEFAULT_PRESET = "search"  # the scenario's own GPU count, every strategy (= `wanka search`)


def pick_strategy(scenario: Scenario, preset: str = DEFAULT_PRESET) -> tuple[Scenario, SearchResult]:
    """``scenario`` running the fastest strategy of ``preset``'s search, and the search result.

    No feasible strategy is an InfeasibleError that says what the search rejected and why.
    """
    res = search_preset(scenario, preset)
    if not res.top:
        reasons = ", ".join(f"{k} ({v:,})" for k, v in res.rejected.items()) or "nothing to try"
        raise InfeasibleError(
            f"no parallel strategy for {scenario.model.name if scenario.model else 'the job'} fits on "
            f"{scenario.cluster.name} ({scenario.cluster.accelerators:,} × {scenario.cluster.accelerator}; "
            f"GPU counts tried {', '.join(f'{g:,}' for g in res.gpus)}): {reasons}; see `wanka search`"
        )
    return candidate_scenario(scenario, res.top[0]), res


def with_strategy(scenario: Scenario, preset: str = DEFAULT_PRESET) -> tuple[Scenario, bool]:
    """``scenario`` with a parallel strategy, and whether it was chosen here.

    A scenario with a ``parallel:`` block keeps it. One with a model and a training job but no
    strategy gets the fastest strategy of ``preset`` (:func:`pick_strategy`); a scenario without a
    training job is returned as it is.
    """
    if scenario.parallel is not None or scenario.model is None or scenario.training is None:
        return scenario, False
    return pick_strategy(scenario, preset)[0], True
