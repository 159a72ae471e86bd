"""The software table is a fact of frameworks: releases compare as versions, rules match on name and release."""

from __future__ import annotations

import pytest

from wanka.catalog.software import DEFAULTS, release_version, software_rules, software_switches
from wanka.errors import SpecError
from wanka.spec import ParallelSpec


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("2024", "25.11"),  # a year is a calendar version: 2024 < 2025-11 (a tuple compare says 2024 > 25)
        ("2022", "2024-06"),
        ("25.11", "26.02"),
        ("26.04", "26.04.01"),
        ("25.02", "2025-06"),
        ("0.8", "0.16"),  # PEP 440: 0.16 > 0.8 (a float compare says the opposite)
        ("1.2.0rc1", "1.2.0"),
    ],
)
def test_releases_compare_as_versions(older: str, newer: str) -> None:
    (s1, v1), (s2, v2) = release_version(older), release_version(newer)
    assert s1 == s2 and v1 < v2


def test_yy_mm_tags_and_years_are_calendar_versions() -> None:
    assert release_version("25.11") == ("calendar", release_version("2025-11")[1])
    assert release_version("2021")[0] == "calendar"
    assert release_version("0.8")[0] == "pep440"
    assert release_version("25.13")[0] == "pep440"  # no 13th month: a plain version, not a date


def test_bad_release_names_the_field() -> None:
    with pytest.raises(SpecError, match=r"software\.release"):
        release_version("next tuesday")


def test_nemo_year_release_is_older_than_the_cuda_graph_cutoff() -> None:
    # "2024" used to parse as newer than "25.11" and switch on the 26.x rule's CUDA graphs
    assert not software_switches("NeMo", "2024").switches["cuda_graphs"]
    assert not software_switches("NeMo / Megatron-Bridge", "25.11").switches["cuda_graphs"]
    assert software_switches("NeMo / Megatron-Bridge", "26.02").switches["cuda_graphs"]
    assert software_switches("NeMo", None).switches["cuda_graphs"]  # no release: the newest


def test_rules_by_framework_and_release() -> None:
    base = software_switches("Megatron-LM (MegaScale baseline)", "2023").switches
    assert not base["tp_comm_overlap"] and not base["dp_comm_overlap"]
    assert software_switches("MegaScale", "2024").switches["tp_comm_overlap"]
    assert not software_switches("Megatron-LM", "2021").switches["flash_attention"]
    assert software_switches("Megatron-LM", "2024").switches["flash_attention"]  # past the 2022 bound
    neox = software_switches("GPT-NeoX", "2022").switches
    assert not neox["pp_comm_overlap"] and not neox["pp_scatter_gather"]
    assert software_switches("torchtitan", "2024").switches["attention_kernel"] == "fa2"
    # AI2's OLMo trainer calls the flash-attn 2 package and runs FSDP alone (no TP to overlap)
    olmo = software_switches("OLMo (PyTorch FSDP)", "2024").switches
    assert olmo["attention_kernel"] == "fa2" and not olmo["tp_comm_overlap"] and olmo["dp_comm_overlap"]
    assert software_switches("some new framework", "1.0").switches == DEFAULTS  # catch-all


def test_a_bound_in_another_scheme_does_not_apply() -> None:
    # Megatron-LM's rule is bounded by the year 2022; a PEP 440 release cannot be ordered against it
    assert software_switches("Megatron-LM", "0.8").switches["flash_attention"]


def test_every_rule_has_a_source_and_defaults_match_parallel_spec() -> None:
    assert all(len(r.source) > 20 for r in software_rules())
    p = ParallelSpec()
    assert {k: getattr(p, k) for k in DEFAULTS} == DEFAULTS
