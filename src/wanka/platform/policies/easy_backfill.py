"""EASY backfill: arrival order, a reservation for the first blocked job, later jobs fill the gaps.

Later jobs start early only when they cannot delay the head's reservation (see
:mod:`wanka.platform.policies.base`). Run times are the trace's, i.e. perfect user estimates.
"""

from __future__ import annotations

from wanka.platform.policies.base import QueuePolicy

__all__ = ["EasyBackfill"]


class EasyBackfill(QueuePolicy):
    name = "easy_backfill"
    backfill = True
    preempt = False
