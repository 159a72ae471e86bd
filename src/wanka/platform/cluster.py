"""The scheduler's view of a cluster: GPUs per node and each node's leaf, pod and scale-up domain.

Built from a :class:`~wanka.spec.ClusterSpec` (homogeneous, grouping from
:func:`~wanka.platform.topology.placement_domains`) or from a node list of a real trace
(heterogeneous GPU counts and models, grouped in index order). Leaves and pods are contiguous
ranges of node indices, so a leaf's nodes are one numpy slice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from wanka.errors import SpecError
from wanka.platform.topology import DEFAULT_SWITCHES, PlacementDomains, placement_domains
from wanka.spec import ClusterSpec

__all__ = ["Cluster"]


@dataclass(frozen=True, eq=False)
class Cluster:
    """Immutable layout: arrays indexed by node."""

    name: str
    gpus: np.ndarray  # GPUs per node (int64)
    leaf: np.ndarray  # leaf index per node
    pod: np.ndarray  # pod index per node
    domain: np.ndarray  # scale-up domain index per node
    leaf_start: np.ndarray  # node index where each leaf starts; len n_leaves + 1
    pod_leaves: np.ndarray  # leaf index where each pod starts; len n_pods + 1
    domain_start: np.ndarray  # node index where each domain starts; len n_domains + 1
    models: tuple[str, ...] | None  # GPU model per node (trace node lists), None = all alike
    domains: PlacementDomains | None

    @property
    def nodes(self) -> int:
        return int(self.gpus.size)

    @property
    def gpus_per_node(self) -> int:
        """Whole-node size: the largest node; jobs of at least this many GPUs take whole nodes."""
        return int(self.gpus.max())

    @property
    def total_gpus(self) -> int:
        return int(self.gpus.sum())

    @property
    def n_leaves(self) -> int:
        return int(self.leaf_start.size - 1)

    @property
    def n_pods(self) -> int:
        return int(self.pod_leaves.size - 1)

    @property
    def n_domains(self) -> int:
        return int(self.domain_start.size - 1)

    @property
    def nodes_per_leaf(self) -> int:
        return int(np.diff(self.leaf_start).max())

    @property
    def nodes_per_domain(self) -> int:
        return int(np.diff(self.domain_start).max())

    # ------------------------------------------------------------ constructors
    @classmethod
    def _build(
        cls,
        name: str,
        gpus: np.ndarray,
        nodes_per_leaf: int,
        leaves_per_pod: int,
        nodes_per_domain: int,
        models: tuple[str, ...] | None,
        domains: PlacementDomains | None,
    ) -> Cluster:
        n = gpus.size
        idx = np.arange(n, dtype=np.int64)
        leaf = idx // nodes_per_leaf
        n_leaves = int(leaf[-1]) + 1
        pod_of_leaf = np.arange(n_leaves, dtype=np.int64) // leaves_per_pod
        n_pods = int(pod_of_leaf[-1]) + 1
        domain = idx // nodes_per_domain
        n_domains = int(domain[-1]) + 1
        return cls(
            name=name,
            gpus=gpus.astype(np.int64),
            leaf=leaf,
            pod=pod_of_leaf[leaf],
            domain=domain,
            leaf_start=np.minimum(np.arange(n_leaves + 1, dtype=np.int64) * nodes_per_leaf, n),
            pod_leaves=np.minimum(np.arange(n_pods + 1, dtype=np.int64) * leaves_per_pod, n_leaves),
            domain_start=np.minimum(np.arange(n_domains + 1, dtype=np.int64) * nodes_per_domain, n),
            models=models,
            domains=domains,
        )

    @classmethod
    def from_spec(cls, spec: ClusterSpec) -> Cluster:
        """A homogeneous cluster grouped by its fabric."""
        d = placement_domains(spec)
        gpus = np.full(spec.nodes, spec.gpus_per_node, dtype=np.int64)
        return cls._build(spec.name, gpus, d.nodes_per_leaf, d.leaves_per_pod, d.nodes_per_domain, None, d)

    @classmethod
    def from_nodes(
        cls,
        gpus: Sequence[int] | np.ndarray,
        models: Sequence[str] | None = None,
        *,
        name: str = "node-list",
        nodes_per_leaf: int | None = None,
        leaves_per_pod: int | None = None,
    ) -> Cluster:
        """A cluster from a node list (GPU count per node, optional GPU model per node).

        Nodes with zero GPUs are dropped. Without a fabric description the grouping defaults to
        the default InfiniBand switch, non-blocking, rail-optimised, two tiers: ``radix/2`` nodes
        per leaf group and ``radix`` leaves per pod (see :mod:`wanka.platform.topology`).
        """
        g = np.asarray(gpus, dtype=np.int64)
        if g.ndim != 1 or g.size == 0:
            raise SpecError("a node list needs at least one node", field="cluster")
        if (g < 0).any():
            raise SpecError(f"= {int(g.min())}: GPUs per node must be ≥ 0", field="cluster.gpus")
        keep = g > 0
        if not keep.any():
            raise SpecError("the node list has no GPU node", field="cluster")
        mods: tuple[str, ...] | None = None
        if models is not None:
            if len(models) != g.size:
                raise SpecError("models and gpus differ in length", field="cluster.models")
            mods = tuple(m for m, k in zip(models, keep, strict=True) if k)
        g = g[keep]
        sw = DEFAULT_SWITCHES["infiniband"]
        npl = nodes_per_leaf or sw.ports // 2
        lpp = leaves_per_pod or sw.ports
        if npl < 1 or lpp < 1:
            raise SpecError("nodes_per_leaf and leaves_per_pod must be ≥ 1", field="cluster")
        return cls._build(name, g, npl, lpp, 1, mods, None)

    def layout(self) -> dict[str, object]:
        """A short JSON-able description of the layout."""
        out: dict[str, object] = {
            "name": self.name,
            "nodes": self.nodes,
            "gpus": self.total_gpus,
            "gpus_per_node": self.gpus_per_node,
            "leaves": self.n_leaves,
            "pods": self.n_pods,
            "nodes_per_leaf": self.nodes_per_leaf,
            "nodes_per_domain": self.nodes_per_domain,
        }
        if self.domains is not None:
            out["domains"] = self.domains.to_dict()
        return out
