"""The enumeration: complete against a brute force of the engine's rules, and pruned only where safe."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from wanka.engine import Strategies, evaluate_batch, make_context
from wanka.planner import SearchSpace, enumerate_space, job_scenario, search
from wanka.planner.space import SpaceCounts, shape_candidates

from .helpers import small


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def test_shapes_are_exactly_the_engine_feasible_ones() -> None:
    sc = small(nodes=4, model="llama3-70b", batch=96)
    ctx = make_context(job_scenario(sc))
    n = ctx.gpus
    got = {s[:4] for s in shape_candidates(ctx, SearchSpace(), SpaceCounts())}
    # brute force: every (tp, cp, pp, dp) with tp·cp·pp·dp = n that the engine accepts at mb 1 / vpp 1,
    # with tp inside the 8-GPU scale-up domain and cp a power of two up to 64
    rows = [
        (tp, cp, pp, n // (tp * cp * pp))
        for tp in _divisors(n)
        for cp in _divisors(n // tp)
        for pp in _divisors(n // (tp * cp))
    ]
    a = np.array(rows)
    st = Strategies.from_columns(tp=a[:, 0], cp=a[:, 1], pp=a[:, 2], dp=a[:, 3], sp=a[:, 0] > 1)
    code = evaluate_batch(ctx, st, 1.0).reason
    ok = (code == -1) | (code == -2)
    want = {
        tuple(int(x) for x in r)
        for r, k in zip(a, ok, strict=True)
        if k and r[0] <= 8 and r[1] <= 64 and (r[1] & (r[1] - 1)) == 0
    }
    assert got == want and len(want) > 5


def test_every_enumerated_row_passes_the_shape_rules() -> None:
    sc = small(nodes=8, model="mixtral-8x7b", batch=128)
    ctx = make_context(job_scenario(sc))
    st, counts = enumerate_space(ctx)
    code = evaluate_batch(ctx, st, 1.0).reason
    assert len(st) == counts.strategies > 0
    assert set(np.unique(code).tolist()) <= {-1, -2}  # feasible or does not fit: never a shape rule
    assert ((st.tp * st.pp * st.dp * st.cp) == ctx.gpus).all()


def test_memory_pruned_shapes_really_never_fit() -> None:
    sc = small(nodes=2, model="llama3-405b", batch=32)
    ctx = make_context(job_scenario(sc))
    pruned, c1 = enumerate_space(ctx)
    full, _ = enumerate_space(ctx, SearchSpace(memory_prune=False))
    assert c1.shapes_no_fit > 0 and len(pruned) < len(full)
    fits_full = evaluate_batch(ctx, full, 1.0).fits.sum()
    fits_pruned = evaluate_batch(ctx, pruned, 1.0).fits.sum()
    assert fits_full == fits_pruned  # nothing that fits was pruned


MODELS = ("llama3-8b", "llama3-70b", "mixtral-8x7b", "gpt3-175b")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model=hs.sampled_from(MODELS),
    nodes=hs.sampled_from([1, 2, 4, 8, 16]),
    batch=hs.sampled_from([16, 48, 64, 256]),
    top=hs.integers(1, 8),
)
def test_every_returned_strategy_is_feasible_fits_and_spans_the_job(
    model: str, nodes: int, batch: int, top: int
) -> None:
    sc = small(nodes=nodes, model=model, batch=batch)
    r = search(sc, top=top)
    ctx = make_context(job_scenario(sc))
    assert len(r.top) <= top
    for c in r.top:
        assert c.tp * c.pp * c.dp * c.cp == sc.gpus == c.gpus
        assert c.memory_bytes <= c.hbm_bytes == ctx.hbm_usable
        st = Strategies.from_columns(
            tp=[c.tp],
            pp=[c.pp],
            dp=[c.dp],
            cp=[c.cp],
            ep=[c.ep],
            vpp=[c.vpp],
            micro_batch=[c.micro_batch],
            zero=[c.zero],
            recompute=[c.recompute],
            sp=[c.sp],
            cp_comm=[c.cp_comm_type],
            offload=[c.offload_layers],
        )
        again = evaluate_batch(ctx, st, sc.training.tokens)  # type: ignore[union-attr]
        assert int(again.reason[0]) == -1
        assert float(again.step_time_s[0]) == c.step_time_s
    if r.feasible == 0:
        assert not r.top and r.notes


def test_hybrid_shard_groups_are_a_search_dimension() -> None:
    sc = small(nodes=8, model="llama3-8b", batch=128)
    ctx = make_context(job_scenario(sc))
    plain, _ = enumerate_space(ctx, SearchSpace(micro_batches=(1,), vpp_max=1))
    hyb, _ = enumerate_space(ctx, SearchSpace(micro_batches=(1,), vpp_max=1, shard_groups=(8,)))
    assert len(hyb) > len(plain)
    # a shard group is only tried with ZeRO >= 1, dividing dp·cp and smaller than it
    g = hyb.shard[hyb.shard > 0]
    assert g.size and np.all(g == 8)
    assert np.all(hyb.zero[hyb.shard > 0] >= 1)
    assert np.all(((hyb.dp * hyb.cp)[hyb.shard > 0] % 8 == 0) & ((hyb.dp * hyb.cp)[hyb.shard > 0] > 8))
    r = search(sc, top=50, space=SearchSpace(micro_batches=(1,), vpp_max=1, shard_groups=(8,)))
    base = search(sc, top=1, space=SearchSpace(micro_batches=(1,), vpp_max=1))
    assert r.best.step_time_s <= base.best.step_time_s * (1 + 1e-12)
    for c in r.top:
        spec = c.parallel_spec()  # round-trips through the spec's validation
        assert spec.zero_shard_group == c.zero_shard_group


def test_activation_offload_is_a_search_dimension_where_megatron_allows_it() -> None:
    # Megatron-Core's cpu_offloading: pp = 1, no recompute, fewer layers than the model has; the space
    # tries k/8 of the layers there and nowhere else
    sc = small(nodes=4, model="llama3-8b", batch=64)
    ctx = make_context(job_scenario(sc))
    st, _ = enumerate_space(ctx, SearchSpace(micro_batches=(1, 2), vpp_max=2))
    off = st.offload > 0
    assert off.any()
    assert np.all(st.pp[off] == 1) and np.all(st.recompute[off] == 0)
    layers = sc.model.n_layers  # type: ignore[union-attr]
    assert set(st.offload[off].tolist()) == {round(layers * k / 8) for k in range(1, 8)}
    # every pp = 1, recompute-none row has its offloaded twins; no offload without that row
    none = (st.pp == 1) & (st.recompute == 0) & ~off
    assert int(off.sum()) == 7 * int(none.sum())
    plain, _ = enumerate_space(ctx, SearchSpace(micro_batches=(1, 2), vpp_max=2, offload_eighths=()))
    assert not np.any(plain.offload > 0) and len(plain) == len(st) - int(off.sum())
