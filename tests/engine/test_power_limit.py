"""A power limit below the TDP lowers the tensor-core clock (dynamic power ~ f^3 above idle); MFU stays
quoted against the datasheet peak; a limit at or below the idle draw is a clear error."""

from __future__ import annotations

import subprocess
import sys

import pytest

from wanka.catalog import accelerator
from wanka.engine import estimate_step, make_context
from wanka.errors import SpecError
from wanka.spec import Scenario, parse_scenario


def _scenario(limit: float | None, acc: str = "H100") -> Scenario:
    cluster: dict[str, object] = {"accelerator": acc, "nodes": 1}
    if limit is not None:
        cluster["power_limit_w"] = limit
    return parse_scenario(
        {
            "name": "pl",
            "cluster": cluster,
            "model": "llama3-8b",
            "training": {"global_batch_seqs": 64, "micro_batch": 1, "seq_len": 8192},
            "parallel": {"tp": 1, "pp": 1, "dp": 8, "zero": 3, "recompute": "selective"},
        }
    )


def test_clock_fraction_follows_the_cube_of_dynamic_power() -> None:
    acc = accelerator("H100")
    assert acc.clock_fraction(None) == 1.0
    assert acc.clock_fraction(acc.tdp_w) == 1.0
    assert acc.clock_fraction(acc.tdp_w * 2) == 1.0
    f = acc.clock_fraction(500.0)
    assert f**3 == pytest.approx((500.0 - acc.idle_w) / (acc.tdp_w - acc.idle_w), rel=1e-12)
    assert acc.clock_fraction(400.0) < f < 1.0


def test_a_power_limit_slows_the_compute_and_keeps_the_mfu_denominator() -> None:
    full = estimate_step(_scenario(None), require_fit=False)
    capped = estimate_step(_scenario(500.0), require_fit=False)
    f = accelerator("H100").clock_fraction(500.0)
    ctx, ctx_c = make_context(_scenario(None)), make_context(_scenario(500.0))
    assert ctx_c.gemm_peak == pytest.approx(ctx.gemm_peak * f, rel=1e-12)
    assert ctx_c.bf16_peak == pytest.approx(ctx.bf16_peak * f, rel=1e-12)
    assert ctx_c.mfu_peak == ctx.mfu_peak
    assert capped.breakdown["compute"] > full.breakdown["compute"] * 1.05
    assert capped.step_time_s > full.step_time_s
    # same tokens in more time against the same datasheet peak: a lower MFU
    assert capped.mfu == pytest.approx(full.mfu * full.step_time_s / capped.step_time_s, rel=1e-9)
    assert any("power limit 500 W" in a for a in ctx_c.assumptions)
    # a limit at the TDP is the same as none
    assert estimate_step(_scenario(700.0), require_fit=False).step_time_s == full.step_time_s


def test_a_power_limit_at_or_below_idle_names_the_field() -> None:
    with pytest.raises(SpecError, match="idle draw") as e:
        make_context(_scenario(80.0))
    assert e.value.field == "cluster.power_limit_w"


def test_cli_rejects_a_power_limit_below_idle_with_one_error_line(tmp_path: object) -> None:
    from pathlib import Path

    p = Path(str(tmp_path)) / "s.yaml"
    p.write_text(
        "name: pl\ncluster: {accelerator: H100, nodes: 1, power_limit_w: 50}\nmodel: llama3-8b\n"
        "training: {global_batch_seqs: 64, micro_batch: 1}\nparallel: {tp: 1, pp: 1, dp: 8, zero: 3}\n"
    )
    r = subprocess.run([sys.executable, "-m", "wanka", "plan", str(p)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "power_limit_w" in lines[0]
    assert "Traceback" not in r.stderr
