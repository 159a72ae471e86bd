"""A validation case may state the accelerator power limit and the context-parallel attention its source
ran with; they reach the scenario (and slow the step / change the CP exposure), and a bad value is a clear
error naming the field."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from wanka.engine import estimate_step
from wanka.errors import SpecError
from wanka.spec import Scenario

_CASE = """schema: wanka-validation/1
cases:
- id: hw_case
  kind: steady_state
  model: {{type: dense, n_layers: 8, hidden: 4096, n_heads: 32, n_kv_heads: 8, ffn_hidden: 14336, vocab: 128256,
    seq_len: 65536}}
  hardware: {{gpu: H100-SXM5-96GB-HBM2e, count: 16, gpus_per_node: 8, nic_gbps_per_gpu: 400{hw}}}
  parallelism: {{tp: 1, pp: 1, dp: 4, cp: 4, zero: 3, recompute: full{par}}}
  batch: {{global_batch_seqs: 4, micro_batch: 1}}
  precision: bf16
  truth: {{tokens_per_s_per_gpu: 1000}}
  software: {{framework: torchtitan, release: "2024"}}
"""


Build = Callable[[str], Scenario]  # the scenario_of_case fixture (tests/conftest.py)


def _scenario(build: Build, hw: str = "", par: str = "") -> Scenario:
    return build(_CASE.format(hw=hw, par=par))


def test_power_limit_and_cp_type_reach_the_scenario(scenario_of_case: Build) -> None:
    plain = _scenario(scenario_of_case)
    assert plain.cluster.power_limit_w is None and plain.parallel.cp_comm_type == "p2p"
    sc = _scenario(scenario_of_case, hw=", power_limit_w: 500", par=", cp_comm_type: all_gather")
    assert sc.cluster.power_limit_w == 500
    assert sc.parallel.cp_comm_type == "all_gather"
    a, b = estimate_step(plain, require_fit=False), estimate_step(sc, require_fit=False)
    assert b.breakdown["compute"] > a.breakdown["compute"]
    assert b.breakdown["cp_comm"] != a.breakdown["cp_comm"]


@pytest.mark.parametrize(
    ("hw", "par", "field"), [(", power_limit_w: -5", "", "power_limit_w"), ("", ", cp_comm_type: ring", "cp_comm_type")]
)
def test_bad_values_name_the_field(scenario_of_case: Build, hw: str, par: str, field: str) -> None:
    with pytest.raises(SpecError, match=field):
        _scenario(scenario_of_case, hw=hw, par=par)
