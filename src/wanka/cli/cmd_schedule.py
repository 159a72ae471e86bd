"""``wanka schedule``: replay a trace or a synthetic LLM workload through the cluster scheduler."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from wanka.cli.app import app, console, emit_json, print_table
from wanka.cli.lang import tr, tx
from wanka.errors import SpecError
from wanka.platform import (
    PLACEMENTS,
    SCHEDULERS,
    SYNTHETIC_WORKLOADS,
    Cluster,
    FailureModel,
    ScheduleResult,
    Workload,
    builtin_cluster,
    cluster_failure_model,
    load_node_list,
    load_trace,
    simulate,
    synthetic_workload,
)
from wanka.platform.workloads import BUILTIN_CLUSTERS
from wanka.spec import load_scenario
from wanka.spec.io import load_cluster, read_yaml

__all__ = ["schedule"]


def _cluster(name: str) -> tuple[Cluster, FailureModel | None]:
    """The cluster, and for a spec its per-node failures from the operations layer (None: default)."""
    p = Path(name)
    if p.suffix == ".csv":
        return load_node_list(p), None
    if name in BUILTIN_CLUSTERS and not p.exists():
        return builtin_cluster(name), None
    if p.suffix in (".yaml", ".yml", ".json"):
        if not p.exists():
            raise SpecError(f"no such file: {p}", field="--cluster")
        data, _ = read_yaml(p)
        if isinstance(data, dict) and "cluster" not in data:  # a bare ClusterSpec
            spec = load_cluster(p)
            return Cluster.from_spec(spec), cluster_failure_model(spec)
    try:
        sc = load_scenario(name)
        return Cluster.from_spec(sc.cluster), cluster_failure_model(sc.cluster, sc.failures)
    except SpecError as e:
        raise SpecError(
            f"{e}; or a node list .csv, or a bundled node list: {', '.join(BUILTIN_CLUSTERS)}",
            field="--cluster",
        ) from None


def _table(results: list[ScheduleResult]) -> Table:
    t = Table(
        title=tr(
            f"{results[0].workload} on {results[0].cluster} · {results[0].gpus:,} GPUs "
            f"· {results[0].jobs:,} jobs · {results[0].placement}",
            f"{results[0].workload}，{results[0].cluster} · {results[0].gpus:,} 卡 "
            f"· {results[0].jobs:,} 个作业 · {results[0].placement}",
        ),
        show_header=True,
    )
    t.add_column("", no_wrap=True)
    for r in results:
        t.add_column(r.policy.replace("_", " "), justify="right")

    def row(label: str, f: Any) -> None:
        t.add_row(label, *[f(r) for r in results])

    row(
        tx("completed"),
        lambda r: (
            f"{r.completed:,}" + (tr(f" (+{r.unfinished} stuck)", f"（+{r.unfinished} 卡住）") if r.unfinished else "")
        ),
    )
    row(tx("rejected (too big)"), lambda r: f"{r.rejected:,}")
    row(tx("utilisation (makespan)"), lambda r: f"{r.utilization:.1%}")
    row(tx("utilisation (arrivals)"), lambda r: f"{r.utilization_arrivals:.1%}")
    row(tx("queue delay mean"), lambda r: f"{r.queue_delay_s.mean:,.0f} s")
    row(tx("queue delay median"), lambda r: f"{r.queue_delay_s.median:,.0f} s")
    row(tx("queue delay p99"), lambda r: f"{r.queue_delay_s.p99:,.0f} s")
    for label in results[0].queue_delay_by_size:
        row(
            tr(f"  mean, {label} GPUs", f"  均值，{label} 卡"),
            lambda r, lb=label: f"{r.queue_delay_by_size[lb].mean:,.0f} s" if lb in r.queue_delay_by_size else "-",
        )
    row(tx("JCT mean / median"), lambda r: f"{r.jct_s.mean:,.0f} / {r.jct_s.median:,.0f} s")
    row(
        tx("fragmentation"),
        lambda r: (
            f"{r.fragmentation:.2%} "
            + tr(f"({r.fragmentation_of_free:.1%} of free)", f"（占空闲 {r.fragmentation_of_free:.1%}）")
        ),
    )
    row(
        tx("multi-node jobs in 1 leaf"),
        lambda r: f"{r.placement_locality.within_leaf:.1%} {tx('of')} {r.placement_locality.multi_node_jobs:,}",
    )
    row(tx("multi-node jobs in 1 pod"), lambda r: f"{r.placement_locality.within_pod:.1%}")
    row(tx("preemptions"), lambda r: f"{r.preemptions:,}")
    row(tx("node failures / restarts"), lambda r: f"{r.node_failures:,} / {r.job_restarts:,}")
    row(
        tx("GPU-h lost (fail / preempt)"),
        lambda r: f"{r.gpu_hours_lost_failures:,.0f} / {r.gpu_hours_lost_preemption:,.0f}",
    )
    return t


@app.command("schedule")
def schedule(
    cluster: str = typer.Option(
        ...,
        "--cluster",
        help="scenario preset, scenario/cluster YAML, node-list "
        f"CSV, or a bundled node list ({', '.join(BUILTIN_CLUSTERS)})",
    ),
    trace: str | None = typer.Option(
        None,
        "--trace",
        help="job trace CSV (PAI 2023 pod list or submit_s,duration_s,gpus[,tenant,priority,tp]) or 'alibaba-pai-2023'",
    ),
    synthetic: str | None = typer.Option(None, "--synthetic", help=f"one of {', '.join(SYNTHETIC_WORKLOADS)}"),
    policy: str = typer.Option("easy_backfill", "--policy", help=f"one of {', '.join(SCHEDULERS)}"),
    placement: str = typer.Option("topology_aware", "--placement", help=f"one of {', '.join(PLACEMENTS)}"),
    jobs: int | None = typer.Option(
        None, "--jobs", help="synthetic: number of jobs (default 2000); trace: keep the first N"
    ),
    load: float | None = typer.Option(
        None,
        "--load",
        help="synthetic: offered load (GPU-s asked per s / GPUs); default: the source cluster's "
        "occupancy (acme-seren 0.59, acme-kalos 0.21)",
    ),
    warm_start: bool = typer.Option(
        True, "--warm-start/--cold-start", help="synthetic: start with the cluster in steady state, not empty"
    ),
    seed: int = typer.Option(0, "--seed", min=0, max=2**32 - 1, help="random seed"),
    failures: bool = typer.Option(True, "--failures/--no-failures", help="node failures (wanka.ops per-node rates)"),
    compare_policies: bool = typer.Option(False, "--compare-policies", help="run every policy side by side"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Simulate the cluster scheduler on a trace or a synthetic LLM workload."""
    if (trace is None) == (synthetic is None):
        raise SpecError("give exactly one of --trace FILE or --synthetic NAME", field="--trace")
    if jobs is not None and jobs < 1:
        raise SpecError(f"= {jobs}: must be ≥ 1", field="--jobs")
    c, fm = _cluster(cluster)
    wl: Workload
    if synthetic is not None:
        if load is not None and not 0 < load <= 10:  # also refuses nan
            raise SpecError(f"= {load!r}: offered load must be in (0, 10]", field="--load")
        wl = synthetic_workload(synthetic, c, jobs or 2000, seed=seed, load=load, warm_start=warm_start)
    else:
        assert trace is not None
        wl = load_trace(trace)
        if jobs is not None:
            wl = wl.head(jobs)
    policies = list(SCHEDULERS) if compare_policies else [policy]
    fail: FailureModel | bool = (fm or True) if failures else False
    results = [simulate(c, wl, p, placement, seed=seed, failures=fail) for p in policies]
    if as_json:
        if compare_policies:
            emit_json({"policies": {r.policy: r.to_dict() for r in results}})
        else:
            emit_json(results[0].to_dict())
        return
    print_table(_table(results))
    for note in results[0].notes:
        console.print(f"  {tx('note')}: {note}", markup=False)
