"""Start-up and YAML speed: ``wanka --help`` and ``wanka plan PRESET`` as a ratio to ``python -c pass``
(targets: ≤ 0.25 s and ≤ 0.5 s on the reference machine), and the C vs pure-Python YAML loader.

Run: ``.venv/bin/python benchmarks/bench_startup.py [repeats]``. Medians of ``repeats`` runs each (default 7)
of the child's CPU time (user + system), which a busy machine disturbs much less than the wall clock
(printed too); the ratio to ``python -c pass`` is what carries across machines. On an idle machine the
CPU time is the wall time of these single-threaded starts.

Two columns. *warm*: compiled bytecode available, as after ``pip install`` (which byte-compiles) or
after the first run of an editable install, with the caches kept beside it (parsed data files, the
built catalog, the flow model's contention factors, compiled dataclass methods: ``wanka.yamlio``,
``wanka.network.factor_cache``, ``wanka.cli.codecache``) — all go to a temporary
``PYTHONPYCACHEPREFIX``, so nothing is written into the source tree. *cold*: no bytecode at all
(``PYTHONDONTWRITEBYTECODE=1`` on a tree without ``__pycache__``), so every module of wanka and
its dependencies that is not already compiled is compiled on every run and no cache is read or
written. The targets are for *warm*; the 24,576-GPU preset (``wanka plan meta-24k-h100-roce``) is
the largest contention simulation a plan of a preset runs.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WANKA = [sys.executable, "-c", "import sys; from wanka.cli import main; sys.exit(main())"]
CASES: tuple[tuple[str, list[str], float | None], ...] = (
    ("wanka --help", ["--help"], 0.25),
    ("wanka schema", ["schema"], None),
    ("wanka show PRESET", ["show", "traditional-512-a100"], None),
    ("wanka plan PRESET", ["plan", "traditional-512-a100"], 0.5),
    ("wanka plan PRESET (24,576 GPUs)", ["plan", "meta-24k-h100-roce"], 0.5),
    ("wanka plan PRESET --json", ["plan", "traditional-512-a100", "--json"], None),
)


def _median(argv: list[str], repeats: int, env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of ``argv``, medians over ``repeats``."""
    cpu, wall = [], []
    for _ in range(repeats):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
        wall.append(time.perf_counter() - t)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
    return statistics.median(cpu), statistics.median(wall)


def _yaml(repeats: int) -> tuple[float, float]:
    from wanka import yamlio

    text = (ROOT / "src" / "wanka" / "data" / "validation" / "public_runs.yaml").read_text(encoding="utf-8")
    out = []
    for loader in (yamlio.FastLoader, yamlio.SafeLoader12):
        t = time.perf_counter()
        for _ in range(repeats):
            yamlio.parse(text, loader=loader)
        out.append((time.perf_counter() - t) / repeats)
    return out[0], out[1]


def main(repeats: int = 7) -> None:
    with tempfile.TemporaryDirectory(prefix="wanka-bench-pyc-") as prefix:
        warm = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        warm["PYTHONPYCACHEPREFIX"] = prefix
        cold = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
        cold["PYTHONDONTWRITEBYTECODE"] = "1"
        # the cold column reads no bytecode only where the tree has none: say so when it has some
        has_pyc = any((ROOT / "src" / "wanka").rglob("__pycache__"))
        base, base_wall = _median([sys.executable, "-c", "pass"], repeats, warm)
        for _, args, _ in CASES:  # compile everything once into the prefix
            subprocess.run([*WANKA, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=warm)
        cold_label = "cold (src has .pyc)" if has_pyc else "cold (no bytecode)"
        print(f"CPU time (wall){'':<17} {'warm (bytecode)':>34}   {cold_label:>20}")
        print(f"{'python -c pass':<32} {base * 1e3:6.0f} ms ({base_wall * 1e3:5.0f})")
        for label, args, target in CASES:
            tw, ww = _median([*WANKA, *args], repeats, warm)
            tc, wc = _median([*WANKA, *args], max(3, repeats // 2), cold)
            goal = f"   (target ≤ {target} s, warm)" if target else ""
            print(
                f"{label:<32} {tw * 1e3:6.0f} ms ({ww * 1e3:5.0f}) = {tw / base:5.1f} × pass   "
                f"{tc * 1e3:6.0f} ms ({wc * 1e3:5.0f}){goal}"
            )
    fast, slow = _yaml(3)
    print(
        f"YAML public_runs.yaml (80 cases): C loader {fast * 1e3:.1f} ms, pure Python {slow * 1e3:.1f} ms "
        f"({slow / fast:.1f}× faster)"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
