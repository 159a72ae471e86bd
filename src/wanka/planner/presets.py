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

Supernode presets (:data:`SUPERNODES`) pair a supernode scenario with the same accelerators in small
scale-up domains; :func:`supernode_gain` plans a job on both and says what the supernode buys: the
exposed expert-parallel (all-to-all) time under one layout, and the step time each at its best.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass
from typing import Any

from wanka.errors import SpecError
from wanka.planner.search import SearchResult, job_scenario, search
from wanka.planner.space import SearchSpace
from wanka.spec import ParallelSpec, Scenario

__all__ = [
    "PRESETS",
    "SUPERNODES",
    "SearchPreset",
    "SupernodeGain",
    "SupernodePreset",
    "SupernodeSide",
    "get_preset",
    "placement_sizes",
    "search_preset",
    "shrink_domain",
    "supernode_gain",
]


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


# ---------------------------------------------------------------- supernodes (超节点)
@dataclass(frozen=True)
class SupernodePreset:
    """A supernode scenario and what it is measured against: the same accelerators in ``baseline``
    (a scenario preset) or, when None, the supernode scenario with ``baseline_domain``-GPU domains."""

    name: str
    scenario: str
    baseline: str | None
    baseline_domain: int
    en: str
    zh: str

    def scenarios(self) -> tuple[Scenario, Scenario]:
        from wanka.spec import load_scenario

        sup = load_scenario(self.scenario)
        base = load_scenario(self.baseline) if self.baseline else shrink_domain(sup, self.baseline_domain)
        return sup, base


SUPERNODES: dict[str, SupernodePreset] = {
    p.name: p
    for p in (
        SupernodePreset(
            "cloudmatrix384",
            "cloudmatrix384",
            "ascend-910c-384-8npu",
            8,
            "Huawei CloudMatrix384 (384 Ascend 910C on the UB fabric) vs the same NPUs in 8-NPU nodes over RDMA",
            "华为 CloudMatrix384（384 张昇腾 910C，UB 互联）对比同样的 NPU 装在 8 卡节点、节点间走 RDMA",
        ),
        SupernodePreset(
            "nvl72",
            "gb200-nvl72-576",
            None,
            8,
            "GB200 NVL72 racks (72-GPU NVLink domains) vs the same GPUs in 8-GPU NVLink domains",
            "GB200 NVL72 机柜（72 卡 NVLink 域）对比同样的 GPU 分成 8 卡 NVLink 域",
        ),
        SupernodePreset(
            "nvl576",
            "gb200-nvl576",
            "gb200-nvl72-576",
            72,
            "an NVL576-class domain (576 GPUs, two NVLink switch tiers) vs the same GPUs as eight NVL72 racks",
            "NVL576 级超节点（576 卡，两层 NVLink 交换）对比同样的 GPU 分成 8 个 NVL72 机柜",
        ),
    )
}


def shrink_domain(scenario: Scenario, domain: int) -> Scenario:
    """``scenario`` with ``domain``-GPU scale-up domains (same fabric, accelerators, nodes and job): the
    supernode taken apart. A strategy whose tensor parallelism no longer fits a domain is dropped."""
    data = scenario.model_dump(mode="json", exclude_none=True)
    data["cluster"]["scale_up"]["domain_size"] = domain
    data["name"] = f"{scenario.name}-domain{domain}"
    data["cluster"]["name"] = data["name"]
    par = data.get("parallel")
    if par is not None and par.get("tp", 1) > domain:
        data.pop("parallel")
    return Scenario.model_validate(data)


@dataclass(frozen=True)
class SupernodeSide:
    """One cluster of the comparison under one layout."""

    scenario: str
    domain_size: int
    fabric: str | None
    strategy: dict[str, Any]
    step_time_s: float
    ep_exposed_s: float  # exposed expert-parallel all-to-all per step
    comm_exposed_s: float  # all exposed communication per step
    mfu: float
    time_to_train_s: float


def _fall(base: float, sup: float) -> float | None:
    return None if base <= 0 else 1.0 - sup / base


@dataclass(frozen=True)
class SupernodeGain:
    """What a supernode buys one job: the supernode's layout on both clusters (``same``), and each
    cluster at the layout the planner ranks first (``best``; None when not searched)."""

    model: str
    moe: bool
    same: tuple[SupernodeSide, SupernodeSide]  # (supernode, baseline), one layout
    best: tuple[SupernodeSide, SupernodeSide] | None

    @property
    def ep_fall(self) -> float | None:
        """1 - exposed EP time on the supernode / on the baseline, same layout (None: no EP)."""
        return _fall(self.same[1].ep_exposed_s, self.same[0].ep_exposed_s)

    @property
    def step_fall(self) -> float:
        """1 - step time on the supernode / on the baseline, same layout."""
        return 1.0 - self.same[0].step_time_s / self.same[1].step_time_s

    @property
    def best_step_fall(self) -> float | None:
        """1 - step time on the supernode / on the baseline, each at its best layout."""
        return None if self.best is None else 1.0 - self.best[0].step_time_s / self.best[1].step_time_s

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "moe": self.moe,
            "same_layout": [asdict(x) for x in self.same],
            "best_layout": None if self.best is None else [asdict(x) for x in self.best],
            "ep_exposed_fall": self.ep_fall,
            "step_time_fall": self.step_fall,
            "best_step_time_fall": self.best_step_fall,
        }

    def lines(self, lang: str = "en") -> list[str]:
        """The comparison in a few sentences (``en`` or ``zh``)."""
        s, b = self.same
        zh = lang == "zh"

        def fall(x: float) -> str:
            if zh:
                return f"下降 {x:.0%}" if x >= 0 else f"上升 {-x:.0%}"
            return f"{x:.0%} less" if x >= 0 else f"{-x:.0%} more"

        out = []
        if self.ep_fall is not None:
            out.append(
                f"{self.model}：同一并行策略下，暴露的 EP All2All 时间 {b.ep_exposed_s:.2f} s（{b.scenario}）→ "
                f"{s.ep_exposed_s:.2f} s（{s.scenario}），{fall(self.ep_fall)}"
                if zh
                else f"{self.model}, one layout: exposed EP all-to-all {b.ep_exposed_s:.2f} s on {b.scenario} → "
                f"{s.ep_exposed_s:.2f} s on {s.scenario}, {fall(self.ep_fall)}"
            )
        head = "" if self.ep_fall is not None else (f"{self.model}：" if zh else f"{self.model}, one layout: ")
        out.append(
            f"{head}步时 {b.step_time_s:.2f} s → {s.step_time_s:.2f} s（{fall(self.step_fall)}）"
            if zh
            else f"{head}step time {b.step_time_s:.2f} s → {s.step_time_s:.2f} s ({fall(self.step_fall)})"
        )
        if self.best is not None and self.best_step_fall is not None:
            bs, bb = self.best
            out.append(
                f"各自最优策略：步时 {bb.step_time_s:.2f} s → {bs.step_time_s:.2f} s（{fall(self.best_step_fall)}）"
                if zh
                else f"each at its best layout: step time {bb.step_time_s:.2f} s → {bs.step_time_s:.2f} s "
                f"({fall(self.best_step_fall)})"
            )
        return out


def _side(scenario: Scenario, par: ParallelSpec, micro_batch: int) -> SupernodeSide:
    from wanka.engine import estimate_step

    assert scenario.training is not None
    training = scenario.training.model_copy(update={"micro_batch": micro_batch})
    run = scenario.model_copy(update={"parallel": par, "training": training, "job_gpus": par.world_size})
    r = estimate_step(run)
    return SupernodeSide(
        scenario=scenario.name,
        domain_size=scenario.cluster.scale_up.domain_size,
        fabric=scenario.cluster.scale_up.fabric,
        strategy=dict(r.strategy),
        step_time_s=r.step_time_s,
        ep_exposed_s=float(r.breakdown["ep_comm"]),
        comm_exposed_s=r.exposed_comm_s(),
        mfu=r.mfu,
        time_to_train_s=r.time_to_train_s,
    )


def supernode_gain(supernode: Scenario, baseline: Scenario, *, best: bool = True) -> SupernodeGain:
    """Plan ``supernode``'s job on it and on ``baseline`` (the same accelerators in small domains).

    ``same``: the supernode's layout (its ``parallel:`` block, else the one the planner ranks first
    there) on both clusters, so the exposed EP time differs only by where the all-to-all runs.
    ``best`` (with ``best=True``): each cluster at the layout the planner ranks first for it.
    """
    if supernode.model is None or supernode.training is None:
        raise SpecError("the supernode scenario has no training job; add `model:` and `training:`", field="model")
    job = supernode.model_copy(update={"parallel": None, "job_gpus": None})
    base_job = baseline.model_copy(update={"model": supernode.model, "training": supernode.training})
    base_job = base_job.model_copy(update={"parallel": None, "job_gpus": None})
    top = search(job, top=1).best if (best or supernode.parallel is None) else None
    if supernode.parallel is not None:
        par, mb = supernode.parallel, supernode.training.micro_batch
    else:
        assert top is not None
        par, mb = top.parallel_spec(), top.micro_batch
    same = (_side(supernode, par, mb), _side(base_job, par, mb))
    pair = None
    if best:
        assert top is not None
        other = search(base_job, top=1).best
        pair = (
            _side(supernode, top.parallel_spec(), top.micro_batch),
            _side(base_job, other.parallel_spec(), other.micro_batch),
        )
    m = supernode.model
    return SupernodeGain(model=m.name, moe=m.moe is not None, same=same, best=pair)
