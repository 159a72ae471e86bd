"""Tensor-parallel traffic under FP8: Transformer Engine quantizes a sequence-parallel all-gather's
input before it gathers (the norm writes FP8, ``gather_along_first_dim(..., quantizer=...)``; every
userbuffers all-gather buffer is FP8), so the gathers move one byte per element while the
reduce-scatters carry the GEMMs' BF16 outputs."""

from __future__ import annotations

import pytest

from wanka.engine import estimate_step, make_context
from wanka.engine.core import gathered_cast_bytes, tp_gather_bytes_per_element
from wanka.spec import Scenario, parse_scenario


def _scenario(precision: str, recipe: str | None = None, *, sp: bool = True, overlap: bool = False) -> Scenario:
    training: dict[str, object] = {"global_batch_seqs": 256, "micro_batch": 1, "seq_len": 8192}
    training["precision"] = precision
    if recipe is not None:
        training["precision_recipe"] = recipe
    return parse_scenario(
        {
            "name": "tp-fp8",
            "cluster": {"accelerator": "H100", "nodes": 16},
            "model": "llama3-70b",
            "training": training,
            "parallel": {"tp": 8, "pp": 4, "dp": 4, "vpp": 5, "sp": sp, "tp_comm_overlap": overlap},
        }
    )


@pytest.mark.parametrize(
    ("precision", "recipe", "expected"),
    [
        ("bf16", None, 2.0),
        ("fp8", "fp8_current_scaling", 1.0),
        ("fp8", "fp8_delayed_scaling", 1.0),
        ("fp8", "mxfp8", 1.0 + 1.0 / 32.0),  # one E8M0 scale per 32 elements
        ("fp8", "fp8_blockwise", 1.0 + 4.0 / 128.0),  # one fp32 scale per 1x128 tile
    ],
)
def test_gathered_bytes_per_element_follow_the_recipe(precision: str, recipe: str | None, expected: float) -> None:
    assert tp_gather_bytes_per_element(make_context(_scenario(precision, recipe))) == pytest.approx(expected)


# per element, forward: 2 gathers + 2 scatters; backward: the same plus the 2 re-gathers of the
# column-parallel inputs (sp_regather). FP8 gathers move 1 byte, BF16 everything 2:
# (2 + 4 + 2 + 4 + 2) / (4 + 4 + 4 + 4 + 4)
_FP8_SHARE = 14.0 / 20.0


def test_fp8_sequence_parallel_traffic_is_seven_tenths_of_bf16() -> None:
    bf16 = estimate_step(_scenario("bf16"), require_fit=False)
    fp8 = estimate_step(_scenario("fp8", "fp8_current_scaling"), require_fit=False)
    assert fp8.traffic_bytes["tp"] == pytest.approx(_FP8_SHARE * bf16.traffic_bytes["tp"], rel=1e-9)
    # without overlap every collective is exposed: the gathers take less time, the scatters the same
    assert 0.5 * bf16.breakdown["tp_comm"] < fp8.breakdown["tp_comm"] < 0.9 * bf16.breakdown["tp_comm"]


def test_all_reduces_without_sequence_parallel_stay_at_activation_bytes() -> None:
    # without sequence parallelism the layers all-reduce their BF16 outputs: FP8 changes nothing
    bf16 = estimate_step(_scenario("bf16", sp=False), require_fit=False)
    fp8 = estimate_step(_scenario("fp8", "fp8_current_scaling", sp=False), require_fit=False)
    assert fp8.traffic_bytes["tp"] == pytest.approx(bf16.traffic_bytes["tp"], rel=1e-9)
    assert fp8.breakdown["tp_comm"] == pytest.approx(bf16.breakdown["tp_comm"], rel=1e-9)


@pytest.mark.parametrize("recipe", ["fp8_current_scaling", "mxfp8"])
def test_gathered_operands_are_quantized_on_the_local_shard(recipe: str) -> None:
    ctx = make_context(_scenario("fp8", recipe))
    per = ctx.cal.fp8_cast_bytes_per_element
    elems = 4096.0 * 8192.0
    # no gather: the whole operand, row- and column-wise copies
    assert float(gathered_cast_bytes(ctx, elems, 1.0)) == pytest.approx(per * elems)
    sharded = float(gathered_cast_bytes(ctx, elems, 8.0))
    if recipe == "mxfp8":  # both copies quantized on the shard and gathered
        assert sharded == pytest.approx(per * elems / 8.0)
    else:  # row-wise on the shard (read bf16, write fp8), the transpose of the gathered tensor after
        assert sharded == pytest.approx(3.0 * elems / 8.0 + 2.0 * elems)
    assert sharded < per * elems


def test_fp8_casts_shrink_with_sequence_parallel_tp() -> None:
    # the same job at tp 8 with and without sequence parallelism: quantizing before the gather
    # moves fewer bytes through HBM, so the FP8 step computes faster with SP (same GEMMs)
    with_sp = estimate_step(_scenario("fp8", "fp8_current_scaling", sp=True), require_fit=False)
    without = estimate_step(_scenario("fp8", "fp8_current_scaling", sp=False), require_fit=False)
    assert with_sp.breakdown["compute"] < without.breakdown["compute"]


def test_a_stack_without_the_quantized_gather_moves_bf16_and_casts_the_whole_operand() -> None:
    # sp_gather_fp8 false (a stack that is not Transformer Engine): the gathers carry BF16 like the
    # scatters, so FP8 moves as many TP bytes as BF16, and each gathered operand is quantized whole
    sc = _scenario("fp8", "fp8_current_scaling")
    off = sc.model_copy(update={"parallel": sc.parallel.model_copy(update={"sp_gather_fp8": False})})
    bf16 = estimate_step(_scenario("bf16"), require_fit=False)
    fp8_te, fp8_plain = estimate_step(sc, require_fit=False), estimate_step(off, require_fit=False)
    assert fp8_plain.traffic_bytes["tp"] == pytest.approx(bf16.traffic_bytes["tp"], rel=1e-9)
    assert fp8_te.traffic_bytes["tp"] == pytest.approx(_FP8_SHARE * fp8_plain.traffic_bytes["tp"], rel=1e-9)
    assert fp8_plain.breakdown["tp_comm"] > fp8_te.breakdown["tp_comm"]
    assert fp8_plain.step_time_s > fp8_te.step_time_s


def test_hai_llm_gathers_in_bf16_and_megatron_stacks_in_fp8() -> None:
    # the software table: the quantize-before-gather is Transformer Engine's; DeepSeek's HAI-LLM
    # publishes no TP, so it is assumed BF16 there (stated in the rule's source)
    from wanka.catalog.software import software_switches

    assert software_switches("HAI-LLM", None).switches["sp_gather_fp8"] is False
    assert software_switches("NeMo", "25.09").switches["sp_gather_fp8"] is True
