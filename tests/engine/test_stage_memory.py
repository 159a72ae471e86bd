"""Memory per GPU is that of the pipeline rank that holds the most, whichever stage sets the pace."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from wanka.engine import estimate_step, make_context
from wanka.spec import Scenario, parse_scenario

# DeepSeek-V3's 61 layers + 1 MTP on 32 stages: --account-for-embedding/loss-in-pipeline-split gives
# the first and last stage one layer each and the middle stages two; the three dense layers fill
# the first stage and the first middle stage, so the stage the timing models as "middle" is dense
# while every later middle stage holds two MoE layers (with ep 1, 256 experts each, ~11 B parameters)
Build = Callable[..., Scenario]  # the deepseek_h800 fixture (tests/conftest.py)
_DEEPSEEK = {"tp": 1, "pp": 32, "dp": 8, "ep": 1, "zero": 1, "recompute": "full"}


def _expert_bytes_per_moe_layer(sc: Scenario) -> float:
    p = make_context(sc).params
    return float(p.expert * p.experts_per_layer) * 2.0  # bf16 weights, ep 1: every expert on the GPU


def test_1f1b_memory_holds_the_moe_heaviest_middle_stage_not_the_timed_one(
    deepseek_h800: Build,
) -> None:
    sc = deepseek_h800(_DEEPSEEK)
    r = estimate_step(sc, require_fit=False)
    # the stage the timing picks holds at most one MoE layer (first: dense; middle: two dense; last: the
    # MTP/MoE layer); the heaviest GPU holds two MoE layers' experts: weights, fp32 grads and more
    per_layer = _expert_bytes_per_moe_layer(sc)
    assert r.memory.weights >= 2.0 * per_layer
    assert r.memory.gradients >= 2.0 * 2.0 * per_layer  # fp32 main grads of the same parameters
    assert r.memory.total > 3.0 * 2.0 * per_layer


def test_dualpipe_memory_holds_two_moe_middle_stages_on_one_rank(deepseek_h800: Build) -> None:
    sc = deepseek_h800(_DEEPSEEK, pp_schedule="dualpipe")
    r = estimate_step(sc, require_fit=False)
    # DualPipe rank r holds stage r and stage pp-1-r (DeepSeek-V3 Sec. 3.2.1): rank 2 holds stages 2 and
    # 29, four MoE layers, while the timing paces on the first/last pair or the dense middle stage
    per_layer = _expert_bytes_per_moe_layer(sc)
    assert r.memory.weights >= 4.0 * per_layer
    one_f1b = estimate_step(deepseek_h800(_DEEPSEEK), require_fit=False)
    assert r.memory.weights == pytest.approx(2.0 * one_f1b.memory.weights)


def test_timing_paces_on_the_moe_heaviest_middle_stage() -> None:
    # DeepSeek-V3 with five dense layers (a small vocabulary and no MTP keep the last stage light) on 16
    # stages of four: the first stage holds four dense layers, the first middle stage the fifth and three
    # MoE layers, every later middle stage four MoE layers. Those set the pace (each MoE layer adds its
    # all-to-all and expert work), not the first middle stage the layout records as "mid"
    from wanka.engine import Strategies
    from wanka.engine.core import compute, shape
    from wanka.spec import load_model

    model = load_model("deepseek-v3").model_dump(exclude_none=True)
    model.update(vocab=32000, mtp_layers=0)
    model["moe"]["n_dense_layers"] = 5
    sc = parse_scenario(
        {
            "cluster": {"accelerator": "H800", "nodes": 32},
            "model": model,
            "training": {"global_batch_seqs": 1024, "precision": "fp8", "seq_len": 4096},
            "parallel": {"tp": 1, "pp": 16, "dp": 16, "ep": 8, "zero": 1, "recompute": "full"},
        }
    )
    ctx = make_context(sc)
    assert sc.parallel is not None and sc.training is not None
    st = Strategies.from_specs([sc.parallel], [sc.training.micro_batch])
    sh = shape(ctx, st)
    assert (float(sh.layers["mid"][0][0]), float(sh.layers["mid"][1][0])) == (1.0, 3.0)
    cm = compute(ctx, st, sh)
    assert (float(cm.nd_s[0]), float(cm.nm_s[0])) == (0.0, 4.0)
