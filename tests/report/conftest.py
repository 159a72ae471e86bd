from __future__ import annotations

from pathlib import Path

import pytest

from wanka.report import Comparison, compare
from wanka.spec import load_scenario


@pytest.fixture(scope="session")
def flagship() -> Comparison:
    """The flagship comparison with few replicas (the numbers here are checked for structure and arithmetic)."""
    return compare([load_scenario("traditional-512-a100"), load_scenario("meta-24k-h100-roce")], replicas=40)


@pytest.fixture(scope="session")
def article() -> str | None:
    for p in (
        Path(__file__).resolve().parents[3] / "shared" / "seed" / "wanka-cluster-article.zh.txt",
        Path("/work/shared/seed/wanka-cluster-article.zh.txt"),
    ):
        if p.exists():
            return p.read_text(encoding="utf-8")
    return None
