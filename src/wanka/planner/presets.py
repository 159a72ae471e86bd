"""Named search-space presets: the one strategy search every face uses to place a job.

``wanka search`` searches the scenario's own GPU count over :class:`SearchSpace` (preset ``search``).
When a job is put on a cluster it was not written for (``compare --job``, ``claims``, the web
planner), the number of GPUs it uses is part of the question: preset ``place`` searches the same
space over the largest GPU counts of the form 2^k and 3·2^k that fit the cluster (every published
world size in ``wanka/data/validation`` has that form: tp, pp, cp and dp are powers of two, and a
pipeline of 3·2^j stages) plus the scenario's own count, and keeps the fastest time to train.
``quick`` narrows the space for interactive use (fewer micro-batch sizes, ZeRO 1 or 3, vpp ≤ 4).

Every preset ends in :func:`wanka.planner.search`; the strategy a preset picks for a job at N GPUs
is therefore the one ``wanka search`` ranks first for that job at N GPUs (same space, same order).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from wanka.errors import SpecError
from wanka.planner.search import SearchResult, job_scenario, search
from wanka.planner.space import SearchSpace
from wanka.spec import Scenario

__all__ = ["PRESETS", "SearchPreset", "get_preset", "placement_sizes", "search_preset"]


@dataclass(frozen=True)
class SearchPreset:
    """A named search: the strategy space and how many GPU counts to try (0: the scenario's own)."""

    name: str
    space: SearchSpace
    sizes: int
    en: str
    zh: str

    def to_dict(self) -> dict[str, object]:
        s = self.space
        return {
            "name": self.name,
            "sizes": self.sizes,
            "micro_batches": list(s.micro_batches),
            "vpp_max": s.vpp_max,
            "zero": list(s.zero),
            "recompute": list(s.recompute),
            "max_cp": s.max_cp,
            "description": {"en": self.en, "zh": self.zh},
        }


PRESETS: dict[str, SearchPreset] = {
    p.name: p
    for p in (
        SearchPreset(
            "search",
            SearchSpace(),
            0,
            "the scenario's own GPU count, every strategy (what `wanka search` does)",
            "任务自身卡数，全部并行策略（与 `wanka search` 相同）",
        ),
        SearchPreset(
            "place",
            SearchSpace(),
            6,
            "the six largest GPU counts 2^k or 3·2^k that fit the cluster, every strategy; fastest time to train",
            "集群内可容纳的最大六个 2^k 或 3·2^k 卡数，全部并行策略；取训练时长最短者",
        ),
        SearchPreset(
            "quick",
            SearchSpace(micro_batches=(1, 2), vpp_max=4, zero=(1, 3)),
            4,
            "the four largest GPU counts 2^k or 3·2^k; micro-batch 1-2, ZeRO 1 or 3, vpp ≤ 4 (interactive)",
            "最大四个 2^k 或 3·2^k 卡数；微批 1-2、ZeRO 1 或 3、vpp ≤ 4（交互用）",
        ),
    )
}


def get_preset(name: str) -> SearchPreset:
    """The preset called ``name``; an unknown name is a SpecError listing the known ones."""
    p = PRESETS.get(name)
    if p is None:
        raise SpecError(f"= {name!r}: must be one of {', '.join(PRESETS)}", field="preset")
    return p


def placement_sizes(scenario: Scenario, count: int) -> tuple[int, ...]:
    """The ``count`` largest GPU counts 2^k or 3·2^k ≤ the cluster, and the scenario's own count."""
    cap = scenario.cluster.accelerators
    sizes: set[int] = set()
    k = 1
    while k <= cap:
        sizes.add(k)
        if 3 * k <= cap:
            sizes.add(3 * k)
        k *= 2
    top = sorted(sizes, reverse=True)[:count]
    own = scenario.gpus
    return tuple(sorted({*top, own} if 1 <= own <= cap else set(top), reverse=True))


_CACHE: OrderedDict[tuple[str, str], SearchResult] = OrderedDict()
_CACHE_SIZE = 256
_LOCK = threading.Lock()


def search_preset(scenario: Scenario, preset: str = "place") -> SearchResult:
    """Run ``preset``'s search on ``scenario``'s job (results cached per scenario and preset)."""
    p = get_preset(preset)
    job = job_scenario(scenario)  # raises a SpecError when there is no training job
    key = (job.model_dump_json(), preset)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    gpus = placement_sizes(job, p.sizes) if p.sizes else None
    res = search(job, top=1, space=p.space, gpus=gpus)
    with _LOCK:
        _CACHE[key] = res
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return res
