"""Selective recompute as Megatron-Core runs it on a dense layer without MLA: its Transformer Engine
spec fuses both norms into the linears after them, so "layernorm" recompute has no module to act on
and the activation alone is recomputed only in grouped-GEMM experts; what ``selective`` recomputes is
the core-attention checkpoint (engine.core.selective_is_core_attn). Frameworks with their own
recompute (torchtitan) keep dropping the norm and activation outputs."""

import pytest

from wanka.engine import estimate_step, make_context
from wanka.spec import Scenario, parse_scenario


def _scenario(recompute: str, framework: str | None = None, **parallel: object) -> Scenario:
    raw: dict[str, object] = {
        "name": "sel",
        "cluster": {"accelerator": "H100", "nodes": 16, "fabric": {"nic_gbps_per_gpu": 400}},
        "model": "llama3-8b",
        "training": {"global_batch_seqs": 128, "micro_batch": 1, "tokens": 1e11, "precision": "fp8"},
        "parallel": {"tp": 2, "pp": 2, "dp": 32, "recompute": recompute, **parallel},
    }
    if framework is not None:
        raw["software"] = {"framework": framework}
    return parse_scenario(raw)


def _act(recompute: str, framework: str | None = None, **parallel: object) -> float:
    return float(estimate_step(_scenario(recompute, framework, **parallel), require_fit=False).memory.activations)


def test_megatron_selective_frees_only_the_attention_kernels_copy_of_its_output() -> None:
    none, sel = _act("none"), _act("selective")
    tt_none, tt_sel = _act("none", "torchtitan"), _act("selective", "torchtitan")
    # the same layers, the same bytes, but torchtitan's DTensor keeps each layer's two gathered
    # column-parallel inputs (sp_regather false) where Megatron keeps the local shard and re-gathers
    regather = _act("none", "torchtitan", sp_regather=True)
    assert regather == pytest.approx(none, rel=1e-12)
    assert tt_none > none
    # FP8: the BF16 attention output the fused kernel keeps (its FP8 copy stays with the projection):
    # h of the ~(11h + 4·kv + 5f) bytes a token stores per layer, a few per cent
    assert 0.01 < 1 - sel / none < 0.08
    # the cheap modules (two norm outputs and the activation) are several times that
    assert 1 - tt_sel / tt_none > 2.0 * (1 - sel / none)


def test_megatron_selective_reruns_the_attention_core() -> None:
    none = estimate_step(_scenario("none"), require_fit=False)
    sel = estimate_step(_scenario("selective"), require_fit=False)
    tt = estimate_step(_scenario("selective", "torchtitan"), require_fit=False)
    assert none.breakdown["recompute"] == 0.0
    assert sel.breakdown["recompute"] > 2.0 * tt.breakdown["recompute"] > 0.0
    assert sel.hfu > sel.mfu and tt.hfu == pytest.approx(tt.mfu)


def test_405b_one_layer_chunks_do_not_fit_an_h100_without_the_cheap_recompute() -> None:
    # issue 13: Llama 3.1 405B FP8 on 1,024 H100, TP4 PP32 CP2 vpp4 (one layer per virtual stage)
    # holds 157 layers of activations on the second pipeline rank; only a selective recompute that
    # drops the norm and activation outputs made it fit, and Megatron-Core has none for this layer
    sc = parse_scenario(
        {
            "name": "405b",
            "cluster": {"accelerator": "H100", "nodes": 128, "fabric": {"nic_gbps_per_gpu": 400}},
            "model": "llama3-405b",
            "training": {"global_batch_seqs": 1536, "micro_batch": 1, "seq_len": 8192, "precision": "fp8"},
            "parallel": {"tp": 4, "pp": 32, "cp": 2, "dp": 4, "vpp": 4, "recompute": "selective", "zero": 1},
        }
    )
    r = estimate_step(sc, require_fit=False)
    assert not r.memory.fits
    assert r.memory.total > 1.05 * make_context(sc).hbm_usable
