from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wanka.ops import straggler_effect


def test_expected_max_matches_sampling() -> None:
    n, f, s = 256, 0.004, 1.8
    rng = np.random.default_rng(7)
    slow = rng.random((20000, n)) < f
    sampled = np.where(slow, s, 1.0).max(axis=1).mean()  # the step waits for its slowest node
    e = straggler_effect(nodes=n, fraction=f, slowdown=s, evict=False)
    assert e.factor == pytest.approx(sampled, abs=0.01)
    assert e.factor == pytest.approx(1 + 0.8 * (1 - (1 - f) ** n), rel=1e-12)


def test_eviction_with_spares() -> None:
    e = straggler_effect(nodes=2048, fraction=0.001, slowdown=1.5, evict=True, spares=16)
    assert e.factor == pytest.approx(1.0, abs=1e-6)
    none = straggler_effect(nodes=2048, fraction=0.001, slowdown=1.5, evict=True, spares=0)
    assert none.factor == pytest.approx(straggler_effect(nodes=2048, fraction=0.001, slowdown=1.5, evict=False).factor)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 5000), f=st.floats(0, 0.2), g=st.floats(0, 0.2), s=st.floats(1, 5), c=st.integers(0, 50))
def test_monotone_in_fraction(n: int, f: float, g: float, s: float, c: int) -> None:
    lo, hi = sorted((f, g))
    for evict in (False, True):
        a = straggler_effect(nodes=n, fraction=lo, slowdown=s, evict=evict, spares=c).factor
        b = straggler_effect(nodes=n, fraction=hi, slowdown=s, evict=evict, spares=c).factor
        assert 1.0 <= a <= b + 1e-9 <= s + 1e-9
