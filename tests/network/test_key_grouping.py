"""The flow model's sort-free grouping (``routing.sum_by`` / ``dense_ids``, issue 15's 131k-GPU flow cost)
returns exactly what ``np.unique`` does, on both of its paths."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from wanka.network.routing import dense_ids, sum_by

keys_st = st.lists(st.integers(0, 5_000), min_size=1, max_size=300)


@given(keys_st, st.booleans())
def test_sum_by_matches_unique(keys: list[int], weighted: bool) -> None:
    k = np.asarray(keys, dtype=np.int64)
    w = (np.arange(k.size) % 7).astype(float) if weighted else None  # zero weights keep their key
    u, inv = np.unique(k, return_inverse=True)
    want = np.bincount(inv, weights=w)
    for span in (None, 5_001, 1 << 30):  # the sort, the bincount, a span too wide for a bincount
        got_k, got_w = sum_by(k, w, span)
        assert got_k.tolist() == u.tolist()
        assert np.array_equal(got_w, want)


@given(keys_st)
def test_dense_ids_matches_unique(keys: list[int]) -> None:
    k = np.asarray(keys, dtype=np.int64)
    u, inv = np.unique(k, return_inverse=True)
    got_u, got_inv = dense_ids(k, 5_001)
    assert got_u.tolist() == u.tolist()
    assert got_inv.tolist() == inv.ravel().tolist()
