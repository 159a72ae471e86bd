"""`wanka plan`: step time, breakdown, memory, MFU and time to train of a scenario's job."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer

from wanka.cli.app import app, check_output_path, console, emit_json, print_table, write_text_atomic
from wanka.engine import StepResult, chrome_trace
from wanka.errors import SpecError, WankaError
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


def _checkpoint(sc: Scenario, io: Any | None = None) -> dict[str, float] | None:
    """The checkpoint figures of ``io`` (the service's storage layer), or of ``sc`` when not given."""
    if io is None:
        from wanka.service import assess

        io = assess(sc, ("storage",)).checkpoint
    if io is None:
        return None
    return {
        "size_bytes": io.size_bytes,
        "save_s": io.save_s,
        "blocking_s": io.blocking_s,
        "load_s": io.load_s,
    }


def plan_dict(sc: Scenario, r: StepResult, checkpoint: Any | None = None) -> dict[str, object]:
    d = r.to_dict()
    d["scenario"] = sc.name
    d["model"] = sc.model.name if sc.model else None
    d["accelerator"] = sc.cluster.accelerator
    d["checkpoint"] = _checkpoint(sc, checkpoint)
    d["operating_assumptions"] = _operating_assumptions(sc, r.step_time_s)
    return d


def _bar(frac: float, width: int = 28) -> str:
    n = frac * width
    full = int(n)
    return "█" * full + ("▌" if n - full >= 0.5 else ("▏" if frac > 0 and full == 0 else ""))


def print_plan(sc: Scenario, r: StepResult, checkpoint: Any | None = None) -> None:
    from rich.table import Table

    from wanka.cli.lang import current, lbl, tr, tx

    lang = current()
    if lang == "zh":  # wanka.report loads its comparison and claims modules with it (~10 ms)
        from wanka.report.i18n import plain_words
    st = r.strategy
    assert sc.model is not None and sc.training is not None
    console.print(
        f"[bold]{sc.model.name}[/] {tx('on')} [bold]{sc.name}[/] · {r.gpus:,} × {sc.cluster.accelerator} · "
        f"{sc.training.precision.upper()}" + (" · Muon" if sc.training.optimizer == "muon" else "")
    )
    cp_kind = f" ({st.get('cp_comm_type', 'p2p')})" if int(st["cp"]) > 1 else ""
    schedule = sc.parallel.pp_schedule if sc.parallel is not None and int(st["pp"]) > 1 else "1f1b"
    sched = {"dualpipe": ", DualPipe", "zero_bubble": ", " + tx("zero-bubble ZB-H1")}.get(schedule, "")
    console.print(
        f"{lbl('strategy', 10)}tp {st['tp']} · pp {st['pp']} (vpp {st['vpp']}{sched}) · dp {st['dp']} · "
        f"cp {st['cp']}{cp_kind} · "
        f"ep {st['ep']} · zero {st['zero']} · {tx('recompute')} {st['recompute']}"
        + (f" · offload {st['offload_layers']} layers" if st.get("offload_layers") else "")
        + f" · micro-batch {st['micro_batch']} · "
        f"{tx('global batch')} {sc.training.global_batch_seqs:,} × {sc.seq_len:,} tok"
    )
    console.print()
    console.print(
        f" {lbl('step time', 11)}{r.step_time_s:.3f} s    {tx('tokens/s/GPU')} {r.tokens_per_s_per_gpu:,.0f}    "
        f"MFU {r.mfu:.1%}  {tx('(model FLOPs 6N + attention)')}    HFU {r.hfu:.1%}"
    )
    t = Table(show_header=False, box=None, pad_edge=False)
    for k, v in r.breakdown.items():
        if v <= 0:
            continue
        t.add_row(f"  {tx(_LABELS[k])}", f"{v:8.3f} s", f"{v / r.step_time_s:6.1%}", _bar(v / r.step_time_s))
    print_table(t)
    for link, label in (("nic", "NIC"), ("scale_up", "scale-up")):
        use = {k: v for k, v in r.link_busy_s.get(link, {}).items() if v > 0}
        if use:
            parts = " · ".join(f"{k.upper()} {v:.3f} s" for k, v in sorted(use.items(), key=lambda kv: -kv[1]))
            console.print(
                tr(
                    f" {label} busy  {sum(use.values()):.3f} s/step at achievable bandwidth ({parts})",
                    f" {tx(label)} 占用  {sum(use.values()):.3f} 秒/步（按可达带宽；{parts}）",
                )
            )
    m = r.memory
    mark = "✓" if m.fits else f"✗ {tx('does not fit')}"
    console.print(
        f" {lbl('memory / GPU', 14)}{tx('weights')} {format_bytes(m.weights)} · {tx('grads')} "
        f"{format_bytes(m.gradients)} · {tx('optimizer')} {format_bytes(m.optimizer)} · {tx('activations')} "
        f"{format_bytes(m.activations)} · {tx('buffers')} {format_bytes(m.buffers)} = {format_bytes(m.total)} "
        f"{tx('of')} {format_bytes(m.capacity)} {mark}"
    )
    if m.offloaded > 0:
        host = "" if m.host_capacity == float("inf") else f" {tx('of')} {format_bytes(m.host_capacity)}"
        console.print(
            f" {lbl('host memory', 14)}{tx('offloaded activations')} {format_bytes(m.offloaded)}{host} "
            + ("✓" if m.fits_host else f"✗ {tx('does not fit')}")
        )
    console.print(
        f" {lbl('time to train', 15)}{sc.training.tokens / 1e12:,.2f} T tokens → {format_duration(r.time_to_train_s)} "
        f"{tx('at steady state (see `wanka reliability` for restarts)')}"
    )
    ck = _checkpoint(sc, checkpoint)
    if ck:
        console.print(
            f" {lbl('checkpoint', 15)}{format_bytes(ck['size_bytes'])}: {tx('save')} {format_duration(ck['save_s'])} "
            f"({tx('training stalls')} {format_duration(ck['blocking_s'])}, {sc.checkpoint.mode}), "
            f"{tx('load')} {format_duration(ck['load_s'])}"
        )
    batch = [a for a in sc.assumptions if a.startswith("training.batch_tokens")]
    notes = batch + list(r.assumptions) + [a for a in sc.assumptions if a not in batch]
    if lang == "zh":
        notes = [plain_words(a, lang) for a in notes]
    if notes:
        console.print(f" {lbl('assumptions', 15)}" + "\n                ".join(notes), markup=False)
    ops_notes = _operating_assumptions(sc, r.step_time_s)
    if lang == "zh":
        ops_notes = [plain_words(a, lang) for a in ops_notes]
    if ops_notes:  # defaults that move ETTR, energy or cost (spares, recovery, checkpoint, price, grid, PUE)
        console.print(f" {lbl('operating', 15)}" + "\n                ".join(ops_notes), markup=False)


def _operating_assumptions(sc: Scenario, step_time_s: float) -> list[str]:
    from wanka.facility import facility_assumptions
    from wanka.ops import operating_assumptions

    try:
        return [*operating_assumptions(sc, step_time_s=step_time_s), *facility_assumptions(sc)]
    except WankaError:
        return []


@app.command("plan")
def plan(
    scenario: Annotated[str, typer.Argument(help="preset name or scenario YAML file")],
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
    trace: Annotated[Path | None, typer.Option("--trace", help="write one iteration as Chrome-trace JSON")] = None,
    export: Annotated[
        str | None,
        typer.Option("--export", help="print the strategy as launch arguments: megatron (pretrain_gpt.py) or nemo"),
    ] = None,
) -> None:
    """Step time, its breakdown, memory per GPU, MFU and time to train of a scenario's job.

    A scenario without a `parallel:` block gets the fastest strategy `wanka search` finds.
    """
    check_output_path(trace, field="--trace")
    if export is not None and export not in ("megatron", "nemo"):  # wanka.planner.export.EXPORT_FORMATS
        raise SpecError(f"= {export!r} — must be one of megatron, nemo", field="--export")
    if export is not None:  # the strategy only: the one picker (preset "search"), no step model
        from wanka.planner.export import launch_args
        from wanka.planner.pick import with_strategy

        sc, _ = with_strategy(load_scenario(scenario))
        args = launch_args(sc, export)
        if json_out:
            emit_json({"framework": export, "scenario": sc.name, "gpus": sc.gpus, "args": args})
        else:
            dp = sc.parallel.dp if sc.parallel else 1
            console.print(f"# {sc.name}: {sc.gpus:,} GPUs (data parallel {dp} = world / tp·pp·cp)", markup=False)
            console.print(" \\\n".join(args), markup=False, highlight=False)
        return
    from wanka.service import assess

    # the service runs the engine (a scenario without a strategy gets `wanka search`'s fastest,
    # preset "search") and the storage layer; a strategy that cannot run is an error, not a search
    a = assess(load_scenario(scenario), ("engine", "storage"), preset="search", fallback=False)
    a.check("engine")
    sc, r = a.scenario, a.step
    assert r is not None
    chosen = a.strategy is not None and a.strategy.searched
    if trace is not None:
        write_text_atomic(trace, json.dumps(chrome_trace(r, name=sc.name)), field="--trace")
    from wanka.catalog.envelope import published_envelope

    assert sc.training is not None
    env = published_envelope(sc.cluster.accelerator, sc.training.precision, r.gpus)
    above = None if env is None else env.above(r.mfu)
    if json_out:
        d = plan_dict(sc, r, a.checkpoint)
        d["strategy_from"] = "wanka search (fastest)" if chosen else "scenario"
        # the highest MFU among the published runs on this accelerator and precision with at least this
        # job's GPUs (None: none known)
        d["published_mfu"] = None if env is None else {**asdict(env), "above": above is not None}
        emit_json(d)
        return
    print_plan(sc, r, a.checkpoint)
    from wanka.cli.lang import lbl, tx

    if above is not None:
        console.print(f" {lbl('published', 15)}{tx(above)}", markup=False)
    if chosen:
        console.print(f" {lbl('strategy from', 15)}{tx('`wanka search` (the scenario gives no parallel: block)')}")
    if trace is not None:
        console.print(f" {lbl('trace', 15)}{trace} {tx('(open in https://ui.perfetto.dev or chrome://tracing)')}")
