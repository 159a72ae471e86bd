"""Recovery after an interruption: detect, diagnose and isolate, swap a node (spare or repair), restart.

Per event: ``detection`` (heartbeat/watchdog for fail-stop faults, the collective timeout for hangs;
see ``rates``) → ``restart_s`` (diagnose, isolate, reschedule, re-initialise NCCL and the model) →
a wait for a node when the cause needs one swapped and no spare is free → checkpoint load.

Spares: failed nodes go to repair for ``repair_s`` and come back; the pool of ``c`` spare nodes (the
scenario's ``hot_spares`` plus cluster nodes the job does not use — Llama 3 ran on 16k GPUs of a 24k
cluster) is an M/M/c/c loss system, so a swap finds no spare with the Erlang-B probability
``B(c, a)``, ``a = λ_swap · repair_s`` (Erlang 1917). Then the job waits for the first repair:
``repair_s`` with no spares, ``repair_s / c`` (mean of the first of c exponential repairs) with c.

Default pool (``failures.hot_spares`` not given): the smallest ``c`` with ``B(c, a) ≤ blocking`` and
at least ``min_fraction`` of the job's nodes (``catalog/data/failures.yaml`` ``spare_pool``, printed
as an assumption), on top of the idle cluster nodes. ``hot_spares: 0`` keeps only the idle nodes.

Shrink and continue (``failures.elastic``, as fault-tolerant trainers such as Oobleck, Bamboo and
TorchFT do): when no spare is free the job drops the failed node's data-parallel replica and keeps
training on fewer nodes until a repaired node returns; instead of waiting ``repair_s / c`` it loses
that time × the replica's share of the job's nodes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from wanka.ops.rates import JobFailureRates, spare_pool_rule
from wanka.spec import Scenario

__all__ = ["RecoveryModel", "default_spares", "erlang_b", "recovery_model"]


def erlang_b(servers: int, offered_load: float) -> float:
    """Blocking probability of an M/M/c/c system (recurrence B(k) = aB(k−1) / (k + aB(k−1))).

    >>> round(erlang_b(2, 1.0), 4)
    0.2
    """
    b = 1.0
    for k in range(1, servers + 1):
        b = offered_load * b / (k + offered_load * b)
    return b


@dataclass(frozen=True)
class RecoveryModel:
    """Recovery times of one job: per-cause detection and the shared restart/swap/load steps."""

    detection_s: np.ndarray  # per cause
    restart_s: float
    spares: int
    repair_s: float
    p_no_spare: float  # a node swap finds no spare (Erlang B)
    spare_wait_s: float  # then the job waits this long for a repaired node (elastic: the equivalent loss)
    peer_loss_p: np.ndarray  # in_memory: per cause, the failed node's peer copy is lost too
    hot_spares: int = 0  # spare nodes beside the cluster (the rest of ``spares`` are idle cluster nodes)
    idle_nodes: int = 0
    spares_from: str = "given"  # "given" (failures.hot_spares) or "default rule"
    elastic: bool = False
    notes: tuple[str, ...] = ()

    def expected_wait_s(self, replace_node: np.ndarray) -> np.ndarray:
        return np.where(replace_node, self.p_no_spare * self.spare_wait_s, 0.0)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["detection_s"] = self.detection_s.tolist()
        d["peer_loss_p"] = self.peer_loss_p.tolist()
        d["notes"] = list(self.notes)
        return d


def default_spares(job_nodes: int, swap_rate: float, repair_s: float, idle: int = 0) -> int:
    """Hot spares by the operators' rule: smallest pool (with the ``idle`` nodes) of Erlang-B blocking
    ``≤ spare_pool.blocking``, and at least ``spare_pool.min_fraction`` of the job's nodes.

    >>> default_spares(1024, 0.0, 4 * 3600.0)
    11
    """
    rule = spare_pool_rule()
    need = math.ceil(rule.min_fraction * job_nodes)
    a = swap_rate * repair_s
    c = idle
    while erlang_b(c, a) > rule.blocking and c < 10 * job_nodes + 10:
        c += 1
    return max(need, c) - idle if max(need, c) > idle else 0


def recovery_model(scenario: Scenario, rates: JobFailureRates) -> RecoveryModel:
    """The recovery steps for ``scenario``'s job with failure ``rates``."""
    f = scenario.failures
    nodes = rates.footprint.nodes
    idle = max(0, scenario.cluster.nodes - nodes)
    swap_rate = float(rates.rates[rates.replace_node].sum())
    notes: list[str] = []
    if f.hot_spares is None:
        hot, src = default_spares(nodes, swap_rate, f.repair_s, idle), "default rule"
        rule = spare_pool_rule()
        notes.append(
            f"spares: failures.hot_spares not given; {hot:,} hot spare nodes assumed beside {idle:,} idle "
            f"cluster nodes (rule: the smallest pool with P(no spare) ≤ {rule.blocking:.0%} by Erlang B, and "
            f"≥ {rule.min_fraction:.0%} of the job's nodes, as in Meta's sparing framework, MLSys 2026); "
            "set failures.hot_spares to override"
        )
    else:
        hot, src = f.hot_spares, "given"
    unset = [k for k in ("detection_s", "restart_s", "repair_s") if k not in f.model_fields_set]
    if unset:
        vals = {"detection_s": f.detection_s, "restart_s": f.restart_s, "repair_s": f.repair_s}
        notes.append(
            "recovery times not given, assumed: "
            + ", ".join(f"failures.{k} {vals[k]:,.0f} s" for k in unset)
            + " (detection: heartbeat/watchdog for fail-stop faults as in Llama 3 §3.3.4; restart: diagnose, "
            "isolate, reschedule, re-initialise at 10k+ GPUs; repair: a node back from the repair queue)"
        )
    spares = hot + idle
    p_none = erlang_b(spares, swap_rate * f.repair_s) if f.repair_s > 0 else 0.0
    wait = f.repair_s / max(spares, 1)
    if f.elastic:
        p = scenario.parallel
        g = scenario.cluster.gpus_per_node
        per_replica = 1 if p is None else max(1, math.ceil(scenario.gpus / max(p.dp, 1) / g))
        wait *= min(1.0, per_replica / max(nodes, 1))
        notes.append(
            f"elastic: with no spare free the job drops one data-parallel replica ({per_replica} node(s) of "
            f"{nodes:,}) until a node is repaired"
        )
    elif spares == 0 and swap_rate > 0:
        notes.append("no spare nodes: every hardware failure waits failures.repair_s for a repaired node")
    # Gemini (SOSP'23) keeps one peer copy: it is lost when the peer node also fails (any node-replacing
    # cause) before the job is back and has re-replicated: detection + restart (+ wait).
    window = rates.detection_s + f.restart_s + p_none * wait
    peer = np.where(rates.replace_node, 1.0 - np.exp(-rates.node_replace_rate_per_node * window), 0.0)
    return RecoveryModel(
        rates.detection_s,
        f.restart_s,
        spares,
        f.repair_s,
        p_none,
        wait,
        peer,
        hot_spares=hot,
        idle_nodes=idle,
        spares_from=src,
        elastic=f.elastic,
        notes=tuple(notes),
    )
