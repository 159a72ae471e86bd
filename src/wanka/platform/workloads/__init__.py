"""Workloads for the scheduler: real trace loaders, published summaries, synthetic generators."""

from wanka.platform.workloads.summaries import TraceSummary, list_summaries, trace_summary
from wanka.platform.workloads.synthetic import (
    SYNTHETIC_WORKLOADS,
    LlmWorkloadFit,
    fit_llm_workload,
    synthetic_workload,
)
from wanka.platform.workloads.traces import (
    BUILTIN_CLUSTERS,
    BUILTIN_TRACES,
    builtin_cluster,
    builtin_trace,
    load_generic_trace,
    load_node_list,
    load_pai_pods,
    load_philly_machines,
    load_philly_runtimes,
    load_trace,
    trace_path,
)

__all__ = [
    "BUILTIN_CLUSTERS",
    "BUILTIN_TRACES",
    "SYNTHETIC_WORKLOADS",
    "LlmWorkloadFit",
    "TraceSummary",
    "builtin_cluster",
    "builtin_trace",
    "fit_llm_workload",
    "list_summaries",
    "load_generic_trace",
    "load_node_list",
    "load_pai_pods",
    "load_philly_machines",
    "load_philly_runtimes",
    "load_trace",
    "synthetic_workload",
    "trace_path",
    "trace_summary",
]
