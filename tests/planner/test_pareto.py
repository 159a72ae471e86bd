"""Pareto fronts: hand-checked example and the non-domination invariants."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as hs

from wanka.planner import pareto_front


def test_hand_example() -> None:
    pts = [(1, 9, {"a": 1}), (2, 4, {"a": 2}), (2, 5, {"a": 3}), (3, 4, {"a": 4}), (5, 1, {"a": 5})]
    front = pareto_front(pts)
    assert [(p.x, p.y) for p in front] == [(1, 9), (2, 4), (5, 1)]
    assert [p.item["a"] for p in front] == [1, 2, 5]


@given(hs.lists(hs.tuples(hs.integers(0, 50), hs.integers(0, 50)), min_size=1, max_size=40))
def test_front_is_non_dominated_and_covers_every_point(raw: list[tuple[int, int]]) -> None:
    front = pareto_front([(x, y, {}) for x, y in raw])
    for p in front:  # nobody beats a front point on both axes
        assert not any((x <= p.x and y <= p.y) and (x < p.x or y < p.y) for x, y in raw)
    for x, y in raw:  # every point is matched or beaten by a front point
        assert any(p.x <= x and p.y <= y for p in front)
