"""Benchmark: strategy search for Llama 3 405B on 16,384 H100 (target < 2 s on one core) and a
1,000-point sweep of plans on 1 and 2 local workers (target: speed-up linear within 20 %, >= 1.6x).

Run: ``.venv/bin/python benchmarks/bench_planner.py``. Prints search wall time (cold: first call in the
process, with the scenario's context and the network flow model; warm: again), cost per strategy,
the published layout's rank, and the sweep's wall time per worker count with the speed-up.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

PRESET = "llama3-405b-16k-h100-54d"
SWEEP = """name: bench-1000-plans
base: llama3-405b-16k-h100-54d
mode: plan
axes:
  training.tokens: [1.0e+12, 2.0e+12, 3.0e+12, 4.0e+12, 5.0e+12, 6.0e+12, 7.0e+12, 8.0e+12, 9.0e+12, 1.0e+13]
  facility.electricity_usd_per_kwh: [0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.10, 0.11, 0.12, 0.13]
  facility.pue: [1.05, 1.1, 1.15, 1.2, 1.25, 1.3, 1.35, 1.4, 1.45, 1.5]
"""


def bench_search() -> None:
    from wanka.planner import search
    from wanka.spec import load_scenario

    sc = load_scenario(PRESET)
    t0 = time.perf_counter()
    r = search(sc, top=10)
    cold = time.perf_counter() - t0
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        search(sc, top=10)
        runs.append(time.perf_counter() - t0)
    warm = min(runs)
    print(f"search {PRESET}: {r.evaluated:,} strategies evaluated ({r.feasible:,} feasible, {r.no_fit:,} too big)")
    print(f"  cold {cold:.3f} s (first call: context + network flow model)   warm {warm:.3f} s   target < 2 s")
    print(f"  {warm / max(r.evaluated, 1) * 1e6:.2f} µs per strategy (warm)")
    b = r.baseline
    best = r.best
    print(
        f"  best {best.layout()} vpp {best.vpp} mb {best.micro_batch} zero {best.zero} {best.recompute}: "
        f"{best.step_time_s:.3f} s/step, MFU {best.mfu:.1%}"
    )
    if b is not None:
        c = b.candidate
        print(
            f"  published {c.layout()} (vpp {c.vpp}, zero {c.zero}, {c.recompute}): {c.step_time_s:.3f} s/step, "
            f"rank {b.rank} of {b.feasible_total:,} feasible; best same-shape variant rank {b.shape_rank}"
        )


def bench_sweep() -> None:
    from wanka.planner import LocalExecutor, load_sweep, run_chunk, run_sweep
    from wanka.store import RunStore

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bench.yaml"
        path.write_text(SWEEP, encoding="utf-8")
        spec = load_sweep(path)
        walls: dict[int, float] = {}
        for workers in (1, 2):
            ex = LocalExecutor(workers)
            ex.warm_up()
            # prime each worker's per-process caches (catalog, flow model) outside the timing
            pts = list(enumerate(spec.points()))
            list(ex.map_chunks(run_chunk, spec.job, [pts[i : i + 1] for i in range(workers * 4)]))
            with RunStore(Path(d) / f"w{workers}.db") as store:
                t0 = time.perf_counter()
                res = run_sweep(spec, store, ex)
                walls[workers] = time.perf_counter() - t0
                busy = sum(p.elapsed_s or 0.0 for p in store.points(res.run.id))
            ex.close()
            assert res.computed == spec.size == 1000 and res.errors == 0
            print(
                f"sweep of {spec.size:,} plans, {workers} worker(s): {walls[workers]:.2f} s wall, "
                f"{walls[workers] / spec.size * 1e3:.2f} ms/point, {busy / spec.size * 1e3:.2f} ms/point in workers"
            )
        ratio = walls[1] / walls[2]
        print(f"  speed-up 1 -> 2 workers: {ratio:.2f}x (linear = 2.00x; target >= 1.60x)")


def main() -> None:
    bench_search()
    bench_sweep()


if __name__ == "__main__":
    main()
