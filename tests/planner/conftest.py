"""Planner test fixtures: the `ray` marker and one warm local executor shared by the session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from wanka.planner import LocalExecutor


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ray: starts a real Ray head on 127.0.0.1 (needs the ray package)")


@pytest.fixture(scope="session")
def executor() -> Iterator[LocalExecutor]:
    ex = LocalExecutor(2)
    yield ex
    ex.close()
