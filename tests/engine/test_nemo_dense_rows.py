"""The NeMo dense extra-run rows against their own provenance, and the causal attention-length curve.

benchmarks/extra_runs/nemo_perf_tables.yaml is never fitted; its dense Megatron-Bridge rows carry the
CUDA-graph switch of their release's recipe (scripts/performance/configs at the release tag). The
attention kernel's length factor L/(L + L_half) is built from the causal FlashAttention-3 / cuDNN
sweep (Shah et al. 2024, Fig. 5): the checks below are consistency checks against that data.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from wanka.calibration import default_calibration
from wanka.engine import estimate_step
from wanka.spec import parse_scenario
from wanka.validate.cases import case_scenario, load_cases

_NEMO = Path(__file__).resolve().parents[2] / "benchmarks" / "extra_runs" / "nemo_perf_tables.yaml"


def _dense_rows() -> list:  # type: ignore[type-arg]
    cases, _ = load_cases(_NEMO)
    return [c for c in cases if c.raw["model"].get("moe") is None]


def test_dense_rows_cuda_graph_switch_is_consistent_with_its_source() -> None:
    """Consistency check: a dense row that states CUDA graphs names the recipe (and tag) it read them
    from, and claims them exactly where that recipe captures graphs (local / full_iteration)."""
    stated = [c for c in _dense_rows() if c.raw.get("software", {}).get("switches_source")]
    assert len(stated) >= 50  # every Megatron-Bridge dense row of 25.09 ... 26.06
    for c in stated:
        sw = c.raw["software"]
        src = sw["switches_source"]
        assert "Megatron-Bridge @v0." in src, c.id
        assert sw["cuda_graphs"] == ("full_iteration" in src or "cuda_graphs true" in src), c.id


def test_dense_row_switch_reaches_the_estimate() -> None:
    """The row's switch overrides the software table (which turns graphs on for every 26.x release):
    a 26.x dense preset without graphs pays the per-layer launch cost."""
    row = next(c for c in _dense_rows() if c.id == "nemo2604_llama3_70b_h100_fp8cs_64g")
    assert row.raw["software"]["cuda_graphs"] is False
    sc, _ = case_scenario(row)
    eager = estimate_step(sc, require_fit=False)
    graphed = estimate_step(
        sc.model_copy(update={"parallel": sc.parallel.model_copy(update={"cuda_graphs": True})}), require_fit=False
    )
    assert eager.breakdown["compute"] > graphed.breakdown["compute"]


def test_corrected_row_takes_the_recipe_layout() -> None:
    """26.02.01 GB300 MXFP8 Llama3 70B: the table's MBS 2 / VP n/a contradicts the release recipe
    (PP 4, VP 5, MBS 1); the row keeps the recipe's layout and says why."""
    row = next(c for c in _dense_rows() if c.id == "nemo260201_llama3_70b_gb300_fp8mx_64g")
    assert (row.raw["parallelism"]["pp"], row.raw["parallelism"]["vpp"], row.raw["batch"]["micro_batch"]) == (4, 5, 1)
    assert "GB300_FP8_MX_V2" in row.raw["notes"]


def _attn_scenario(seq: int) -> object:
    # the same tokens per micro-batch at every length (as the kernel sweep keeps B*S = 16k)
    return parse_scenario(
        {
            "name": f"attn-{seq}",
            "cluster": {"accelerator": "H100", "nodes": 1},
            "model": "llama3-8b",
            "training": {"global_batch_seqs": 8 * 16384 // seq, "micro_batch": 16384 // seq, "seq_len": seq},
            "parallel": {"tp": 1, "pp": 1, "dp": 8},
        }
    )


def _attn_rate(seq: int, cal: object) -> float:
    """Attention FLOPs per second of attention time, from the engine's compute with and without the
    attention core (attn_efficiency -> a huge value makes it free)."""
    sc = _attn_scenario(seq)
    with_attn = estimate_step(sc, require_fit=False, cal=cal).breakdown["compute"]  # type: ignore[arg-type]
    free = replace(cal, attn_efficiency=1e9)  # type: ignore[type-var]
    without = estimate_step(sc, require_fit=False, cal=free).breakdown["compute"]
    return float(seq) / (with_attn - without)  # causal attention FLOPs per token grow with seq


@pytest.mark.parametrize(("short", "lo", "hi"), [(512, 0.44, 0.62), (2048, 0.80, 0.92)])
def test_causal_attention_reaches_the_measured_share_of_its_long_sequence_rate(
    short: int, lo: float, hi: float
) -> None:
    """Consistency check against the causal sweep the constant was built from: at 512 keys the two
    H100 kernels reach 0.47 (FlashAttention-3) and 0.58 (cuDNN) of their 16k rate, at 2k 0.85 and 0.90;
    the non-causal curve (L_half ~ 230) would give 0.69 and 0.91."""
    cal = default_calibration()
    ratio = _attn_rate(short, cal) / _attn_rate(16384, cal)
    assert lo <= ratio <= hi
    noncausal = replace(cal, attn_half_len_tokens=230.0)
    if short == 512:  # the non-causal half-length misses the causal short-sequence loss
        assert _attn_rate(short, noncausal) / _attn_rate(16384, noncausal) > hi
