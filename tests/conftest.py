"""Fixtures shared across test packages."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from wanka.spec import Scenario
from wanka.validate.cases import case_scenario, load_cases


@pytest.fixture
def scenario_of_case(tmp_path: Path) -> Callable[[str], Scenario]:
    """The scenario the validator builds for the first case of a ``wanka-validation/1`` text. The text
    is written to a file and loaded from there, through the same door as a user's validation file."""

    def build(text: str) -> Scenario:
        p = tmp_path / "cases.yaml"
        p.write_text(text, encoding="utf-8")
        cases, _ = load_cases(p)
        return case_scenario(cases[0])[0]

    return build
