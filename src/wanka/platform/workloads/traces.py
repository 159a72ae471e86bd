"""Loaders for real cluster traces (bundled under ``wanka/data/traces``) and a generic CSV format.

Job traces:

- Alibaba PAI 2023 pod list (``openb_pod_list_*.csv``, Weng et al., ATC '23): one pod per row,
  ``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
  deletion_time,scheduled_time`` (s). Submit = creation, run time = deletion − scheduled. Rows
  with ``num_gpu = 0`` (CPU pods) and rows never scheduled (``scheduled_time`` empty) are skipped
  and counted. A shared GPU (``gpu_milli < 1000``) is allocated whole: this scheduler does not
  split GPUs. ``gpu_spec`` (``|``-separated models) restricts the nodes. ``qos`` becomes the
  tenant; LS and Guaranteed pods get priority 1, the rest 0.
- Generic CSV: header ``submit_s,duration_s,gpus`` and optionally ``tenant,priority,tp``.

Node lists: the PAI 2023 ``openb_node_list_*.csv`` (``sn,cpu_milli,memory_mib,gpu,model``) and
the Philly ``cluster_machine_list`` (``machineId, number of GPUs, single GPU mem``). Philly job
run times (``philly_runtime_from_alibaba_analysis.csv``) load as an array.

A malformed row raises :class:`~wanka.errors.TraceError` naming the file, line and column.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import numpy as np

from wanka import fileio
from wanka.errors import SpecError, TraceError
from wanka.platform.cluster import Cluster
from wanka.platform.jobs import Job, Workload

__all__ = [
    "BUILTIN_CLUSTERS",
    "BUILTIN_TRACES",
    "builtin_cluster",
    "builtin_trace",
    "load_generic_trace",
    "load_node_list",
    "load_pai_pods",
    "load_philly_machines",
    "load_philly_runtimes",
    "load_trace",
    "trace_path",
]

BUILTIN_TRACES = {"alibaba-pai-2023": "alibaba-pai-v2023/openb_pod_list_default.csv"}
BUILTIN_CLUSTERS = {
    "alibaba-pai-2023": "alibaba-pai-v2023/openb_node_list_gpu_node.csv",
    "philly": "philly/cluster_machine_list.csv",
}
_PAI_PRIORITY = {"LS": 1, "Guaranteed": 1, "Burstable": 0, "BE": 0}
_MAX_ROWS = 5_000_000  # bound on what one trace may load


def trace_path(relative: str) -> Path:
    """Path of a bundled trace file (``folder/file.csv`` under ``wanka/data/traces``)."""
    return Path(str(resources.files("wanka") / "data" / "traces" / relative))


def _read(path: Path) -> str:
    """The file's text through the door (regular file, size, UTF-8); its problems are TraceErrors."""
    try:
        return fileio.read_text(path, max_bytes=fileio.MAX_TABLE_BYTES)
    except SpecError as e:
        raise TraceError(f"{path}: {e.detail}" + (f" (line {e.line})" if e.line else "")) from None


def _rows(path: Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    reader = csv.reader(io.StringIO(_read(path), newline=""), skipinitialspace=True)
    try:
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise TraceError(f"{path}, line 1: empty file") from None
        missing = [c for c in required if c not in header]
        if missing:
            raise TraceError(f"{path}, line 1: missing column(s) {', '.join(missing)}; header is {','.join(header)}")
        for i, row in enumerate(reader):
            if i >= _MAX_ROWS:
                raise TraceError(f"{path}: more than {_MAX_ROWS:,} rows")
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != len(header):
                raise TraceError(f"{path}, line {reader.line_num}: {len(row)} fields, the header has {len(header)}")
            yield reader.line_num, {h: c.strip() for h, c in zip(header, row, strict=True)}
    except csv.Error as e:
        raise TraceError(f"{path}, line {reader.line_num}: malformed CSV ({e})") from None


# bounds on every number a trace feeds the simulator (a finite but absurd value must not hang a loop)
MAX_TIME_S = 1e10  # submit/creation times: ~300 years of seconds
MAX_DURATION_S = 3.2e8  # a job of ten years
MAX_JOB_GPUS = 2_000_000
MAX_NODE_GPUS = 256


def _num(
    path: Path,
    line: int,
    row: dict[str, str],
    col: str,
    *,
    lo: float = 0.0,
    hi: float = MAX_TIME_S,
    integer: bool = False,
) -> float:
    text = row[col]
    try:
        v = float(text)
    except ValueError:
        raise TraceError(f"{path}, line {line}: {col} = {text!r}: not a number") from None
    if not np.isfinite(v) or v < lo or v > hi or (integer and v != int(v)):
        kind = "an integer" if integer else "a number"
        raise TraceError(f"{path}, line {line}: {col} = {text!r}: must be {kind} in [{lo:g}, {hi:g}]")
    return v


def load_pai_pods(path: str | Path | None = None) -> Workload:
    """A PAI 2023 pod list as a workload (default: the bundled ``openb_pod_list_default.csv``)."""
    p = Path(path) if path is not None else trace_path(BUILTIN_TRACES["alibaba-pai-2023"])
    jobs: list[Job] = []
    cpu = never = shared = 0
    for line, row in _rows(p, ("num_gpu", "creation_time", "scheduled_time", "deletion_time")):
        g = int(_num(p, line, row, "num_gpu", hi=MAX_JOB_GPUS, integer=True))
        if g == 0:
            cpu += 1
            continue
        if not row["scheduled_time"]:
            never += 1
            continue
        created = _num(p, line, row, "creation_time")
        sched = _num(p, line, row, "scheduled_time")
        deleted = _num(p, line, row, "deletion_time")
        if sched < created or deleted < sched or deleted - sched > MAX_DURATION_S:
            raise TraceError(
                f"{p}, line {line}: times must satisfy creation_time ≤ scheduled_time ≤ "
                f"deletion_time ≤ scheduled_time + {MAX_DURATION_S:g} s (got {created:g}, {sched:g}, {deleted:g})"
            )
        if "gpu_milli" in row and row["gpu_milli"] and _num(p, line, row, "gpu_milli", hi=1e6) < 1000:
            shared += 1
        spec = row.get("gpu_spec", "")
        models = frozenset(m for m in spec.split("|") if m) or None
        qos = row.get("qos", "") or "default"
        jobs.append(
            Job(
                submit_s=created,
                duration_s=deleted - sched,
                gpus=g,
                tenant=qos,
                priority=_PAI_PRIORITY.get(qos, 0),
                gpu_models=models,
                name=row.get("name", ""),
            )
        )
    if not jobs:
        raise TraceError(f"{p}: no GPU job ({cpu} CPU-only and {never} never-scheduled pods skipped)")
    notes = (
        f"{cpu} CPU-only pods and {never} never-scheduled pods skipped",
        f"{shared} GPU-sharing pods (gpu_milli < 1000) allocated a whole GPU",
    )
    return Workload(p.stem, tuple(jobs), str(p), cpu + never, notes)


def load_generic_trace(path: str | Path) -> Workload:
    """CSV with ``submit_s,duration_s,gpus`` and optional ``tenant,priority,tp`` columns."""
    p = Path(path)
    jobs = []
    for line, row in _rows(p, ("submit_s", "duration_s", "gpus")):
        g = int(_num(p, line, row, "gpus", lo=1, hi=MAX_JOB_GPUS, integer=True))
        prio = int(_num(p, line, row, "priority", lo=-1e9, hi=1e9, integer=True)) if row.get("priority") else 0
        tp = int(_num(p, line, row, "tp", lo=1, hi=MAX_NODE_GPUS * 1024, integer=True)) if row.get("tp") else 1
        jobs.append(
            Job(
                submit_s=_num(p, line, row, "submit_s"),
                duration_s=_num(p, line, row, "duration_s", hi=MAX_DURATION_S),
                gpus=g,
                tenant=row.get("tenant") or "default",
                priority=prio,
                tp=tp,
            )
        )
    if not jobs:
        raise TraceError(f"{p}: no jobs (only a header)")
    return Workload(p.stem, tuple(jobs), str(p))


def load_trace(path: str | Path) -> Workload:
    """A job trace file in either format (told apart by its header), or a bundled trace name."""
    if str(path) in BUILTIN_TRACES:
        return builtin_trace(str(path))
    p = Path(path)
    header = _read(p).partition("\n")[0]
    cols = {c.strip() for c in header.strip().split(",")}
    if {"num_gpu", "creation_time"} <= cols:
        return load_pai_pods(p)
    if "submit_s" in cols:
        return load_generic_trace(p)
    raise TraceError(
        f"{p}, line 1: unknown trace format; expected the PAI 2023 pod list "
        "(name,...,num_gpu,...,creation_time,deletion_time,scheduled_time) or "
        "submit_s,duration_s,gpus[,tenant,priority,tp]"
    )


def builtin_trace(name: str) -> Workload:
    if name not in BUILTIN_TRACES:
        raise TraceError(f"unknown bundled trace {name!r}; known: {', '.join(BUILTIN_TRACES)}")
    return load_pai_pods(trace_path(BUILTIN_TRACES[name]))


def load_node_list(path: str | Path, name: str | None = None) -> Cluster:
    """A node list CSV: PAI 2023 (``sn,...,gpu,model``) or Philly (``machineId, number of GPUs``)."""
    p = Path(path)
    gpus: list[int] = []
    models: list[str] = []
    cols = [c.strip() for c in _read(p).partition("\n")[0].strip().split(",")]
    if "gpu" in cols and "sn" in cols:
        for line, row in _rows(p, ("sn", "gpu")):
            gpus.append(int(_num(p, line, row, "gpu", hi=MAX_NODE_GPUS, integer=True)))
            models.append(row.get("model", ""))
        return Cluster.from_nodes(gpus, models if any(models) else None, name=name or p.stem)
    if "number of GPUs" in cols:
        for line, row in _rows(p, ("number of GPUs",)):
            gpus.append(int(_num(p, line, row, "number of GPUs", hi=MAX_NODE_GPUS, integer=True)))
        return Cluster.from_nodes(gpus, name=name or p.stem)
    raise TraceError(
        f"{p}, line 1: unknown node list; expected sn,cpu_milli,memory_mib,gpu,model or "
        "machineId, number of GPUs, single GPU mem"
    )


def builtin_cluster(name: str) -> Cluster:
    if name not in BUILTIN_CLUSTERS:
        raise TraceError(f"unknown bundled node list {name!r}; known: {', '.join(BUILTIN_CLUSTERS)}")
    return load_node_list(trace_path(BUILTIN_CLUSTERS[name]), name=name)


def load_philly_machines(revised: bool = False) -> Cluster:
    """The Philly machine list (original, or GPU counts re-derived from utilisation logs)."""
    f = "philly/revised_machine_list.csv" if revised else "philly/cluster_machine_list.csv"
    return load_node_list(trace_path(f))


def load_philly_runtimes() -> np.ndarray:
    """Philly job run times (s), 83,154 jobs, as re-published by Alibaba's v2020 analysis."""
    p = trace_path("philly/philly_runtime_from_alibaba_analysis.csv")
    return np.array([_num(p, line, row, "runtime", hi=MAX_DURATION_S) for line, row in _rows(p, ("runtime",))])
