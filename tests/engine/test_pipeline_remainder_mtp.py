"""The pipeline split of layer counts that do not divide, and the output heads of multi-token
prediction: the last stage of an uneven split holds what remains (Megatron-Bridge's DeepSeek-V3 and
Kimi-K2 layouts: 61 layers on 16 stages are E+4 | 4 x 14 | 1+loss), and each MTP depth computes its
own logits with the shared output head (DeepSeek-V3 report Sec. 2.2)."""

from typing import Any

import numpy as np

from wanka.engine import core, estimate_step
from wanka.engine.context import make_context
from wanka.engine.strategies import Strategies
from wanka.spec import Scenario, load_model, parse_scenario


def _scenario(mtp: int, pp: int, vpp: int = 1, nodes: int = 32) -> Scenario:
    m: dict[str, Any] = load_model("deepseek-v3").model_dump(exclude_none=True)
    m["mtp_layers"] = mtp
    return parse_scenario(
        {
            "cluster": {"accelerator": "B200", "nodes": nodes},
            "model": m,
            "training": {"global_batch_seqs": 2048, "precision": "fp8", "seq_len": 4096},
            "parallel": {"tp": 1, "pp": pp, "vpp": vpp, "dp": nodes * 8 // pp, "ep": 8, "zero": 1},
        }
    )


def _shape(sc: Scenario) -> core.Shape:
    ctx = make_context(sc)
    return core.shape(ctx, Strategies.from_specs([sc.parallel], [sc.training.micro_batch]))


def test_uneven_split_gives_the_last_stage_the_remainder() -> None:
    # 61 layers over 16 stages: four on every stage but the last, which keeps one beside the loss
    sh = _shape(_scenario(mtp=0, pp=16))
    assert float(sh.slots[0]) == 4.0
    assert float(sh.n_first[0]) == 4.0
    assert float(sh.n_last[0]) == 1.0
    assert float(sh.last_chunk[0]) == 1.0
    first_dense, first_moe = (float(x[0]) for x in sh.layers["first"])
    assert (first_dense, first_moe) == (3.0, 1.0)  # DeepSeek-V3's three dense layers lead
    # interleaved: 4 x 4 virtual stages of four layers, the last chunk one (Kimi-K2 / DeepSeek-V3 (4, 4) layouts)
    sh = _shape(_scenario(mtp=0, pp=4, vpp=4))
    assert float(sh.chunk_slots[0]) == 4.0
    assert float(sh.n_last[0]) == 13.0
    assert float(sh.last_chunk[0]) == 1.0


def test_a_light_last_stage_does_not_pace_the_pipeline() -> None:
    # the old rule put ceil(61/16) = 4 layers on the last stage beside the LM head, which then paced
    # the pipeline; with the remainder there (one layer + head) a middle stage of four MoE layers does
    sc = _scenario(mtp=0, pp=16)
    ctx = make_context(sc)
    st = Strategies.from_specs([sc.parallel], [sc.training.micro_batch])
    sh = core.shape(ctx, st)
    cm = core.compute(ctx, st, sh)
    assert not bool(cm.use_last[0])
    assert float(cm.nm_s[0]) == 4.0
    # 64 layers split evenly fill the last stage too: it holds the head beside four layers and is slower
    m = sc.model
    assert m is not None
    full = sc.model_copy(update={"model": m.model_copy(update={"n_layers": 64})})
    assert estimate_step(full, require_fit=False).step_time_s > estimate_step(sc, require_fit=False).step_time_s


def test_each_mtp_depth_adds_an_output_head_on_the_last_stage() -> None:
    # pp 1: one stage runs everything, so the extra MTP depth's layer and its logits both show
    one = estimate_step(_scenario(mtp=1, pp=1, nodes=2), require_fit=False)
    two = estimate_step(_scenario(mtp=2, pp=1, nodes=2), require_fit=False)
    ctx = make_context(_scenario(mtp=1, pp=1, nodes=2))
    lg = ctx.logits
    tokens = 4096.0
    head_flops = 2.0 * tokens * lg.n * lg.k * 3.0  # one more head, forward and backward
    m_mb = 2048 / 16  # micro-batches of one data-parallel rank
    # the second MTP depth costs at least its logits GEMMs at the BF16 peak on every micro-batch
    assert two.step_time_s - one.step_time_s > m_mb * head_flops / ctx.bf16_peak
    assert np.isfinite(two.step_time_s)


def test_a_last_chunk_with_no_layer_holds_the_loss_alone() -> None:
    # 61 layers on 8 x 4 = 32 virtual stages: chunks of two would hold 62, so the last chunk takes the
    # loss alone and the first gives one layer to the embedding (Megatron-Bridge "Et|(tt|)*30mL" without
    # the MTP layer): the last stage holds 6 layers beside the head, the first 7, the others 8
    sh = _shape(_scenario(mtp=0, pp=8, vpp=4))
    assert float(sh.chunk_slots[0]) == 2.0
    assert float(sh.slots[0]) == 8.0
    assert float(sh.n_first[0]) == 7.0
    assert float(sh.n_last[0]) == 6.0
    assert float(sh.last_chunk[0]) == 0.0
    # so a middle stage of eight MoE layers paces the pipeline, not the last one with the LM head
    sc = _scenario(mtp=0, pp=8, vpp=4)
    ctx = make_context(sc)
    st = Strategies.from_specs([sc.parallel], [sc.training.micro_batch])
    cm = core.compute(ctx, st, core.shape(ctx, st))
    assert not bool(cm.use_last[0])
    assert float(cm.nm_s[0]) == 8.0
    # with one MTP layer the 62 + embedding + loss fill the 32 chunks exactly ("Et|(tt|)*30mL"): both ends short one
    sh = _shape(_scenario(mtp=1, pp=8, vpp=4))
    assert (float(sh.n_first[0]), float(sh.n_last[0]), float(sh.slots[0])) == (7.0, 7.0, 8.0)
