"""Start-up and YAML speed: ``wanka --help`` and ``wanka plan PRESET`` as a ratio to ``python -c pass``
(targets: ≤ 0.25 s and ≤ 0.5 s on the reference machine), and the C vs pure-Python YAML loader.

Run: ``.venv/bin/python benchmarks/bench_startup.py [repeats]``. Medians of ``repeats`` runs each (default 7);
the ratio is what carries across machines: a loaded CI box scales every figure alike.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WANKA = [sys.executable, "-c", "import sys; from wanka.cli import main; sys.exit(main())"]


def _median(argv: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


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
    base = _median([sys.executable, "-c", "pass"], repeats)
    print(f"python -c pass            {base * 1e3:7.0f} ms")
    for label, args, target in (
        ("wanka --help", ["--help"], 0.25),
        ("wanka schema", ["schema"], None),
        ("wanka show PRESET", ["show", "traditional-512-a100"], None),
        ("wanka plan PRESET", ["plan", "traditional-512-a100"], 0.5),
    ):
        t = _median([*WANKA, *args], repeats)
        goal = f"  (target ≤ {target} s)" if target else ""
        print(f"{label:<25} {t * 1e3:7.0f} ms  = {t / base:5.1f} × python -c pass{goal}")
    fast, slow = _yaml(3)
    print(
        f"YAML public_runs.yaml (80 cases): C loader {fast * 1e3:.1f} ms, pure Python {slow * 1e3:.1f} ms "
        f"({slow / fast:.1f}× faster)"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
