"""Topology-aware placement: pack a job into the fewest leaves, then the fewest pods.

- sub-node job: best fit (the partly used node with the fewest free GPUs that still fit); if none,
  a fully free node from the leaf with the fewest fully free nodes, keeping big blocks whole;
- whole-node job of ``n`` nodes: the leaf with the fewest fully free nodes ≥ ``n`` (best fit);
  else the pod with the fewest ≥ ``n``, filling its fullest leaves first; else pods by free nodes;
- TP groups wider than a node (``chunk`` nodes): whole chunks inside scale-up domains, in index
  order (neighbouring domains share leaves).

Slurm's topology/tree plugin and Volcano's network-topology-aware plugin follow the same rule.
"""

from __future__ import annotations

import numpy as np

from wanka.platform.jobs import JobRun
from wanka.platform.state import ClusterState

__all__ = ["TopologyAware"]


class TopologyAware:
    name = "topology_aware"

    def __init__(self, state: ClusterState, rng: np.random.Generator) -> None:
        self.st = state
        self.c = state.cluster
        self.nodes_per_leaf = state.cluster.nodes_per_leaf  # a numpy reduction: once, not per job
        # one read-only 1-node array per node, made once: a sub-node job gets its node without
        # building an array (~2 µs, the largest single cost of placing one)
        self._one = [np.array([n], dtype=np.int64) for n in range(state.cluster.nodes)]
        for a in self._one:
            a.flags.writeable = False

    def place(self, r: JobRun) -> np.ndarray | None:
        st = self.st
        G = st.G
        if r.mask is not None:
            return self._masked(r, r.mask)
        if not r.whole:
            g = r.per_node
            for k in range(g, G):
                b = st.partial[k]
                if b:
                    return self._one[next(iter(b))]
            if st.counts[G] == 0:
                return None
            lf = st.leaf_full
            leaf = int(np.argmin(np.where(lf > 0, lf, np.iinfo(np.int64).max)))
            return self._take([leaf], 1)
        n = r.n_nodes
        if st.counts[G] < n:
            return None
        if r.chunk > 1:
            return self._chunks(r, np.arange(self.c.n_domains))
        lf = st.leaf_full
        if n <= self.nodes_per_leaf:
            cand = np.flatnonzero(lf >= n)
            if cand.size:
                return self._take([int(cand[np.argmin(lf[cand])])], n)
        pf = st.pod_full
        cand = np.flatnonzero(pf >= n)
        pods = [int(cand[np.argmin(pf[cand])])] if cand.size else np.argsort(-pf, kind="stable").tolist()
        leaves: list[int] = []
        need = n
        pl = self.c.pod_leaves
        for p in pods:
            lo, hi = int(pl[p]), int(pl[p + 1])
            for leaf in (lo + np.argsort(-lf[lo:hi], kind="stable")).tolist():
                k = int(lf[leaf])
                if k == 0:
                    break
                leaves.append(leaf)
                need -= k
                if need <= 0:
                    return self._take(leaves, n)
        return None

    def _take(self, leaves: list[int], n: int) -> np.ndarray:
        """The first ``n`` fully free nodes of ``leaves``, in that order."""
        f = self.st.free
        G = self.st.G
        ls = self.c.leaf_start
        parts = []
        need = n
        for leaf in leaves:
            s, e = int(ls[leaf]), int(ls[leaf + 1])
            idx = s + np.flatnonzero(f[s:e] == G)[:need]
            parts.append(idx)
            need -= idx.size
            if need <= 0:
                break
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _chunks(self, r: JobRun, domains: np.ndarray) -> np.ndarray | None:
        st = self.st
        per = st.dom_full[domains] // r.chunk
        if int(per.sum()) * r.chunk < r.n_nodes:
            return None
        f = st.free
        ds = self.c.domain_start
        parts = []
        need = r.n_nodes
        for d, k in zip(domains[per > 0].tolist(), per[per > 0].tolist(), strict=True):
            s, e = int(ds[d]), int(ds[d + 1])
            take = min(need, k * r.chunk)
            parts.append(s + np.flatnonzero(f[s:e] == st.G)[:take])
            need -= take
            if need <= 0:
                break
        return np.concatenate(parts)

    def _masked(self, r: JobRun, mask: np.ndarray) -> np.ndarray | None:
        f = self.st.free
        if not r.whole:
            ok = mask & (f >= r.per_node)
            if not ok.any():
                return None
            return np.array([int(np.argmin(np.where(ok, f, np.iinfo(np.int64).max)))], dtype=np.int64)
        cand = np.flatnonzero(mask & (f == self.st.G))
        return cand[: r.n_nodes] if cand.size >= r.n_nodes else None
