"""One training iteration as a Chrome trace (chrome://tracing, Perfetto): a process per pipeline
stage, with compute and communication on separate rows.

The schedule is non-interleaved 1F1B (Narayanan et al. 2021, Fig. 4) with the engine's per-stage
forward/backward times; exposed TP/CP/EP communication is drawn on the communication row at the
end of each micro-batch's compute block, DP communication and the optimizer after the last
backward. With ``vpp > 1`` the engine's bubble is smaller than drawn; the trace names this.
"""

from __future__ import annotations

from typing import Any

from wanka.engine.result import StepResult

__all__ = ["chrome_trace"]


def chrome_trace(result: StepResult, *, name: str = "wanka", max_micro_batches: int = 256) -> dict[str, Any]:
    """A Chrome-trace JSON object (``traceEvents``) for one iteration of ``result``."""
    st = result.strategy
    p = int(st["pp"])
    m = min(result.micro_batches, max_micro_batches)
    b = result.breakdown
    mb = max(result.micro_batches, 1)
    comm_mb = (b["tp_comm"] + b["cp_comm"] + b["ep_comm"]) / mb
    t_f = (b["compute"] / mb) / 3.0 + comm_mb / 3.0
    t_b = (b["compute"] / mb) * 2.0 / 3.0 + b["recompute"] / mb + comm_mb * 2.0 / 3.0
    p2p = b["pp_comm"] / max(1, 2 * (mb + p - 1)) if p > 1 else 0.0
    us = 1e6
    events: list[dict[str, Any]] = []
    for s in range(p):
        events.append({"ph": "M", "name": "process_name", "pid": s, "args": {"name": f"stage {s}"}})
        events.append({"ph": "M", "name": "thread_name", "pid": s, "tid": 0, "args": {"name": "compute"}})
        events.append({"ph": "M", "name": "thread_name", "pid": s, "tid": 1, "args": {"name": "communication"}})
    # order of work per stage (1F1B)
    orders = []
    for s in range(p):
        warm = min(p - s - 1, m)
        seq: list[tuple[str, int]] = [("F", i) for i in range(warm)]
        f_next, b_next = warm, 0
        while b_next < m:
            if f_next < m:
                seq.append(("F", f_next))
                f_next += 1
            seq.append(("B", b_next))
            b_next += 1
        orders.append(seq)
    done: dict[tuple[str, int, int], float] = {}
    free = [0.0] * p
    pos = [0] * p
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for s in range(p):
            while pos[s] < len(orders[s]):
                kind, i = orders[s][pos[s]]
                if kind == "F":
                    dep = done.get(("F", s - 1, i)) if s > 0 else 0.0
                else:
                    dep = done.get(("B", s + 1, i)) if s < p - 1 else done.get(("F", s, i))
                if dep is None:
                    break
                start = max(free[s], dep + (p2p if (kind == "F" and s > 0) or (kind == "B" and s < p - 1) else 0.0))
                dur = t_f if kind == "F" else t_b
                events.append(
                    {
                        "ph": "X",
                        "name": f"{'forward' if kind == 'F' else 'backward'} mb{i}",
                        "cat": "compute",
                        "pid": s,
                        "tid": 0,
                        "ts": start * us,
                        "dur": dur * us,
                    }
                )
                if comm_mb > 0:
                    c = comm_mb / 3.0 if kind == "F" else comm_mb * 2.0 / 3.0
                    events.append(
                        {
                            "ph": "X",
                            "name": "tp/cp/ep comm (exposed)",
                            "cat": "comm",
                            "pid": s,
                            "tid": 1,
                            "ts": (start + dur - c) * us,
                            "dur": c * us,
                        }
                    )
                done[(kind, s, i)] = start + dur
                free[s] = start + dur
                pos[s] += 1
                remaining -= 1
                progressed = True
        if not progressed:  # pragma: no cover - the schedule above is always satisfiable
            raise RuntimeError("1F1B schedule deadlocked")
    for s in range(p):
        t = free[s]
        if b["dp_comm"] > 0:
            events.append(
                {
                    "ph": "X",
                    "name": "dp grad reduce-scatter / param all-gather (exposed)",
                    "cat": "comm",
                    "pid": s,
                    "tid": 1,
                    "ts": t * us,
                    "dur": b["dp_comm"] * us,
                }
            )
            t += b["dp_comm"]
        events.append(
            {
                "ph": "X",
                "name": "optimizer step",
                "cat": "compute",
                "pid": s,
                "tid": 0,
                "ts": t * us,
                "dur": b["optimizer"] * us,
            }
        )
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "name": name,
            "engine_step_time_s": result.step_time_s,
            "strategy": st,
            "micro_batches_drawn": m,
            "note": "non-interleaved 1F1B drawn; the engine's step time accounts for vpp"
            if int(st["vpp"]) > 1
            else "non-interleaved 1F1B",
        },
    }
