"""``wanka compare traditional-512-a100 meta-24k-h100-roce`` (what ``make run`` runs): wall clock of the
terminal command, and in-process the comparison with and without the story's what-ifs.

Target: the terminal compare ≤ ~2 s on the reference machine (it was ~10-15 s when every compare ran
the 超节点 / MoE / FP8 what-ifs, which only ``--html`` and ``--what-ifs`` show). Each in-process run
starts with an empty search cache, so it pays what one command pays.

Run: ``.venv/bin/python benchmarks/bench_compare.py [repeats]`` (medians; default 3).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

PAIR = ("traditional-512-a100", "meta-24k-h100-roce")
WANKA = [sys.executable, "-c", "import sys; from wanka.cli import main; sys.exit(main())"]


def _cli(args: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run([*WANKA, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _in_process(what_ifs: bool, repeats: int) -> float:
    from wanka.planner import presets
    from wanka.report.compare import compare
    from wanka.spec import load_scenario

    scenarios = [load_scenario(s) for s in PAIR]
    times = []
    for _ in range(repeats):
        presets._CACHE.clear()  # a cold search cache, as one command starts
        t = time.perf_counter()
        compare(scenarios, what_ifs=what_ifs)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(repeats: int = 3) -> None:
    base = _cli(["--help"], repeats)
    print(f"wanka --help                          {base:6.2f} s")
    t = _cli(["compare", *PAIR], repeats)
    print(f"wanka compare {PAIR[0]} {PAIR[1]}  {t:6.2f} s  (target ≤ ~2 s)")
    fast = _in_process(False, repeats)
    slow = _in_process(True, 1)
    print(f"compare() without what-ifs (terminal, --json)  {fast:6.2f} s")
    print(f"compare() with what-ifs (--html, --what-ifs)   {slow:6.2f} s  ({slow / fast:.1f}× the terminal's)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
