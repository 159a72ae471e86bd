"""Benchmark: Monte Carlo of a 54-day campaign on 16,384 GPUs (target: 10,000 replicas in < 2 s, one core).

Run: ``.venv/bin/python benchmarks/bench_ops.py``. Prints wall time, cost per replica and per event.
"""

from __future__ import annotations

import time

from wanka.errors import SpecError
from wanka.ops import campaign_inputs, run_campaign
from wanka.spec import Scenario, load_scenario, parse_scenario

STEP_S = 6.7  # Llama 3 405B at 400 TFLOP/s/GPU, 16M-token batch (Llama 3 paper Table 4)


def _scenario() -> Scenario:
    try:
        return load_scenario("llama3-405b-16k-h100-54d")
    except SpecError:
        return parse_scenario(
            {
                "cluster": {"accelerator": "H100", "nodes": 2048, "gpus_per_node": 8},
                "model": {
                    "n_layers": 126,
                    "hidden": 16384,
                    "n_heads": 128,
                    "n_kv_heads": 8,
                    "ffn_hidden": 53248,
                    "vocab": 128256,
                    "seq_len": 8192,
                },
                "training": {"tokens": 15.6e12, "global_batch_seqs": 2048},
                "parallel": {"tp": 8, "pp": 16, "dp": 128},
                "campaign_days": 54.0,
                "failures": {"hot_spares": 16, "planned_interruptions_per_day": 47 / 54},
            }
        )


def main() -> None:
    s = _scenario()
    t0 = time.perf_counter()
    inp = campaign_inputs(s, step_time_s=STEP_S)
    t_in = time.perf_counter() - t0
    for replicas in (1_000, 10_000):
        for mode in ("async", "in_memory"):
            run_in = (
                inp
                if mode == s.checkpoint.mode
                else campaign_inputs(
                    s.model_copy(update={"checkpoint": s.checkpoint.model_copy(update={"mode": mode})}),
                    step_time_s=STEP_S,
                )
            )
            t0 = time.perf_counter()
            r = run_campaign(run_in, replicas=replicas, seed=0)
            dt = time.perf_counter() - t0
            events = r.interruptions.mean * replicas
            print(
                f"{replicas:>6,} replicas · {mode:<9} · {dt:6.3f} s · "
                f"{dt / replicas * 1e6:7.1f} µs/replica · "
                f"{dt / events * 1e9:6.0f} ns/event · {r.interruptions.mean:.0f} interruptions, "
                f"ETTR {r.ettr.mean:.3f}"
            )
    print(f"inputs (rates, checkpoint I/O, recovery): {t_in * 1e3:.1f} ms · target: 10,000 replicas < 2 s")


if __name__ == "__main__":
    main()
