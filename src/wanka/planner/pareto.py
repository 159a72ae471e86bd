"""Pareto fronts of two objectives, both minimised (time vs GPUs, time vs cost)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["ParetoPoint", "pareto_front"]


@dataclass(frozen=True)
class ParetoPoint:
    """A non-dominated point: its two objective values and the item (a strategy dict) behind it."""

    x: float
    y: float
    item: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"x": self.x, "y": self.y, "strategy": dict(self.item)}


def pareto_front(points: Iterable[tuple[float, float, dict[str, Any]]]) -> tuple[ParetoPoint, ...]:
    """Points no other point beats on both ``x`` and ``y`` (lower is better), sorted by ``x``.

    >>> [(p.x, p.y) for p in pareto_front([(1, 5, {}), (2, 3, {}), (3, 4, {}), (4, 1, {})])]
    [(1.0, 5.0), (2.0, 3.0), (4.0, 1.0)]
    """
    pts = sorted(((float(x), float(y), item) for x, y, item in points), key=lambda p: (p[0], p[1]))
    out: list[ParetoPoint] = []
    best_y = float("inf")
    for x, y, item in pts:
        if y < best_y:
            if out and out[-1].x == x:  # same x, lower y: replaces (cannot happen after the sort)
                out.pop()
            out.append(ParetoPoint(x, y, item))
            best_y = y
    return tuple(out)
