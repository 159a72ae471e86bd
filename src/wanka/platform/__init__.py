"""Platform layer (智算平台层): a multi-tenant GPU cluster scheduler, simulated event by event.

>>> from wanka.spec import ClusterSpec
>>> from wanka.platform import simulate, synthetic_workload
>>> spec = ClusterSpec(accelerator="H100", nodes=128)
>>> wl = synthetic_workload("acme-kalos", spec, jobs=200, seed=3)
>>> simulate(spec, wl, "fifo", seed=3).completed
200

See README.md beside this file for the policies, the metrics and their sources.
"""

from wanka.platform.cluster import Cluster
from wanka.platform.failures import FailureModel, cluster_failure_model, default_node_mtbf_s, node_failure_model
from wanka.platform.jobs import Job, Workload
from wanka.platform.metrics import Locality, Percentiles, ScheduleResult
from wanka.platform.policies import PLACEMENTS, SCHEDULERS
from wanka.platform.simulator import Simulator, simulate
from wanka.platform.topology import PlacementDomains, placement_domains
from wanka.platform.workloads import (
    SYNTHETIC_WORKLOADS,
    builtin_cluster,
    builtin_trace,
    load_generic_trace,
    load_node_list,
    load_pai_pods,
    load_philly_machines,
    load_philly_runtimes,
    load_trace,
    synthetic_workload,
    trace_summary,
)

__all__ = [
    "PLACEMENTS",
    "SCHEDULERS",
    "SYNTHETIC_WORKLOADS",
    "Cluster",
    "FailureModel",
    "Job",
    "Locality",
    "Percentiles",
    "PlacementDomains",
    "ScheduleResult",
    "Simulator",
    "Workload",
    "builtin_cluster",
    "builtin_trace",
    "cluster_failure_model",
    "default_node_mtbf_s",
    "load_generic_trace",
    "load_node_list",
    "load_pai_pods",
    "load_philly_machines",
    "load_philly_runtimes",
    "load_trace",
    "node_failure_model",
    "placement_domains",
    "simulate",
    "synthetic_workload",
    "trace_summary",
]
