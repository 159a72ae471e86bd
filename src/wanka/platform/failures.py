"""Node failures for the scheduler: when a node breaks, how long it is out, what a restart costs.

For a cluster described by a :class:`~wanka.spec.ClusterSpec`, :func:`cluster_failure_model` takes
the per-node rate from the operations layer's component failure tables (``wanka.ops``: GPUs, HBM,
NICs, links, host parts of one node, with ``FailureSpec.rate_scale``) and the repair and restart
times from the scenario's ``FailureSpec``. Node lists from traces (mixed GPU counts, no spec) use
:func:`node_failure_model`, whose default per-node MTBF comes straight from the Llama 3 report.

Failures are a Poisson process per node (exponential inter-failure times); the superposition
over ``k`` healthy nodes is Poisson with rate ``k / MTBF``, and the failed node is uniform among
them (memorylessness), so the simulator draws one cluster-level event at a time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wanka.spec import ClusterSpec, FailureSpec

__all__ = ["FailureModel", "cluster_failure_model", "default_node_mtbf_s", "node_failure_model"]

# Llama 3 405B pre-training (Dubey et al., "The Llama 3 Herd of Models", arXiv:2407.21783,
# Sec. 3.3.4 and Table 5): 419 unexpected interruptions in a 54-day snapshot on 16,384 H100 GPUs.
_LLAMA3_UNEXPECTED_INTERRUPTIONS = 419
_LLAMA3_WINDOW_S = 54 * 86_400.0
_LLAMA3_GPUS = 16_384
_LLAMA3_GPUS_PER_NODE = 8  # HGX H100 servers (same paper, Sec. 3.3.1)


def default_node_mtbf_s() -> float:
    """Per-node mean time between unexpected interruptions from the Llama 3 figures (~264 days).

    MTBF_node = window × nodes / interruptions = 54 d × 2,048 / 419.
    """
    nodes = _LLAMA3_GPUS / _LLAMA3_GPUS_PER_NODE
    return _LLAMA3_WINDOW_S * nodes / _LLAMA3_UNEXPECTED_INTERRUPTIONS


@dataclass(frozen=True)
class FailureModel:
    """Per-node failures, repair, restart cost and checkpoint cadence (all in seconds).

    Defaults: repair and restart times follow :class:`wanka.spec.FailureSpec`'s defaults
    (4 h repair, 10 min restart); checkpoints hourly.
    """

    node_mtbf_s: float
    repair_s: float = 4 * 3600.0
    restart_s: float = 600.0
    checkpoint_interval_s: float = 3600.0

    def __post_init__(self) -> None:
        for name in ("node_mtbf_s", "checkpoint_interval_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0")
        for name in ("repair_s", "restart_s"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be ≥ 0")

    def next_failure_in(self, rng: np.random.Generator, healthy_nodes: int) -> float:
        """Time until the next failure among ``healthy_nodes`` nodes (inf when none is healthy)."""
        if healthy_nodes <= 0:
            return float("inf")
        return float(rng.exponential(self.node_mtbf_s / healthy_nodes))

    def saved_work(self, worked_s: float) -> float:
        """Work kept after a crash: progress up to the last periodic checkpoint."""
        return float(np.floor(worked_s / self.checkpoint_interval_s) * self.checkpoint_interval_s)


def node_failure_model(
    node_mtbf_s: float | None = None,
    *,
    repair_s: float = 4 * 3600.0,
    restart_s: float = 600.0,
    checkpoint_interval_s: float = 3600.0,
) -> FailureModel:
    """The failure model the scheduler uses (the swap point for ``wanka.ops``)."""
    return FailureModel(
        node_mtbf_s=default_node_mtbf_s() if node_mtbf_s is None else node_mtbf_s,
        repair_s=repair_s,
        restart_s=restart_s,
        checkpoint_interval_s=checkpoint_interval_s,
    )


def cluster_failure_model(
    cluster: ClusterSpec, failures: FailureSpec | None = None, *, checkpoint_interval_s: float = 3600.0
) -> FailureModel:
    """Per-node failures of ``cluster`` from the operations layer's tables (``wanka.ops``).

    The rate is that of a one-node job on the cluster (its GPUs, HBM, NICs, links and host parts;
    :func:`wanka.ops.job_failure_rates`); repair and restart come from ``failures``.
    """
    from wanka.ops import job_failure_rates
    from wanka.spec import Scenario

    f = failures if failures is not None else FailureSpec()
    rates = job_failure_rates(Scenario(cluster=cluster, failures=f), gpus=cluster.gpus_per_node)
    # the size-independent per-job floor (software causes) is spread over the nodes its table observed
    from wanka.ops import failure_table

    exp = failure_table(f.rates).exposure
    share = cluster.gpus_per_node / exp.gpus if exp is not None else 0.0
    rate = rates.total - rates.floor_rate + rates.floor_rate * share
    return FailureModel(
        node_mtbf_s=1.0 / rate if rate > 0 else float("inf"),
        repair_s=f.repair_s,
        restart_s=f.restart_s,
        checkpoint_interval_s=checkpoint_interval_s,
    )
