"""Activations in flight under Megatron-Core's interleaved 1F1B, chunk by chunk.

The engine counts in closed form (core.interleaved_inflight_layers); this test replays the schedule's
order (pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving: the warm-up
count, then one forward and one backward at a time, forwards through the chunks in order for each
group of pp micro-batches, backwards in reverse chunk order) and takes the peak of what is live."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from wanka.engine.core import interleaved_inflight_layers


def replay(p: int, v: int, m: int, r: int, layers: list[float]) -> float:
    total = m * v
    warm = min((p - r - 1) * 2 + (v - 1) * p, total)

    def chunk(k: int, forward: bool) -> int:
        c = (k % (p * v)) // p
        return c if forward else v - 1 - c

    live = peak = 0.0
    f = b = 0
    for _ in range(warm):
        live += layers[chunk(f, True)]
        f += 1
        peak = max(peak, live)
    while b < total:
        if f < total:
            live += layers[chunk(f, True)]
            f += 1
            peak = max(peak, live)
        live -= layers[chunk(b, False)]
        b += 1
    return peak


def closed(p: int, v: int, m: int, first_stage: bool, edge: float, lam: float) -> float:
    a = lambda x: np.array([float(x)])  # noqa: E731
    return float(interleaved_inflight_layers(a(p), a(v), a(m), first_stage, a(edge), a(lam))[0])


@pytest.mark.parametrize(("p", "v"), [(2, 2), (4, 2), (4, 3), (8, 4), (16, 8), (5, 3)])
def test_closed_form_matches_the_schedule_replayed(p: int, v: int) -> None:
    # the first stage's first chunk / the last stage's final chunk emptier, fuller or equal to the
    # others (the embedding or loss slot, an uneven remainder), steps of whole groups of pp micro-batches
    lam = 2.0
    for m, edge in itertools.product((p, 2 * p, 3 * p, 5 * p), (0.0, 1.0, 2.0, 3.0, 0.5)):
        first = replay(p, v, m, 0, [edge] + [lam] * (v - 1))
        last = replay(p, v, m, p - 1, [lam] * (v - 1) + [edge])
        assert closed(p, v, m, True, edge, lam) == pytest.approx(first), (m, edge)
        assert closed(p, v, m, False, edge, lam) == pytest.approx(last), (m, edge)


def test_equal_chunks_give_the_warm_up_formula() -> None:
    # equal chunks: (pp·v + pp - 2r - 1) chunks' worth on rank r, the count the engine uses elsewhere
    for p, v in itertools.product((4, 8, 16), (2, 4, 8)):
        assert closed(p, v, 4 * p, True, 1.0, 1.0) == pytest.approx(p * v + p - 1)
        assert closed(p, v, 4 * p, False, 1.0, 1.0) == pytest.approx(p * v - p + 1)


def test_embedding_slot_holds_nothing_in_flight() -> None:
    # Llama 3's 126 layers on 16 x 8 slots: rank 0's first chunk is the embedding alone, so the 15
    # warm-up forwards past one round add no layer: 16 micro-batches of its 7 layers, not 143 chunks
    assert closed(16, 8, 32, True, 0.0, 1.0) == pytest.approx(16 * 7)
    # the last rank's loss slot: its warm-up runs the 7 layer chunks for 16 micro-batches, then one more
    assert closed(16, 8, 32, False, 0.0, 1.0) == pytest.approx(113)


def test_engine_counts_the_first_and_last_stage_by_their_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    # the Meta preset's Llama 3 405B layout (pp 16 x vpp 8 over 126 layers + the embedding and loss
    # slots): the first stage's first chunk and the last stage's final chunk hold no layer
    from wanka.engine import core, estimate_step
    from wanka.spec import load_scenario

    seen: list[tuple[bool, float, float]] = []
    real = core.interleaved_inflight_layers

    def spy(p, v, m, first_stage, edge, lam):  # type: ignore[no-untyped-def]
        seen.append((first_stage, float(np.ravel(edge)[0]), float(np.ravel(lam)[0])))
        return real(p, v, m, first_stage, edge, lam)

    monkeypatch.setattr(core, "interleaved_inflight_layers", spy)
    sc = load_scenario("meta-24k-h100-roce")
    assert (sc.parallel.pp, sc.parallel.vpp) == (16, 8)
    estimate_step(sc, require_fit=False)
    assert (True, 0.0, 1.0) in seen  # rank 0: [embedding | 7 x one layer]
    assert (False, 0.0, 1.0) in seen  # rank 15: [7 x one layer | loss]
