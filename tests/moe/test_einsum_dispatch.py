"""GShard's einsum dispatch (DeepSpeed-MoE sharded_moe.py and its ports: MindSpeed / ModelLink 2024): the gate
writes one-hot [tokens, experts x capacity] masks and two dense GEMMs move the tokens into the experts'
capacity buffers and back, 2·E·C·S·h FLOPs each for S tokens per rank (quadratic in S); experts split tp ways
gather and scatter the capacity-padded buffers, top_k x capacity times a dense MLP's TP traffic."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import wanka.engine.core as core
from wanka.engine import estimate_step, make_context
from wanka.spec import parse_scenario


def _scenario(dispatch: str, seq: int = 8192, **moe: Any) -> Any:
    model = {
        "type": "moe",
        "n_layers": 8,
        "hidden": 4096,
        "n_heads": 32,
        "n_kv_heads": 8,
        "ffn_hidden": 14336,
        "vocab": 32000,
        "seq_len": seq,
        "moe": {
            "n_experts": 8,
            "top_k": 2,
            "expert_ffn_hidden": 14336,
            "dispatch": "token_drop",
            "capacity_factor": 1.1,
            **moe,
        },
    }
    return parse_scenario(
        {
            "cluster": {"accelerator": "H100-SXM5-80GB", "nodes": 2},
            "model": model,
            "training": {"global_batch_seqs": 16, "precision": "bf16", "seq_len": seq},
            "parallel": {"tp": 8, "pp": 1, "dp": 2, "ep": 1, "sp": True, "ep_dispatch": dispatch, "recompute": "full"},
        }
    )


def test_einsum_flops_are_quadratic_in_the_tokens_per_rank() -> None:
    ctx = make_context(_scenario("einsum"))
    eff = core._gemm_eff
    for s in (1024.0, 4096.0):
        t_gemm, t_elem = core.einsum_dispatch_time(ctx, np.array([s]), 1.1)
        slots = 2.0 * 1.1 * s
        flops = 4.0 * slots * s * 4096.0  # dispatch + combine, 2·E·C·S·h each
        rate = ctx.bf16_peak * float(eff(ctx, np.array([slots]), np.array([4096.0]), np.array([s]))[0])
        assert float(t_gemm[0]) == pytest.approx(flops / rate, rel=1e-9)
        assert float(t_elem[0]) > 0.0  # the masks are written and cast in HBM
    small = core.einsum_dispatch_time(ctx, np.array([1024.0]), 1.1)[0]
    big = core.einsum_dispatch_time(ctx, np.array([4096.0]), 1.1)[0]
    assert float(big[0]) > 12.0 * float(small[0])  # 16x the FLOPs, at a GEMM rate no worse


def test_einsum_dispatch_slows_the_step_and_says_where() -> None:
    plain = estimate_step(_scenario("alltoall"), require_fit=False)
    gshard = estimate_step(_scenario("einsum"), require_fit=False)
    assert gshard.breakdown["compute"] > plain.breakdown["compute"]
    assert gshard.breakdown["tp_comm"] > plain.breakdown["tp_comm"]
    assert gshard.step_time_s > plain.step_time_s


def test_tp_traffic_of_the_expert_block_scales_with_top_k_times_capacity() -> None:
    got = {}
    for dispatch in ("alltoall", "einsum"):
        sc = _scenario(dispatch)
        got[dispatch] = estimate_step(sc, require_fit=False).traffic_bytes["tp"]
    # 8 MoE layers: attention block 1x, expert block top_k x capacity = 2 x 1.1 -> (1 + 2.2) / 2 per layer
    assert got["einsum"] / got["alltoall"] == pytest.approx((1.0 + 2.0 * 1.1) / 2.0, rel=1e-9)


def test_einsum_is_a_valid_dispatch_and_a_bad_one_is_refused() -> None:
    assert _scenario("einsum").parallel.ep_dispatch == "einsum"
    with pytest.raises(Exception, match="ep_dispatch"):
        _scenario("one_hot")


def test_einsum_masks_are_kept_for_the_backward() -> None:
    sc = _scenario("einsum").model_copy(
        update={"parallel": _scenario("einsum").parallel.model_copy(update={"recompute": "none"})}
    )
    plain = _scenario("alltoall").model_copy(
        update={"parallel": _scenario("alltoall").parallel.model_copy(update={"recompute": "none"})}
    )
    a = estimate_step(plain, require_fit=False).memory.activations
    b = estimate_step(sc, require_fit=False).memory.activations
    # 8 MoE layers of S = 8192 / tp 8 = 1024 tokens per rank, E·C = 2 x 1.1 x S slots, (2 x 2 + 4) bytes each
    s_rank = 8192.0 / 8.0
    assert b - a == pytest.approx(8 * 8.0 * 2.2 * s_rank * s_rank, rel=1e-6)
