"""`wanka plan`: step time, breakdown, memory, MFU and time to train of a scenario's job."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from wanka.cli.app import app, console, emit_json, write_text_atomic
from wanka.engine import StepResult, chrome_trace, estimate_step
from wanka.errors import InfeasibleError, WankaError
from wanka.spec import Scenario, load_scenario
from wanka.units import format_bytes, format_duration

_LABELS = {
    "compute": "compute fwd+bwd",
    "recompute": "recompute",
    "tp_comm": "TP comm (exposed)",
    "cp_comm": "CP comm (exposed)",
    "ep_comm": "EP all-to-all (exposed)",
    "pp_bubble": "PP bubble",
    "pp_comm": "PP p2p (exposed)",
    "dp_comm": "DP comm (exposed)",
    "optimizer": "optimizer",
    "stragglers": "waiting for stragglers",
}


def _checkpoint(sc: Scenario) -> dict[str, float] | None:
    try:
        from wanka.storage import checkpoint_io
    except ImportError:  # pragma: no cover - storage is part of the package
        return None
    try:
        io = checkpoint_io(sc)
    except WankaError:
        return None
    return {
        "size_bytes": io.size_bytes,
        "save_s": io.save_s,
        "blocking_s": io.blocking_s,
        "load_s": io.load_s,
    }


def plan_dict(sc: Scenario, r: StepResult) -> dict[str, object]:
    d = r.to_dict()
    d["scenario"] = sc.name
    d["model"] = sc.model.name if sc.model else None
    d["accelerator"] = sc.cluster.accelerator
    d["checkpoint"] = _checkpoint(sc)
    return d


def _bar(frac: float, width: int = 28) -> str:
    n = frac * width
    full = int(n)
    return "█" * full + ("▌" if n - full >= 0.5 else ("▏" if frac > 0 and full == 0 else ""))


def print_plan(sc: Scenario, r: StepResult) -> None:
    st = r.strategy
    assert sc.model is not None and sc.training is not None
    console.print(
        f"[bold]{sc.model.name}[/] on [bold]{sc.name}[/] · {r.gpus:,} × {sc.cluster.accelerator} · "
        f"{sc.training.precision.upper()}"
    )
    console.print(
        f"strategy  tp {st['tp']} · pp {st['pp']} (vpp {st['vpp']}) · dp {st['dp']} · cp {st['cp']} · "
        f"ep {st['ep']} · zero {st['zero']} · recompute {st['recompute']} · micro-batch {st['micro_batch']} · "
        f"global batch {sc.training.global_batch_seqs:,} × {sc.seq_len:,} tok"
    )
    console.print()
    console.print(
        f" step time  {r.step_time_s:.3f} s    tokens/s/GPU {r.tokens_per_s_per_gpu:,.0f}    "
        f"MFU {r.mfu:.1%}  (model FLOPs 6N + attention)    HFU {r.hfu:.1%}"
    )
    t = Table(show_header=False, box=None, pad_edge=False)
    for k, v in r.breakdown.items():
        if v <= 0:
            continue
        t.add_row(f"  {_LABELS[k]}", f"{v:8.3f} s", f"{v / r.step_time_s:6.1%}", _bar(v / r.step_time_s))
    console.print(t)
    for link, label in (("nic", "NIC"), ("scale_up", "scale-up")):
        use = {k: v for k, v in r.link_busy_s.get(link, {}).items() if v > 0}
        if use:
            parts = " · ".join(f"{k.upper()} {v:.3f} s" for k, v in sorted(use.items(), key=lambda kv: -kv[1]))
            console.print(f" {label} busy  {sum(use.values()):.3f} s/step at achievable bandwidth ({parts})")
    m = r.memory
    mark = "✓" if m.fits else "✗ does not fit"
    console.print(
        f" memory / GPU  weights {format_bytes(m.weights)} · grads {format_bytes(m.gradients)} · "
        f"optimizer {format_bytes(m.optimizer)} · activations {format_bytes(m.activations)} · "
        f"buffers {format_bytes(m.buffers)} = {format_bytes(m.total)} of {format_bytes(m.capacity)} {mark}"
    )
    console.print(
        f" time to train  {sc.training.tokens / 1e12:,.2f} T tokens → {format_duration(r.time_to_train_s)} "
        "at steady state (see `wanka reliability` for restarts)"
    )
    ck = _checkpoint(sc)
    if ck:
        console.print(
            f" checkpoint     {format_bytes(ck['size_bytes'])}: save {format_duration(ck['save_s'])} "
            f"(training stalls {format_duration(ck['blocking_s'])}, {sc.checkpoint.mode}), "
            f"load {format_duration(ck['load_s'])}"
        )
    notes = list(r.assumptions) + list(sc.assumptions)
    if notes:
        console.print(" assumptions    " + "\n                ".join(notes[:8]))


@app.command("plan")
def plan(
    scenario: Annotated[str, typer.Argument(help="preset name or scenario YAML file")],
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
    trace: Annotated[Path | None, typer.Option("--trace", help="write one iteration as Chrome-trace JSON")] = None,
) -> None:
    """Step time, its breakdown, memory per GPU, MFU and time to train of a scenario's job.

    A scenario without a `parallel:` block gets the fastest strategy `wanka search` finds.
    """
    sc = load_scenario(scenario)
    chosen = False
    if sc.parallel is None and sc.model is not None and sc.training is not None:
        from wanka.planner import candidate_scenario, search

        best = search(sc, top=1).top
        if not best:
            raise InfeasibleError(f"no parallel strategy for {sc.name!r} fits; see `wanka search {scenario}`")
        sc = candidate_scenario(sc, best[0])
        chosen = True
    r = estimate_step(sc)
    if trace is not None:
        write_text_atomic(trace, json.dumps(chrome_trace(r, name=sc.name)), field="--trace")
    if json_out:
        d = plan_dict(sc, r)
        d["strategy_from"] = "wanka search (fastest)" if chosen else "scenario"
        emit_json(d)
        return
    print_plan(sc, r)
    if chosen:
        console.print(" strategy from  `wanka search` (the scenario gives no parallel: block)")
    if trace is not None:
        console.print(f" trace          {trace} (open in https://ui.perfetto.dev or chrome://tracing)")
