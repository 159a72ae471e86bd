"""`search(cal=...)`: the whole ranking (candidates and the scenario's own layout) runs under the
calibration given, so a sensitivity can be read off side by side with the shipped one."""

from __future__ import annotations

import dataclasses

from wanka.calibration import default_calibration
from wanka.planner import search
from wanka.spec import load_scenario


def _llama405():  # type: ignore[no-untyped-def]
    sc = load_scenario("llama3-405b-16k-h100-54d")
    assert sc.parallel is not None and sc.parallel.tp > 1 and sc.parallel.tp_comm_overlap
    return sc


def test_search_with_the_shipped_calibration_is_the_default_search() -> None:
    sc = _llama405()
    a, b = search(sc, top=3), search(sc, top=3, cal=default_calibration())
    assert [c.step_time_s for c in a.top] == [c.step_time_s for c in b.top]
    assert a.baseline is not None and b.baseline is not None
    assert a.baseline.candidate.step_time_s == b.baseline.candidate.step_time_s
    assert a.baseline.rank == b.baseline.rank


def test_search_runs_candidates_and_baseline_under_the_calibration_given() -> None:
    sc = _llama405()
    shipped = default_calibration()
    assert shipped.tp_overlap_efficiency < 1.0
    more = dataclasses.replace(shipped, tp_overlap_efficiency=1.0)  # TP-comm overlap hides all it can
    a, b = search(sc, top=3), search(sc, top=3, cal=more)
    assert a.baseline is not None and b.baseline is not None
    # the scenario's own TP8 layout: less exposed TP communication, a shorter step; nothing else moves
    ta, tb = a.baseline.candidate.breakdown_s, b.baseline.candidate.breakdown_s
    assert tb["tp_comm"] < ta["tp_comm"]
    assert tb["compute"] == ta["compute"]
    assert b.baseline.candidate.step_time_s < a.baseline.candidate.step_time_s
    # and the candidates: the best under more overlap is at least as fast as the shipped best
    assert b.best.step_time_s <= a.best.step_time_s * (1 + 1e-12)
