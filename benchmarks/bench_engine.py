"""Engine speed: one estimate_step, and estimate_many throughput (strategies per second).

Targets (issue 13): one estimate_step <= 1 ms; estimate_many >= 500,000 strategies/s on one core.
Prints per-item costs (best of several runs); no pass/fail.

    python -m benchmarks.bench_engine
"""

from __future__ import annotations

import time

import numpy as np

from wanka.engine import Strategies, estimate_step, evaluate_batch, make_context
from wanka.spec import load_scenario


def _per_call(fn, n: int, repeats: int = 5) -> float:  # type: ignore[no-untyped-def]
    """Seconds per call: the best of ``repeats`` runs of ``n`` calls (a shared machine's noise only adds;
    many short runs find its quiet moments better than a few long ones)."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def _minor_faults(fn) -> int | None:  # type: ignore[no-untyped-def]
    """Minor page faults of one call (after a first, warm-up call); None where getrusage is missing."""
    try:
        import resource
    except ImportError:
        return None
    fn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    fn()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def main() -> None:
    sc = load_scenario("meta-24k-h100-roce")
    t_step = _per_call(lambda: estimate_step(sc), 10, repeats=100)
    ctx = make_context(sc)
    t_ctx = _per_call(lambda: make_context(sc), 10, repeats=100)
    rng = np.random.default_rng(0)
    n = 50_000
    st = Strategies.from_columns(
        tp=rng.choice([1, 2, 4, 8], n),
        pp=rng.choice([1, 2, 4, 8, 16], n),
        dp=rng.choice([64, 128, 256, 512], n),
        cp=rng.choice([1, 2], n),
        vpp=rng.choice([1, 2, 4], n),
        micro_batch=rng.choice([1, 2], n),
        zero=rng.choice([0, 1, 2, 3], n),
        recompute=rng.choice([0, 1, 2], n),
    )
    t_many = _per_call(lambda: evaluate_batch(ctx, st, 1.0), 1, repeats=7)
    faults = _minor_faults(lambda: evaluate_batch(ctx, st, 1.0))
    print(
        f"estimate_step (preset meta-24k-h100-roce): {t_step * 1e3:.3f} ms per call "
        f"(of which make_context {t_ctx * 1e3:.3f} ms)   target < 1 ms"
    )
    print(
        f"estimate_many: {n:,} strategies in {t_many:.3f} s = {n / t_many:,.0f} strategies/s "
        f"({t_many / n * 1e6:.2f} µs each)   target >= 500,000/s"
    )
    if faults is not None:  # zero-filled pages the kernel hands a batch whose heap was given back
        print(f"estimate_many: {faults:,} minor page faults per call ({faults * 4 / 1024:.1f} MiB of fresh pages)")


if __name__ == "__main__":
    main()
