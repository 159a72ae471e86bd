"""Where a MoE token's experts live: expected distinct expert-parallel nodes per token.

Dispatch traffic that leaves a node is paid once per destination *node* by deduplicating
dispatchers (DeepEP normal mode, DeepSeek-V3 Sec. 3.2.2: "each token is dispatched to at most 4
nodes" and forwarded over NVLink inside a node), so the cross-node bytes of one token scale with the
number of distinct nodes its ``top_k`` experts occupy, not with ``top_k``.

With ``E`` experts spread evenly over ``D`` nodes (``E/D`` each) and the ``k`` experts drawn
uniformly without replacement (balanced routing), node ``j`` is missed with probability
``C(E - E/D, k) / C(E, k)``, so the expected number of distinct nodes is
``D · (1 - C(E - E/D, k) / C(E, k))``. Node-limited routing (``moe.max_nodes_per_token = M``, or
group-limited routing whose groups map one-to-one onto nodes) first picks ``M`` nodes, then ``k``
experts among their ``M·E/D``: the same formula with ``D -> M`` and ``E -> M·E/D``.
"""

from __future__ import annotations

from math import exp, lgamma

from wanka.spec.model import ModelSpec

__all__ = ["expected_nodes_per_token"]


def _miss(e: int, per_node: int, k: int) -> float:
    """C(e - per_node, k) / C(e, k): probability that none of k draws lands on a given node."""
    if e - per_node < k:
        return 0.0
    a = e - per_node
    return exp(lgamma(a + 1) - lgamma(a - k + 1) - lgamma(e + 1) + lgamma(e - k + 1))


def expected_nodes_per_token(model: ModelSpec, ep_nodes: int) -> float:
    """Expected distinct nodes a token's routed experts occupy when the experts are spread over
    ``ep_nodes`` nodes (1.0 for a dense model or ``ep_nodes <= 1``).

    >>> from wanka.spec import load_model
    >>> round(expected_nodes_per_token(load_model("deepseek-v3"), 8), 2)  # M = 4 of 8 nodes
    3.63
    """
    m = model.moe
    if m is None or ep_nodes <= 1:
        return 1.0
    if m.n_experts % ep_nodes:
        raise ValueError(f"ep_nodes = {ep_nodes} must divide moe.n_experts = {m.n_experts}")
    per_node = m.n_experts // ep_nodes
    limit = m.max_nodes_per_token
    if limit is None and m.topk_groups is not None and m.n_groups == ep_nodes:
        limit = m.topk_groups  # one routing group per node: group-limited is node-limited
    d = ep_nodes if limit is None else min(limit, ep_nodes)
    e = d * per_node
    k = min(m.top_k, e)
    return d * (1.0 - _miss(e, per_node, k))
