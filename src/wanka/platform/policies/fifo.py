"""FIFO: jobs start strictly in arrival order; a job that does not fit blocks everyone behind it."""

from __future__ import annotations

from wanka.platform.policies.base import QueuePolicy

__all__ = ["Fifo"]


class Fifo(QueuePolicy):
    name = "fifo"
    backfill = False
    preempt = False
