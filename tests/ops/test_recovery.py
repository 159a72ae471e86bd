from __future__ import annotations

import pytest

from wanka.ops import erlang_b, job_failure_rates, recovery_model

from .conftest import llama3_inline, small


def test_erlang_b_by_hand() -> None:
    assert erlang_b(0, 3.0) == 1.0
    assert erlang_b(1, 0.5) == pytest.approx(0.5 / 1.5)
    # B(2, 1) = (1/2!) / (1 + 1 + 1/2) = 0.2
    assert erlang_b(2, 1.0) == pytest.approx(0.2)


def test_spares_include_idle_nodes() -> None:
    s = llama3_inline(cluster={"nodes": 3072})  # a 24k cluster running a 16k job
    rec = recovery_model(s, job_failure_rates(s))
    assert rec.spares == 16 + 1024
    assert rec.p_no_spare < 1e-12


def test_no_spares_waits_for_repair() -> None:
    s = small(failures={"hot_spares": 0})
    rec = recovery_model(s, job_failure_rates(s))
    assert rec.p_no_spare == 1.0 and rec.spare_wait_s == s.failures.repair_s
    assert (rec.peer_loss_p >= 0).all() and (rec.peer_loss_p < 1e-3).all()
