"""Recovery after an interruption: detect, diagnose and isolate, swap a node (spare or repair), restart.

Per event: ``detection`` (heartbeat/watchdog for fail-stop faults, the collective timeout for hangs;
see ``rates``) → ``restart_s`` (diagnose, isolate, reschedule, re-initialise NCCL and the model) →
a wait for a node when the cause needs one swapped and no spare is free → checkpoint load.

Spares: failed nodes go to repair for ``repair_s`` and come back; the pool of ``c`` spare nodes (the
scenario's ``hot_spares`` plus cluster nodes the job does not use — Llama 3 ran on 16k GPUs of a 24k
cluster) is an M/M/c/c loss system, so a swap finds no spare with the Erlang-B probability
``B(c, a)``, ``a = λ_swap · repair_s`` (Erlang 1917). Then the job waits for the first repair:
``repair_s`` with no spares, ``repair_s / c`` (mean of the first of c exponential repairs) with c.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from wanka.ops.rates import JobFailureRates
from wanka.spec import Scenario

__all__ = ["RecoveryModel", "erlang_b", "recovery_model"]


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
    spare_wait_s: float  # then the job waits this long for a repaired node
    peer_loss_p: np.ndarray  # in_memory: per cause, the failed node's peer copy is lost too

    def expected_wait_s(self, replace_node: np.ndarray) -> np.ndarray:
        return np.where(replace_node, self.p_no_spare * self.spare_wait_s, 0.0)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["detection_s"] = self.detection_s.tolist()
        d["peer_loss_p"] = self.peer_loss_p.tolist()
        return d


def recovery_model(scenario: Scenario, rates: JobFailureRates) -> RecoveryModel:
    """The recovery steps for ``scenario``'s job with failure ``rates``."""
    f = scenario.failures
    idle = max(0, scenario.cluster.nodes - rates.footprint.nodes)
    spares = f.hot_spares + idle
    swap_rate = float(rates.rates[rates.replace_node].sum())
    p_none = erlang_b(spares, swap_rate * f.repair_s) if f.repair_s > 0 else 0.0
    wait = f.repair_s / max(spares, 1)
    # Gemini (SOSP'23) keeps one peer copy: it is lost when the peer node also fails (any node-replacing
    # cause) before the job is back and has re-replicated: detection + restart (+ wait).
    window = rates.detection_s + f.restart_s + p_none * wait
    peer = np.where(rates.replace_node, 1.0 - np.exp(-rates.node_replace_rate_per_node * window), 0.0)
    return RecoveryModel(rates.detection_s, f.restart_s, spares, f.repair_s, p_none, wait, peer)
