"""Topology-blind placement: first fit over a node list shuffled once per run (the baseline).

This is what a scheduler without topology information does: nodes in arbitrary order, the first
ones with room win. TP groups wider than a node still go to whole chunks of a scale-up domain
(the job cannot run otherwise), taken in shuffled domain order.
"""

from __future__ import annotations

import numpy as np

from wanka.platform.jobs import JobRun
from wanka.platform.state import ClusterState

__all__ = ["TopologyBlind"]


class TopologyBlind:
    name = "topology_blind"

    def __init__(self, state: ClusterState, rng: np.random.Generator) -> None:
        self.st = state
        self.c = state.cluster
        self.perm = rng.permutation(self.c.nodes)
        self.dom_perm = rng.permutation(self.c.n_domains)

    def place(self, r: JobRun) -> np.ndarray | None:
        st = self.st
        G = st.G
        f = st.free[self.perm]
        if not r.whole:
            ok = f >= r.per_node
            if r.mask is not None:
                ok &= r.mask[self.perm]
            i = int(np.argmax(ok))
            return self.perm[i : i + 1].copy() if ok[i] else None
        n = r.n_nodes
        if st.counts[G] < n:
            return None
        if r.chunk > 1:
            return self._chunks(r)
        ok = f == G
        if r.mask is not None:
            ok &= r.mask[self.perm]
        idx = np.flatnonzero(ok)[:n]
        return self.perm[idx] if idx.size == n else None

    def _chunks(self, r: JobRun) -> np.ndarray | None:
        st = self.st
        doms = self.dom_perm
        per = st.dom_full[doms] // r.chunk
        if int(per.sum()) * r.chunk < r.n_nodes:
            return None
        ds = self.c.domain_start
        parts = []
        need = r.n_nodes
        for d, k in zip(doms[per > 0].tolist(), per[per > 0].tolist(), strict=True):
            s, e = int(ds[d]), int(ds[d + 1])
            take = min(need, k * r.chunk)
            parts.append(s + np.flatnonzero(st.free[s:e] == st.G)[:take])
            need -= take
            if need <= 0:
                break
        return np.concatenate(parts)
