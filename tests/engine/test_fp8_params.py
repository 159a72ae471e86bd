"""FP8 parameters (``fp8_param_gather``) and Transformer Engine's FP8 weight caches (``fp8_weight_cache``).

With FP8 parameters Megatron-Core gathers each layer weight's FP8 data after the optimizer step (1 byte per
parameter instead of BF16's 2; under MXFP8 it gathers BF16 through the gradient buffer and quantizes after) and
the weight is its FP8 row-wise and column-wise copies with no BF16 copy. Without them Transformer Engine keeps
an FP8 copy of each BF16 weight across the step's micro-batches. The embedding and the output head stay BF16.
"""

from __future__ import annotations

import pytest

from wanka.catalog.software import software_switches
from wanka.engine import estimate_step, make_context
from wanka.planner.export import launch_args
from wanka.spec import Scenario, parse_scenario

H100 = "H100-SXM5-80GB"
DP = 8


def _scenario(acc: str, recipe: str | None, precision: str = "fp8", zero: int = 1, **switches: bool) -> Scenario:
    training: dict[str, object] = {"global_batch_seqs": 64, "micro_batch": 1, "seq_len": 8192, "precision": precision}
    if recipe is not None:
        training["precision_recipe"] = recipe
    return parse_scenario(
        {
            "name": "fp8-params",
            "cluster": {"accelerator": acc, "nodes": 1},
            "model": "llama3-8b",
            "training": training,
            "parallel": {"tp": 1, "pp": 1, "dp": DP, "zero": zero, **switches},
        }
    )


def _layer_params(sc: Scenario) -> float:
    """The layers' parameters (tp = pp = 1): all but the embedding, the output head and the final norm."""
    P = make_context(sc).params
    return float(P.total - P.embedding - P.output - sc.model.hidden)  # type: ignore[union-attr]


def _stage_params(sc: Scenario) -> float:
    """Every parameter the one stage holds as the engine counts it (the final norm's few left out)."""
    return float(make_context(sc).params.total - sc.model.hidden)  # type: ignore[union-attr]


def test_fp8_parameters_gather_one_byte_per_layer_weight() -> None:
    off = _scenario(H100, "fp8_current_scaling")
    on = _scenario(H100, "fp8_current_scaling", fp8_param_gather=True)
    r_off, r_on = estimate_step(off, require_fit=False), estimate_step(on, require_fit=False)
    # ZeRO-1: one all-gather per step over dp ranks, (dp-1)/dp of the bytes leave each rank; the layer
    # weights move 1 byte instead of 2, the embedding and the head still 2
    saved = _layer_params(off) * (DP - 1) / DP
    assert r_off.traffic_bytes["dp"] - r_on.traffic_bytes["dp"] == pytest.approx(saved, rel=1e-9)
    assert r_on.step_time_s < r_off.step_time_s


def test_mxfp8_parameters_gather_in_bf16() -> None:
    off = estimate_step(_scenario("B200", "mxfp8"), require_fit=False)
    on = estimate_step(_scenario("B200", "mxfp8", fp8_param_gather=True), require_fit=False)
    # Megatron-Core gathers MXFP8 parameters as BF16 through the gradient buffer, then quantizes
    assert on.traffic_bytes["dp"] == pytest.approx(off.traffic_bytes["dp"], rel=1e-12)


@pytest.mark.parametrize(
    ("acc", "recipe", "fp8_bytes"),
    [
        (H100, "fp8_current_scaling", 2.0),  # FP8 data + its transpose (Hopper FP8 GEMMs are TN only)
        ("B200", "fp8_current_scaling", 1.0),  # Blackwell reads the one copy in either layout
        ("B200", "mxfp8", 2.0 + 2.0 / 32.0),  # row-wise and column-wise data, an E8M0 scale per 32 each
    ],
)
def test_weight_memory_with_and_without_fp8_parameters(acc: str, recipe: str, fp8_bytes: float) -> None:
    bf16 = _scenario(acc, recipe, fp8_weight_cache=False)  # BF16 weights, each cast inside every forward
    cached = _scenario(acc, recipe)  # + Transformer Engine's FP8 weight workspaces
    params = _scenario(acc, recipe, fp8_param_gather=True)  # FP8 layer weights, no BF16 copy
    p_all, p_layers = _stage_params(bf16), _layer_params(bf16)
    w = {n: estimate_step(s, require_fit=False).memory.weights for n, s in (("b", bf16), ("c", cached), ("p", params))}
    assert w["b"] == pytest.approx(2.0 * p_all, rel=1e-9)
    assert w["c"] - w["b"] == pytest.approx(fp8_bytes * p_layers, rel=1e-6)
    assert w["p"] == pytest.approx(2.0 * (p_all - p_layers) + fp8_bytes * p_layers, rel=1e-6)


@pytest.mark.parametrize(("precision", "recipe"), [("bf16", None), ("fp4", None)])
def test_the_switches_leave_runs_without_fp8_weights_alone(precision: str, recipe: str | None) -> None:
    base = estimate_step(_scenario("B200", recipe, precision), require_fit=False)
    for sw in ({"fp8_param_gather": True}, {"fp8_weight_cache": False}):
        r = estimate_step(_scenario("B200", recipe, precision, **sw), require_fit=False)
        assert r.step_time_s == base.step_time_s
        assert r.memory.weights == base.memory.weights
        assert r.traffic_bytes["dp"] == base.traffic_bytes["dp"]


def test_zero3_shards_keep_their_weight_accounting() -> None:
    # consistency check: FSDP / ZeRO-3 weights are shards whose gathered copies are transient (z3_buf)
    off = estimate_step(_scenario(H100, "fp8_current_scaling", zero=3), require_fit=False)
    on = estimate_step(_scenario(H100, "fp8_current_scaling", zero=3, fp8_param_gather=True), require_fit=False)
    assert on.memory.weights == pytest.approx(off.memory.weights, rel=1e-12)
    assert on.traffic_bytes["dp"] < off.traffic_bytes["dp"]  # but the per-micro-batch gathers carry FP8


def test_release_rules() -> None:
    # NeMo 2.0 / Megatron-Bridge performance presets set fp8_param_gather; the NeMo 1.0 launcher did not
    assert software_switches("NeMo / Megatron-Bridge", "25.11").switches["fp8_param_gather"] is True
    assert software_switches("NeMo / Megatron-Bridge", "26.08").switches["fp8_param_gather"] is True
    assert software_switches("NeMo / Megatron-Bridge", "24.07").switches["fp8_param_gather"] is False
    # Megatron-LM's --fp8-param-gather is off by default
    assert software_switches("Megatron-LM", "2025").switches["fp8_param_gather"] is False
    assert software_switches("Megatron-Core", "0.15").switches["fp8_param_gather"] is False
    # torchao's Float8Linear casts the weight inside every forward: no persistent FP8 copy
    assert software_switches("torchtitan", None).switches["fp8_weight_cache"] is False
    assert software_switches("Megatron-LM", "2025").switches["fp8_weight_cache"] is True


@pytest.mark.parametrize(
    ("recipe", "extra"), [("fp8_current_scaling", []), ("mxfp8", ["--reuse-grad-buf-for-mxfp8-param-ag"])]
)
def test_megatron_export_names_fp8_parameters(recipe: str, extra: list[str]) -> None:
    on = launch_args(_scenario("B200", recipe, fp8_param_gather=True), "megatron")
    off = launch_args(_scenario("B200", recipe), "megatron")
    assert "--fp8-param-gather" in on and "--fp8-param-gather" not in off
    assert all(a in on for a in extra) and not any(a in off for a in extra)
    nemo = launch_args(_scenario("B200", recipe, fp8_param_gather=True), "nemo")
    assert "trainer.plugins.fp8_param_gather=true" in nemo
