"""PyTorch's expandable segments and the allocator fragmentation margin of the memory line.

With PyTorch's default caching allocator a share ``allocator_fragmentation`` of the bytes allocated
and freed every step is held beyond them; with ``expandable_segments`` (free pages unmapped and mapped
again at the segment's end) only ``allocator_fragmentation_expandable`` is. Megatron-Bridge's
performance launcher sets the switch for Llama 3.1 405B FP8 on GB200 from v0.2.0 (NeMo 25.11) and for
every run from v0.5.0 (NeMo 26.06): NVIDIA's 405B layout without recompute fits only with it.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from wanka.calibration import default_calibration
from wanka.catalog.software import software_switches
from wanka.engine import estimate_step
from wanka.spec import ParallelSpec
from wanka.validate.cases import Case, case_scenario, load_cases

ROOT = Path(__file__).resolve().parents[2]
NEMO = ROOT / "benchmarks" / "extra_runs" / "nemo_perf_tables.yaml"
ROW = "nemo2511_llama31_405b_gb200_fp8cs_256g"


def _step(expandable: bool | None) -> Any:
    case = next(c for c in load_cases(NEMO)[0] if c.id == ROW)
    raw = copy.deepcopy(case.raw)
    raw["software"]["expandable_segments"] = expandable
    return estimate_step(case_scenario(Case(id=ROW, kind="steady_state", raw=raw))[0], require_fit=False)


def _total(m: Any) -> float:
    return float(m.weights + m.gradients + m.optimizer + m.activations + m.buffers)


def test_default_is_pytorchs_fixed_segments_and_nemo_2606_turns_them_on() -> None:
    assert ParallelSpec().expandable_segments is False
    assert software_switches("", None).switches["expandable_segments"] is False
    assert software_switches("NeMo / Megatron-Bridge", "26.04").switches["expandable_segments"] is False
    assert software_switches("NeMo / Megatron-Bridge", "26.06").switches["expandable_segments"] is True
    assert software_switches("NeMo / Megatron-Bridge", "26.06.01").switches["expandable_segments"] is True


def test_the_405b_row_carries_the_launchers_setting() -> None:
    raw = next(c.raw for c in load_cases(NEMO)[0] if c.id == ROW)
    assert raw["software"]["expandable_segments"] is True
    assert "perf_plugins.py" in raw["software"]["switches_source"]


def test_expandable_segments_shrink_the_margin_on_the_transient_bytes_only() -> None:
    cal = default_calibration()
    assert 0.0 < cal.allocator_fragmentation_expandable < cal.allocator_fragmentation
    fixed, expandable = _step(False), _step(True)
    mf, me = fixed.memory, expandable.memory
    # weights, gradients, optimizer states and the saved activations are the same bytes
    assert (mf.weights, mf.gradients, mf.optimizer, mf.activations) == (
        me.weights,
        me.gradients,
        me.optimizer,
        me.activations,
    )
    # the buffers differ by the margin difference on the transient bytes (activations here: no
    # ZeRO-3 or CP buffers in this layout)
    saved = (cal.allocator_fragmentation - cal.allocator_fragmentation_expandable) * mf.activations
    assert abs((mf.buffers - me.buffers) - saved) <= 1e-6 * saved
    # NVIDIA's layout without recompute: over the HBM with the default allocator, inside it with
    # expandable segments (as the run had it)
    assert _total(mf) > mf.capacity
    assert _total(me) <= me.capacity
    assert fixed.step_time_s == expandable.step_time_s  # the allocator costs no time in this model
