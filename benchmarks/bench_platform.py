"""Scheduler throughput: 100,000 synthetic LLM jobs on a 16,384-GPU cluster (target < 30 s, one core).

Run: ``.venv/bin/python benchmarks/bench_platform.py [jobs]``. Prints wall time, jobs/s and µs per
job for each policy (topology-aware placement, node failures on), plus the generator's cost.
"""

from __future__ import annotations

import sys
import time

from wanka.platform import simulate, synthetic_workload
from wanka.spec import ClusterSpec


def main(jobs: int = 100_000) -> None:
    spec = ClusterSpec(name="bench-16k", accelerator="H100", nodes=2048, fabric={"tiers": 3})
    for load, policies in ((1.2, ("easy_backfill", "fifo")), (1.5, ("easy_backfill",))):
        _run(spec, jobs, load, policies)


def _run(spec: ClusterSpec, jobs: int, load: float, policies: tuple[str, ...]) -> None:
    t = time.perf_counter()
    wl = synthetic_workload("acme-seren", spec, jobs=jobs, seed=0, load=load)
    gen = time.perf_counter() - t
    print(f"acme-seren × {jobs:,} jobs on {spec.accelerators:,} GPUs, offered load {load}: generated in {gen:.2f} s")
    for policy in policies:
        t = time.perf_counter()
        r = simulate(spec, wl, policy, "topology_aware", seed=0)
        dt = time.perf_counter() - t
        print(
            f"  {policy:<18} {dt:6.2f} s  {jobs / dt:9,.0f} jobs/s  {1e6 * dt / jobs:6.1f} µs/job  "
            f"util(arrivals) {r.utilization_arrivals:.1%}  mean queue {r.queue_delay_s.mean:,.0f} s  "
            f"preemptions {r.preemptions:,}  failures {r.node_failures}"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
