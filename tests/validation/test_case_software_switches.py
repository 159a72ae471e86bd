"""A validation case may state the overlap switches its own launch script sets (ModelLink scripts differ by
model within one release); they override the software table, and a bad value is a clear error."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from wanka.errors import SpecError
from wanka.spec import Scenario

_CASE = """schema: wanka-validation/1
cases:
- id: sw_case
  kind: steady_state
  model: {{type: dense, n_layers: 8, hidden: 1024, n_heads: 8, ffn_hidden: 4096, vocab: 32000, seq_len: 2048}}
  hardware: {{gpu: Ascend-910B, count: 16, gpus_per_node: 8}}
  parallelism: {{tp: 8, pp: 1, dp: 2}}
  batch: {{global_batch_seqs: 64, micro_batch: 1}}
  precision: bf16
  truth: {{tokens_per_s_per_gpu: 1000}}
  software: {{framework: ModelLink/MindSpeed-LLM, release: "2024-06"{extra}}}
"""


Build = Callable[[str], Scenario]  # the scenario_of_case fixture (tests/conftest.py)


def _scenario(build: Build, extra: str) -> Scenario:
    return build(_CASE.format(extra=extra))


def test_table_switches_without_overrides(scenario_of_case: Build) -> None:
    sw = _scenario(scenario_of_case, "").software
    assert sw.switches()["tp_comm_overlap"] is False and sw.switches()["dp_comm_overlap"] is False


def test_script_switches_override_the_table(scenario_of_case: Build) -> None:
    sc = _scenario(scenario_of_case, ", tp_comm_overlap: true, dp_comm_overlap: true")
    assert sc.software.switches()["tp_comm_overlap"] is True
    assert sc.software.switches()["dp_comm_overlap"] is True
    assert sc.software.switches()["pp_comm_overlap"] is False  # still the table's


def test_bad_switch_value_is_a_clear_error(scenario_of_case: Build) -> None:
    with pytest.raises(SpecError, match="tp_comm_overlap"):
        _scenario(scenario_of_case, ", tp_comm_overlap: sometimes")
