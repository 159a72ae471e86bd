"""Same-die Blackwell parts in the engine: GB200 against B200 on NVIDIA's identical Llama 3 8B recipe.

The NeMo performance tables run the same 8-GPU Llama 3 8B FP8 recipe on B200 and GB200 and show GB200
1-4.5% faster per GPU; the datasheet BF16/FP8 peaks differ by 11% (2.5 vs 2.25 PF). The catalog carries
each part's measured GEMM share, so the estimate follows the measured GEMM ratio (1,822 / 1,745 TFLOPS:
152 SMs at up to 2,062 MHz against 148 at 1,965), not the datasheet ratio.
"""

from __future__ import annotations

from pathlib import Path

from wanka.engine import estimate_step
from wanka.validate.cases import case_scenario, load_cases

_NEMO = Path(__file__).resolve().parents[2] / "benchmarks" / "extra_runs" / "nemo_perf_tables.yaml"


def _step_on(accelerator_name: str) -> float:
    cases, _ = load_cases(_NEMO)
    row = next(c for c in cases if c.id == "nemo2509_llama3_8b_b200_fp8cs_8g")
    sc, _ = case_scenario(row)
    sc = sc.model_copy(update={"cluster": sc.cluster.model_copy(update={"accelerator": accelerator_name})})
    return float(estimate_step(sc, require_fit=False).step_time_s)


def test_gb200_is_faster_than_b200_by_its_clock_not_its_datasheet_peak() -> None:
    speedup = _step_on("B200") / _step_on("GB200")
    assert 1.0 < speedup < 1.06  # datasheet peaks alone would give ~1.11
