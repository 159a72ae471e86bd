"""The zero-bubble pipeline schedule ZB-H1 (Qi et al. 2023, Zero Bubble Pipeline Parallelism, ICLR 2024):
the backward splits into its input-gradient half B and its weight-gradient half W, and the deferred W fill
the cool-down, so the bubble is (p - 1)(F + B - W) against 1F1B's (p - 1)(F + B + W), at 1F1B's peak
memory and with no interleaving."""

from __future__ import annotations

from typing import Any

import pytest

from wanka.engine import estimate_step
from wanka.errors import InfeasibleError
from wanka.planner import search
from wanka.spec import Scenario, parse_scenario


def _sc(schedule: str = "1f1b", **parallel: Any) -> Scenario:
    return parse_scenario(
        {
            "name": "zb",
            "cluster": {"accelerator": "H100", "nodes": 32, "fabric": {"nic_gbps_per_gpu": 400}},
            "model": "llama3-70b",
            "training": {"global_batch_seqs": 256, "micro_batch": 1, "seq_len": 4096},
            "software": {"framework": "torchtitan", "release": "2025", "pp_schedule": schedule},
            "parallel": {"tp": 8, "pp": 8, "dp": 4, "recompute": "none", **parallel},
        }
    )


def test_deferred_weight_gradients_take_2w_off_every_idle_chunk_time() -> None:
    one = estimate_step(_sc("1f1b"), require_fit=False)
    zb = estimate_step(_sc("zero_bubble"), require_fit=False)
    b1, bz = one.breakdown["pp_bubble"], zb.breakdown["pp_bubble"]
    # with B ~ 2 W and F ~ W (the GEMMs dominate a 70B layer), (F + B - W) / (F + B + W) ~ 1/2; attention,
    # norms and casts ride on F and B, not W, so the share lies above the pure-GEMM value
    assert 0.35 * b1 < bz < 0.7 * b1
    # the schedule moves only the bubble: the micro-batches' compute, memory and traffic are 1F1B's
    assert zb.breakdown["compute"] == pytest.approx(one.breakdown["compute"])
    assert zb.memory.total == pytest.approx(one.memory.total)
    assert zb.traffic_bytes == pytest.approx(one.traffic_bytes)
    assert one.step_time_s - zb.step_time_s == pytest.approx(b1 - bz, rel=0.05)


def test_without_a_pipeline_the_schedule_changes_nothing() -> None:
    one = estimate_step(_sc("1f1b", pp=1, dp=32), require_fit=False)
    zb = estimate_step(_sc("zero_bubble", pp=1, dp=32), require_fit=False)
    assert zb.step_time_s == one.step_time_s and zb.breakdown["pp_bubble"] == 0.0


def test_zero_bubble_refuses_interleaving_and_search_never_returns_it() -> None:
    with pytest.raises(InfeasibleError, match=r"parallel\.vpp = 2: zero-bubble pipeline"):
        estimate_step(_sc("zero_bubble", vpp=2), require_fit=False)
    sc = _sc("zero_bubble")
    free = parse_scenario({**sc.model_dump(mode="json", exclude_none=True), "parallel": None})
    res = search(free, top=20)
    assert res.top and any(c.pp > 1 for c in res.top) and all(c.vpp == 1 for c in res.top)


def test_plan_names_the_schedule(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from wanka.cli import main

    f = tmp_path / "zb.yaml"
    f.write_text(
        "base: traditional-512-a100\n"
        "parallel: {tp: 8, pp: 4, dp: 16, vpp: 1, zero: 1, recompute: selective, pp_schedule: zero_bubble}\n",
        encoding="utf-8",
    )
    assert main(["plan", str(f)]) == 0
    assert "(vpp 1, zero-bubble ZB-H1)" in capsys.readouterr().out
    assert main(["--lang", "zh", "plan", str(f)]) == 0
    assert "(vpp 1, 零气泡 ZB-H1)" in capsys.readouterr().out
