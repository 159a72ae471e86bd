"""A scenario's `software:` block: framework + release resolve the switches from the catalog."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from wanka.spec import Scenario, SoftwareSpec, load_scenario


def _data(**extra: object) -> dict:  # type: ignore[type-arg]
    sc = load_scenario("traditional-512-a100")
    d = sc.model_dump(mode="json", exclude_unset=True)
    d.update(extra)
    return d


def test_software_sets_the_parallel_switches() -> None:
    sc = Scenario.model_validate(_data(software={"framework": "Megatron-LM", "release": "2021"}))
    assert sc.parallel is not None
    assert not sc.parallel.flash_attention and not sc.parallel.tp_comm_overlap and not sc.parallel.dp_comm_overlap
    assert sc.software is not None and "Megatron-LM" in sc.software.source


def test_explicit_switch_overrides_the_catalog() -> None:
    sc = Scenario.model_validate(
        _data(software={"framework": "Megatron-LM", "release": "2021", "flash_attention": True})
    )
    assert sc.parallel is not None and sc.parallel.flash_attention and not sc.parallel.tp_comm_overlap


def test_a_switch_given_in_parallel_wins_and_a_contradiction_is_an_error() -> None:
    d = _data(software={"framework": "Megatron-LM", "release": "2021"})
    d["parallel"] = {**d["parallel"], "tp_comm_overlap": True}
    sc = Scenario.model_validate(d)
    assert sc.parallel is not None and sc.parallel.tp_comm_overlap and not sc.parallel.flash_attention
    d["software"] = {**d["software"], "tp_comm_overlap": False}
    with pytest.raises(ValidationError, match="disagree"):
        Scenario.model_validate(d)


def test_release_must_be_a_release() -> None:
    with pytest.raises(ValidationError, match="release"):
        SoftwareSpec(framework="NeMo", release="the latest one")


def test_round_trip_keeps_the_switches() -> None:
    sc = Scenario.model_validate(_data(software={"framework": "GPT-NeoX", "release": "2022"}))
    again = Scenario.model_validate(sc.model_dump(mode="json", exclude_unset=True))
    assert again.parallel == sc.parallel and again.software == sc.software


def test_a_release_yaml_read_as_a_number_asks_for_quotes() -> None:
    with pytest.raises(ValidationError, match="quoted string"):
        SoftwareSpec.model_validate({"framework": "NeMo", "release": 25.1})
