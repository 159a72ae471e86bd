"""Mutable allocation state of a cluster: free GPUs per node and the counters placement reads.

Kept so that the common questions cost O(1) or one numpy pass, never a Python loop over nodes:

- ``free[n]``: free GPUs on node ``n`` (``-1`` while the node is down);
- ``counts[k]``: number of healthy nodes with exactly ``k`` free GPUs (k = 0 … G);
- ``partial[k]``: the set of nodes with ``k`` free GPUs, 0 < k < G (best fit in O(G));
- ``leaf_full``/``pod_full``/``dom_full``: fully free whole-size nodes per leaf, pod, domain;
- ``busy_until[n]``: latest expected end of the jobs on ``n`` (backfill reservations).

Two kinds of allocation exist: a whole-node job takes ``G`` GPUs on each of its fully free nodes;
a sub-node job takes ``k < G`` GPUs on one node.
"""

from __future__ import annotations

import numpy as np

from wanka.platform.cluster import Cluster

__all__ = ["ClusterState"]


class ClusterState:
    """Free GPUs by node, leaf, pod and scale-up domain."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.G = cluster.gpus_per_node
        self.free = cluster.gpus.copy()
        # a Python list: scalar reads and updates on it are ~10x cheaper than on a numpy array (hot path)
        self.counts: list[int] = np.bincount(self.free, minlength=self.G + 1).astype(np.int64).tolist()
        self.partial: list[set[int]] = [set() for _ in range(self.G + 1)]
        for n in np.flatnonzero((self.free > 0) & (self.free < self.G)):
            self.partial[int(self.free[n])].add(int(n))
        full = self.free == self.G
        self.leaf_full = np.bincount(cluster.leaf[full], minlength=cluster.n_leaves).astype(np.int64)
        self.pod_full = np.bincount(cluster.pod[full], minlength=cluster.n_pods).astype(np.int64)
        self.dom_full = np.bincount(cluster.domain[full], minlength=cluster.n_domains).astype(np.int64)
        self.busy_until = np.zeros(cluster.nodes)
        self.node_jobs: list[set[int]] = [set() for _ in range(cluster.nodes)]
        self.busy_gpus = 0
        self.up_gpus = cluster.total_gpus
        self.up_nodes = cluster.nodes
        self.up = np.ones(cluster.nodes, dtype=bool)
        self.version = 0  # bumped by every change of the free GPUs (lets a pass tell nothing changed)

    # ------------------------------------------------------------ queries
    @property
    def free_gpus(self) -> int:
        return self.up_gpus - self.busy_gpus

    @property
    def full_nodes(self) -> int:
        return int(self.counts[self.G])

    def can_fit_small(self, g: int) -> bool:
        """Some healthy node has ≥ g free GPUs."""
        return any(self.counts[g:])

    def largest_free(self) -> int:
        return next((k for k in range(self.G, 0, -1) if self.counts[k]), 0)

    # ------------------------------------------------------------ updates
    def _leave_bucket(self, n: int, k: int) -> None:
        self.counts[k] -= 1
        if 0 < k < self.G:
            self.partial[k].discard(n)
        elif k == self.G:
            c = self.cluster
            self.leaf_full[c.leaf[n]] -= 1
            self.pod_full[c.pod[n]] -= 1
            self.dom_full[c.domain[n]] -= 1

    def _enter_bucket(self, n: int, k: int) -> None:
        self.counts[k] += 1
        if 0 < k < self.G:
            self.partial[k].add(n)
        elif k == self.G:
            c = self.cluster
            self.leaf_full[c.leaf[n]] += 1
            self.pod_full[c.pod[n]] += 1
            self.dom_full[c.domain[n]] += 1

    def _move(self, n: int, k: int, k2: int) -> None:
        """Node ``n`` from the bucket of ``k`` free GPUs to that of ``k2``."""
        if 0 < k < self.G and 0 < k2 < self.G:  # partly used before and after (the common sub-node case), inline
            self.counts[k] -= 1
            self.counts[k2] += 1
            partial = self.partial
            partial[k].discard(n)
            partial[k2].add(n)
        else:
            self._leave_bucket(n, k)
            self._enter_bucket(n, k2)

    def allocate(self, nodes: np.ndarray, per_node: int, job: int, end: float) -> None:
        """Take ``per_node`` GPUs on each of ``nodes`` for ``job`` (expected to end at ``end``)."""
        self.version += 1
        if nodes.size == 1:
            n = nodes.item()
            k = self.free.item(n)
            k2 = k - per_node
            self._move(n, k, k2)
            self.free[n] = k2
            self.node_jobs[n].add(job)
            if self.busy_until.item(n) < end:
                self.busy_until[n] = end
        else:  # whole nodes, all fully free
            c = self.cluster
            m = nodes.size
            self.counts[self.G] -= m
            self.counts[0] += m
            np.subtract.at(self.leaf_full, c.leaf[nodes], 1)
            np.subtract.at(self.pod_full, c.pod[nodes], 1)
            np.subtract.at(self.dom_full, c.domain[nodes], 1)
            self.free[nodes] = 0
            for n in nodes.tolist():
                self.node_jobs[n].add(job)
            self.busy_until[nodes] = np.maximum(self.busy_until[nodes], end)
        self.busy_gpus += per_node * nodes.size

    def release(self, nodes: np.ndarray, per_node: int, job: int) -> None:
        """Give back what :meth:`allocate` took (on nodes still healthy)."""
        self.version += 1
        if nodes.size == 1:
            n = nodes.item()
            k = self.free.item(n)
            k2 = k + per_node
            self._move(n, k, k2)
            self.free[n] = k2
            self.node_jobs[n].discard(job)
        else:
            c = self.cluster
            m = nodes.size
            self.counts[0] -= m
            self.counts[self.G] += m
            np.add.at(self.leaf_full, c.leaf[nodes], 1)
            np.add.at(self.pod_full, c.pod[nodes], 1)
            np.add.at(self.dom_full, c.domain[nodes], 1)
            self.free[nodes] = self.G
            for n in nodes.tolist():
                self.node_jobs[n].discard(job)
        self.busy_gpus -= per_node * nodes.size

    def set_down(self, n: int, until: float) -> None:
        """Take an idle node (its jobs already released) out of service until ``until``."""
        self.version += 1
        k = int(self.free[n])
        self._leave_bucket(n, k)
        self.free[n] = -1
        self.up[n] = False
        self.up_gpus -= int(self.cluster.gpus[n])
        self.up_nodes -= 1
        self.busy_until[n] = until

    def set_up(self, n: int) -> None:
        self.version += 1
        g = int(self.cluster.gpus[n])
        self.free[n] = g
        self.up[n] = True
        self._enter_bucket(n, g)
        self.up_gpus += g
        self.up_nodes += 1

    def refresh_busy_until(self, n: int, ends: dict[int, float], now: float) -> None:
        """Recompute ``busy_until[n]`` after a job left ``n`` early (kill or preemption)."""
        self.busy_until[n] = max((ends[j] for j in self.node_jobs[n]), default=now)

    def check(self) -> None:
        """Internal consistency (tests): counters agree with ``free``."""
        up = self.up
        f = self.free
        if (f[up] < 0).any() or (f[up] > self.cluster.gpus[up]).any() or (f[~up] != -1).any():
            raise AssertionError("free GPUs out of range")
        if not np.array_equal(np.bincount(f[up], minlength=self.G + 1), self.counts):
            raise AssertionError("counts disagree with free")
        full = f == self.G
        if not np.array_equal(np.bincount(self.cluster.leaf[full], minlength=self.cluster.n_leaves), self.leaf_full):
            raise AssertionError("leaf_full disagrees with free")
        if int((self.cluster.gpus[up] - f[up]).sum()) != self.busy_gpus:
            raise AssertionError("busy_gpus disagrees with free")
