"""Stragglers: a synchronous step waits for its slowest rank.

Slow-node distribution: each of the job's ``n`` nodes is independently slow with probability ``f``
(``failures.straggler_fraction``), running ``s`` times slower (``straggler_slowdown``); otherwise it
runs at nominal speed. The step time of a synchronous job is the max over its nodes, so

    E[step factor] = 1 + (s − 1) · P(at least one slow node) = 1 + (s − 1) · (1 − (1 − f)^n)

(the expected maximum of the two-point distribution; MegaScale, NSDI'24 §5, and Llama 3 §3.3.4
report that one slow rank slows the whole job). With slow-node detection and eviction
(``evict_stragglers``), slow nodes found by per-rank step-time telemetry are swapped for spare nodes
at the next restart; the job stays slow only when there are more slow nodes ``K ~ Bin(n, f)`` than
spares ``c``: ``1 + (s − 1) · P(K > c)``.

>>> round(straggler_effect(nodes=2048, fraction=0.001, slowdown=1.5, evict=False).factor, 3)
1.436
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from wanka.spec import Scenario

__all__ = ["StragglerEffect", "straggler_effect", "straggler_effect_for"]


@dataclass(frozen=True)
class StragglerEffect:
    """Expected step-time factor (≥ 1) of the job from slow nodes."""

    factor: float
    p_any_slow: float  # probability that at least one node is slow
    expected_slow_nodes: float
    p_slow_after_eviction: float  # probability that slow nodes outnumber the spares (1 without eviction)
    evict: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _binom_sf(n: int, p: float, c: int) -> float:
    """P(K > c) for K ~ Binomial(n, p), summed in log space (exact, no scipy)."""
    if c >= n or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    lp, lq = math.log(p), math.log1p(-p)
    lg = math.lgamma(n + 1)
    cdf = sum(math.exp(lg - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * lp + (n - k) * lq) for k in range(c + 1))
    return min(1.0, max(0.0, 1.0 - cdf))


def straggler_effect(*, nodes: int, fraction: float, slowdown: float, evict: bool, spares: int = 0) -> StragglerEffect:
    """The expected max-over-nodes slowdown of a synchronous step (module docstring)."""
    p_any = 1.0 - (1.0 - fraction) ** nodes
    p_after = _binom_sf(nodes, fraction, spares) if evict else p_any
    return StragglerEffect(
        factor=1.0 + (slowdown - 1.0) * p_after,
        p_any_slow=p_any,
        expected_slow_nodes=nodes * fraction,
        p_slow_after_eviction=p_after,
        evict=evict,
    )


def straggler_effect_for(scenario: Scenario, *, nodes: int, spares: int) -> StragglerEffect:
    """:func:`straggler_effect` with the scenario's ``failures`` settings."""
    f = scenario.failures
    return straggler_effect(
        nodes=nodes,
        fraction=f.straggler_fraction,
        slowdown=f.straggler_slowdown,
        evict=f.evict_stragglers,
        spares=spares,
    )
