from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wanka.errors import InfeasibleError, SpecError
from wanka.ops import (
    campaign_inputs,
    campaign_throughput,
    expected_ettr,
    run_campaign,
    simulate_campaign,
    sweep_checkpoint_interval,
    sweep_cluster_size,
)

from .conftest import LLAMA3_STEP_S, llama3_inline, llama3_preset, small

PUBLISHED_UNEXPECTED = 419  # Llama 3 Sec. 3.3.4, Table 5


@pytest.mark.parametrize("build", [llama3_inline, llama3_preset], ids=["practice", "preset"])
def test_llama3_54_days(build) -> None:  # type: ignore[no-untyped-def]
    r = simulate_campaign(build(), step_time_s=LLAMA3_STEP_S, replicas=1000, seed=0)
    assert r.gpus == 16384 and r.nodes == 2048
    assert abs(r.unexpected_interruptions.mean - PUBLISHED_UNEXPECTED) / PUBLISHED_UNEXPECTED < 0.15
    assert r.planned_interruptions.mean == pytest.approx(47, rel=0.15)
    assert r.ettr.mean >= 0.90  # ">90 % effective training time"
    assert r.ettr.p5 <= r.ettr.mean <= r.ettr.p95 <= 1.0
    assert r.wall_clock_s.mean == pytest.approx(54 * 86400)
    top = max(r.by_cause, key=lambda c: c.count.mean)
    assert top.name == "faulty_gpu"


def test_reproducible_by_seed() -> None:
    s = small()
    a = simulate_campaign(s, step_time_s=5.0, replicas=300, seed=3)
    b = simulate_campaign(s, step_time_s=5.0, replicas=300, seed=3)
    c = simulate_campaign(s, step_time_s=5.0, replicas=300, seed=4)
    assert a.to_dict() == b.to_dict()
    assert a.ettr.mean != c.ettr.mean


def test_no_failures_gives_the_checkpoint_only_value() -> None:
    for mode in ("sync", "async", "in_memory"):
        for days in (3.0, None):
            s = small(days=days, failures={"rate_scale": 0.0}, checkpoint={"mode": mode, "interval_s": 600.0})
            r = simulate_campaign(s, step_time_s=5.0, replicas=50, seed=1)
            ck = campaign_inputs(s, step_time_s=5.0).checkpoint
            overhead = ck.blocking_s / (600.0 + ck.blocking_s)  # δ / (τ + δ)
            assert r.interruptions.mean == 0
            assert r.ettr.mean == pytest.approx(1 - overhead, rel=1e-12)
            assert r.ettr.p5 == r.ettr.p95


@settings(max_examples=15, deadline=None)
@given(
    scale=st.floats(0.0, 60.0),
    nodes=st.integers(2, 256),
    restart=st.floats(0, 3600),
    mode=st.sampled_from(["sync", "async", "in_memory"]),
    dist=st.sampled_from(["exponential", "weibull"]),
)
def test_ettr_is_a_fraction(scale: float, nodes: int, restart: float, mode: str, dist: str) -> None:
    fail = {"rate_scale": scale, "restart_s": restart, "distribution": dist, "weibull_shape": 0.7}
    s = small(nodes=nodes, days=2.0, failures=fail, checkpoint={"mode": mode})
    try:
        r = simulate_campaign(s, step_time_s=5.0, replicas=40, seed=0)
    except InfeasibleError:
        return
    assert 0.0 <= r.ettr.p5 <= r.ettr.p95 <= 1.0 and 0.0 <= r.ettr.mean <= 1.0
    assert r.goodput.mean <= r.ettr.mean + 1e-12


@settings(max_examples=25, deadline=None)
@given(
    a=st.floats(0.0, 50.0),
    k=st.floats(1.0, 10.0),
    nodes=st.integers(2, 512),
    mode=st.sampled_from(["sync", "async", "in_memory"]),
)
def test_more_failures_never_raise_ettr_closed_form(a: float, k: float, nodes: int, mode: str) -> None:
    lo = campaign_inputs(small(nodes=nodes, failures={"rate_scale": a}, checkpoint={"mode": mode}), step_time_s=5.0)
    hi = campaign_inputs(small(nodes=nodes, failures={"rate_scale": a * k}, checkpoint={"mode": mode}), step_time_s=5.0)
    assert expected_ettr(hi) <= expected_ettr(lo) + 1e-12


def test_more_failures_never_raise_ettr_monte_carlo() -> None:
    means = [
        simulate_campaign(
            small(nodes=128, failures={"rate_scale": x}), step_time_s=5.0, replicas=400, seed=11
        ).ettr.mean
        for x in (0.0, 1.0, 3.0, 10.0, 30.0)
    ]
    assert all(b <= a for a, b in itertools.pairwise(means)), means


def test_gpu_hours_add_up() -> None:
    r = simulate_campaign(
        small(nodes=128, failures={"rate_scale": 10.0, "planned_interruptions_per_day": 2}),
        step_time_s=5.0,
        replicas=200,
        seed=2,
    )
    total = r.wall_clock_s.mean * r.gpus / 3600
    lost = sum(v for k, v in r.gpu_hours_lost.items() if k != "stragglers")
    assert lost + r.ettr.mean * total == pytest.approx(total, rel=1e-9)
    assert sum(c.count.mean for c in r.by_cause) == pytest.approx(r.interruptions.mean)


def test_tokens_mode_and_throughput() -> None:
    s = small(days=None, failures={"rate_scale": 5.0})
    r = simulate_campaign(s, step_time_s=5.0, replicas=200, seed=0)
    assert r.mode == "tokens"
    assert r.tokens_trained is not None and r.tokens_trained.mean == pytest.approx(2e10, rel=1e-9)
    ideal = 512 * 8192 / 5.0 / 512  # tokens/s/GPU with no failures or checkpoints
    tps = campaign_throughput(s, 5.0, 512 * 8192, seed=0)
    assert 0.5 * ideal < tps < ideal
    assert r.wall_clock_s.mean > 2e10 / (ideal * 512)


def test_spares_and_stragglers_lower_ettr_and_goodput() -> None:
    with_spares = simulate_campaign(small(nodes=256, failures={"hot_spares": 8}), step_time_s=5.0, replicas=200)
    none = simulate_campaign(small(nodes=256, failures={"hot_spares": 0}), step_time_s=5.0, replicas=200)
    assert none.ettr.mean < with_spares.ettr.mean
    strag = {"straggler_fraction": 0.01, "straggler_slowdown": 2.0, "evict_stragglers": False}
    slow = simulate_campaign(small(nodes=256, failures=strag), step_time_s=5.0, replicas=100)
    assert slow.goodput.mean < slow.ettr.mean / 1.5


def test_sweeps() -> None:
    s = small(nodes=256, failures={"rate_scale": 20.0}, checkpoint={"mode": "sync"})
    pts = sweep_checkpoint_interval(s, step_time_s=5.0, replicas=200, seed=0)
    best = max(pts, key=lambda p: p.ettr_analytic)
    assert best.x == pytest.approx(campaign_inputs(s, step_time_s=5.0).optimal_interval_s, rel=0.6)
    sizes = sweep_cluster_size(s, step_time_s=5.0, replicas=100, seed=0)
    assert [p.x for p in sizes] == sorted(p.x for p in sizes)
    assert sizes[0].ettr.mean > sizes[-1].ettr.mean


def test_bad_inputs() -> None:
    with pytest.raises(SpecError, match="replicas"):
        simulate_campaign(small(), step_time_s=5.0, replicas=0)
    with pytest.raises(SpecError, match="step_time_s"):
        simulate_campaign(small(), step_time_s=-1.0)
    with pytest.raises(SpecError, match="campaign_days"):
        simulate_campaign(small(days=None, training=None, parallel=None), step_time_s=5.0)
    with pytest.raises(InfeasibleError):
        run_campaign(
            campaign_inputs(
                small(
                    days=None,
                    training={"tokens": 1e13, "global_batch_seqs": 512},
                    failures={"rate_scale": 1000.0, "restart_s": 86400.0},
                ),
                step_time_s=5.0,
            ),
            replicas=10,
        )
