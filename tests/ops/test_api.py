from __future__ import annotations

import wanka.ops as ops


def test_all_is_sorted_and_importable() -> None:
    assert list(ops.__all__) == sorted(ops.__all__)
    assert len(set(ops.__all__)) == len(ops.__all__)
    for name in ops.__all__:
        assert getattr(ops, name) is not None, name
