"""``python -m benchmarks``: run every benchmark and print its figures."""

from __future__ import annotations

import importlib

for name in (
    "bench_compare",
    "bench_engine",
    "bench_network",
    "bench_ops",
    "bench_platform",
    "bench_planner",
    "bench_serve",
    "bench_startup",
    "check_extra_runs",
    "check_recipe_rank",
):
    print(f"== {name}")
    importlib.import_module(f"benchmarks.{name}").main()
