"""Published per-cluster summary statistics (Acme, Helios, Philly, PAI): fit targets and references.

Sources: AcmeTrace ``data/cluster_summary.csv`` (Hu et al., NSDI '24: Seren, Kalos, and the
authors' recomputation for Philly, Helios, PAI) and HeliosArtifact ``helios_cluster_summary.csv``
(Hu et al., SC '21: Venus, Earth, Saturn, Uranus, total). Times in seconds.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache

from wanka.errors import TraceError
from wanka.platform.workloads.traces import trace_path

__all__ = ["TraceSummary", "list_summaries", "trace_summary"]


@dataclass(frozen=True)
class TraceSummary:
    """Headline statistics of one cluster's GPU jobs."""

    name: str
    gpu_jobs: int
    avg_run_time_s: float
    med_run_time_s: float
    max_run_time_s: float | None
    avg_queue_s: float
    med_queue_s: float
    avg_gpus: float
    med_gpus: float
    max_gpus: float | None
    gpu_time_s: float | None  # total GPU-seconds over all final states
    cluster_gpus: int | None
    source: str


def _f(row: dict[str, str], key: str) -> float | None:
    v = row.get(key, "")
    return float(v) if v not in ("", None) else None


@lru_cache(maxsize=1)
def _load() -> dict[str, TraceSummary]:
    out: dict[str, TraceSummary] = {}
    files = (
        ("acme/cluster_summary.csv", "acme-", "AcmeTrace data/cluster_summary.csv (Hu et al., NSDI '24)"),
        (
            "helios/helios_cluster_summary.csv",
            "helios-",
            "HeliosArtifact helios_cluster_summary.csv (Hu et al., SC '21)",
        ),
    )
    for rel, prefix, source in files:
        p = trace_path(rel)
        with p.open(newline="", encoding="utf-8") as fh:
            for line, row in enumerate(csv.DictReader(fh), start=2):
                try:
                    times = [_f(row, f"{s}_gpu_time") for s in ("complete", "cancel", "fail")]
                    known = [t for t in times if t is not None]
                    gpu_time = sum(known) if len(known) == len(times) else None
                    gn = _f(row, "gpu_num")
                    name = prefix + row["id"].lower()
                    out[name] = TraceSummary(
                        name=name,
                        gpu_jobs=int(float(row["gpu_job_num"])),
                        avg_run_time_s=float(row["avg_run_time_gpu"]),
                        med_run_time_s=float(row["med_run_time_gpu"]),
                        max_run_time_s=_f(row, "max_run_time_gpu"),
                        avg_queue_s=float(row["avg_que_time_gpu"]),
                        med_queue_s=float(row["med_que_time_gpu"]),
                        avg_gpus=float(row["avg_gpu_num"]),
                        med_gpus=float(row["med_gpu_num"]),
                        max_gpus=_f(row, "max_gpu"),
                        gpu_time_s=gpu_time,
                        cluster_gpus=int(gn) if gn is not None else None,
                        source=source,
                    )
                except (KeyError, ValueError) as e:
                    raise TraceError(f"{p}, line {line}: malformed summary row ({e})") from None
    return out


def list_summaries() -> list[str]:
    return sorted(_load())


def trace_summary(name: str) -> TraceSummary:
    """A summary by name: ``acme-seren``, ``acme-kalos``, ``acme-philly``, ``helios-earth``, …"""
    s = _load().get(name)
    if s is None:
        raise TraceError(f"unknown trace summary {name!r}; known: {', '.join(list_summaries())}")
    return s
