"""The non-NVIDIA training stacks in the software table (issue 18): each resolves to the switches its own
scripts and configs set, with a source naming them."""

from __future__ import annotations

import pytest

from wanka.catalog.software import software_switches


@pytest.mark.parametrize(
    "framework", ["ModelLink/MindSpeed-LLM", "MindSpeed-LLM", "MindSpeed", "MT-MegatronLM", "Megatron-LM-MUSA"]
)
def test_megatron_ports_without_default_overlap(framework: str) -> None:
    """ModelLink / MindSpeed-LLM and the MUSA Megatron port keep Megatron's opt-in overlaps off by default and
    block on pipeline send/recv (Megatron-Core overlap_p2p_comm defaults to False)."""
    r = software_switches(framework, "2024-06")
    assert r.switches["tp_comm_overlap"] is False
    assert r.switches["dp_comm_overlap"] is False
    assert r.switches["pp_comm_overlap"] is False
    assert r.switches["flash_attention"] is True
    assert "overlap_p2p_comm" in r.source


def test_modellink_rule_names_the_opt_in_flags() -> None:
    src = software_switches("ModelLink", "2024-06").source
    assert "--use-mc2" in src and "--overlap-grad-reduce" in src and "9462cce3" in src


def test_primus_overlaps_gradients_and_pipeline_but_not_tp() -> None:
    r = software_switches("Primus-Megatron", "2025")
    assert r.switches["dp_comm_overlap"] and r.switches["pp_comm_overlap"]
    assert r.switches["tp_comm_overlap"] is False
    assert r.switches["ep_dispatch"] == "alltoall"
    assert "AMD-AGI/Primus" in r.source


def test_vendor_rules_do_not_capture_nvidia_stacks() -> None:
    """The new substrings must not match the NVIDIA frameworks' names (first match wins)."""
    for fw in ("Megatron-Core", "NeMo", "torchtitan", "Megatron-LM"):
        src = software_switches(fw, "0.8" if fw == "Megatron-Core" else None).source
        assert not any(v in src for v in ("Ascend", "Primus", "Moore Threads")), fw
