"""The story of a comparison: what changed from the traditional cluster to the 万卡 one, and why,
with the what-ifs the article points at (超节点, MoE All2All, FP8), parallel storage and energy.

Every figure comes from :func:`wanka.service.assess` on a variant of a scenario the comparison ran
(one field changed, the strategy searched again where the change opens new layouts); nothing here
recognises a preset or a model by name. The subject of the what-ifs is the comparison's largest
cluster; the MoE what-if puts ``MOE_MODEL`` (a model preset with many experts, the All2All-heavy
case) on it.
"""

from __future__ import annotations

from typing import Any

from wanka.errors import WankaError
from wanka.service import assess
from wanka.spec import Scenario, load_model, parse_scenario

__all__ = ["DOMAIN_WHAT_IFS", "MOE_MODEL", "build_story"]

# scale-up domain sizes of the what-if: an NVL72 rack (NVIDIA GB200 NVL72 datasheet) and a
# CloudMatrix-384-class supernode (Huawei CloudMatrix 384, 2025); the per-GPU link bandwidth stays the
# accelerator's own (only the size of the domain changes)
DOMAIN_WHAT_IFS = (72, 384)
MOE_MODEL = "deepseek-v3"  # 256 routed experts, top-8 (DeepSeek-V3 technical report, arXiv:2412.19437)
PLACE_PRESET = "quick"  # where the MoE job goes on the cluster
WHAT_IF_PRESET = "search"  # what-ifs keep the GPU count and search the strategy again


def _row(label: str, s: Scenario, preset: str = WHAT_IF_PRESET) -> dict[str, Any]:
    a = assess(s, ("engine",), preset=preset)
    if a.step is None:
        return {"label": label, "error": a.errors.get("engine", "no result")}
    r = a.step
    st = r.strategy
    return {
        "label": label,
        "gpus": r.gpus,
        "strategy": {k: st[k] for k in ("tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "zero", "recompute")},
        "step_time_s": r.step_time_s,
        "mfu": r.mfu,
        "exposed_comm_share": r.exposed_comm_s() / r.step_time_s,
        "ep_comm_s": r.breakdown["ep_comm"],
        "ep_share": r.breakdown["ep_comm"] / r.step_time_s,
        "time_to_train_s": r.time_to_train_s,
        "searched": bool(a.strategy is not None and a.strategy.searched),
    }


def _safe(label: str, fn: Any) -> dict[str, Any]:
    try:
        out: dict[str, Any] = fn()
        return out
    except WankaError as e:
        return {"label": label, "error": str(e)}


def _with(s: Scenario, *, parallel: Any = "keep", **paths: Any) -> Scenario:
    """``s`` with dotted fields changed (``cluster.scale_up.domain_size=72``); the strategy kept or dropped."""
    data = s.model_dump(mode="python")
    for path, v in paths.items():
        node = data
        parts = path.split("__")
        for p in parts[:-1]:
            node = node[p]
        node[parts[-1]] = v
    if parallel != "keep":
        data["parallel"] = parallel
        data["job_gpus"] = s.gpus  # the same number of GPUs, only the strategy may change
    return parse_scenario(data, source=f"{s.name} (what-if)")


def build_story(subject: Scenario, reports: list[Any], *, what_ifs: bool = True) -> dict[str, Any]:
    """Numbers for the report's story; ``subject`` is the largest cluster's scenario as run.

    The headline, same-job, storage and energy parts come from ``reports``; ``what_ifs`` adds the
    超节点, MoE and FP8 what-ifs (each a strategy search on a variant of ``subject``: the costly part).
    """
    out: dict[str, Any] = {"subject": subject.name}
    small = min(reports, key=lambda c: c.scale["accelerators"])
    big = max(reversed(reports), key=lambda c: c.scale["accelerators"])  # a tie: the last one given
    out["from"] = small.name
    out["to"] = big.name
    out["headline"] = {
        name: {
            "accelerators": c.scale["accelerators"],
            "job_gpus": c.scale["job_gpus"],
            "model": c.job["model"],
            "mfu": c.efficiency["mfu"],
            "exposed_comm_share": c.efficiency["exposed_comm_share"],
            "scaling": (c.efficiency.get("scaling") or {}).get("efficiency"),
            "time_to_train_s": c.efficiency["time_to_train_s"],
            "wall_clock_s": c.reliability.get("wall_clock_s"),
            "failures_per_day": c.reliability.get("failures_per_day"),
            "ettr": c.reliability.get("ettr"),
            "facility_power_w": c.facility.get("facility_power_w"),
            "energy_j": c.facility.get("energy_j"),
        }
        for name, c in (("from", small), ("to", big))
    }
    same = big.same_job if big.same_job is not None else None
    if small.same_job is not None:
        # the big cluster's job on the small one: the same work, both ways
        sj = small.same_job
        out["same_job"] = {
            "model": sj.model,
            "small_gpus": sj.gpus,
            "small_time_to_train_s": sj.time_to_train_s,
            "small_wall_clock_s": sj.wall_clock_s,
            "big_time_to_train_s": big.efficiency["time_to_train_s"],
            "big_wall_clock_s": big.reliability.get("wall_clock_s"),
        }
    elif same is not None:
        out["same_job"] = None
    out["storage"], out["energy"] = _storage(reports), _energy(reports)
    if not what_ifs:
        out["what_ifs"] = False
        return out
    out["what_ifs"] = True
    # 超节点: the same job with a larger scale-up domain (strategy searched again)
    base = subject.model_copy(update={"parallel": None, "job_gpus": subject.gpus})
    dom = subject.cluster.scale_up.domain_size
    rows = [_safe("now", lambda: _row(f"{dom}", base))]
    for d in DOMAIN_WHAT_IFS:
        if d > dom:
            rows.append(
                _safe(str(d), lambda d=d: _row(str(d), _with(base, parallel=None, cluster__scale_up__domain_size=d)))
            )
    out["superpod"] = {"domain_now": dom, "rows": rows}

    # MoE and All2All: an expert-heavy model on the same cluster; all-to-all vs DeepEP-class dispatch,
    # and the larger scale-up domain
    def moe() -> dict[str, Any]:
        from wanka.report.compare import DEFAULT_BATCH_TOKENS, _job_training, job_on

        m = load_model(MOE_MODEL)
        job = job_on(
            subject.model_copy(update={"job_gpus": None}),
            model=m,
            training=_job_training(m, None, DEFAULT_BATCH_TOKENS),
            note=f"MoE what-if: {m.name}",
        )
        a = assess(job, ("engine",), preset=PLACE_PRESET)
        if a.step is None:
            return {"model": m.name, "error": a.errors.get("engine", "")}
        s1 = a.scenario
        job = job.model_copy(update={"job_gpus": a.step.gpus})
        assert s1.parallel is not None
        alltoall = _with(s1, parallel=s1.parallel.model_copy(update={"ep_dispatch": "alltoall"}).model_dump())
        deepep = _with(s1, parallel=s1.parallel.model_copy(update={"ep_dispatch": "deepep"}).model_dump())
        rows = [_row("alltoall", alltoall), _row("deepep", deepep)]
        for d in DOMAIN_WHAT_IFS:
            if d > dom:
                rows.append(
                    _safe(
                        f"domain {d}",
                        lambda d=d: _row(f"domain {d}", _with(job, parallel=None, cluster__scale_up__domain_size=d)),
                    )
                )
        return {"model": m.name, "experts": m.moe.n_experts if m.moe else None, "rows": rows}

    out["moe"] = _safe("moe", moe)

    # FP8: the same job and strategy in BF16 and in FP8
    def fp8() -> dict[str, Any]:
        from wanka.catalog import accelerator

        acc = accelerator(subject.cluster.accelerator)
        try:
            acc.peak("fp8")
        except (WankaError, KeyError):
            return {"error": f"{subject.cluster.accelerator} has no FP8 tensor cores in the catalog"}
        return {
            "rows": [
                _row("bf16", _with(subject, training__precision="bf16")),
                _row("fp8", _with(subject, training__precision="fp8")),
            ]
        }

    out["fp8"] = _safe("fp8", fp8)
    return out


def _storage(reports: list[Any]) -> list[dict[str, Any]]:
    """Parallel storage: checkpoint writes and data reads, demand against supply, per cluster."""
    return [
        {
            "name": c.name,
            "checkpoint_size_bytes": c.reliability.get("checkpoint_size_bytes"),
            "checkpoint_write_bandwidth": c.reliability.get("checkpoint_write_bandwidth"),
            "checkpoint_limited_by": c.reliability.get("checkpoint_limited_by"),
            "checkpoint_save_s": c.reliability.get("checkpoint_save_s"),
            "checkpoint_blocking_s": c.reliability.get("checkpoint_blocking_s"),
            "data_read": c.reliability.get("data_read"),
        }
        for c in reports
    ]


def _energy(reports: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": c.name,
            "facility_power_w": c.facility.get("facility_power_w"),
            "pue": c.facility.get("pue"),
            "energy_j": c.facility.get("energy_j"),
            "energy_cost_usd": c.facility.get("energy_cost_usd"),
            "co2_kg": c.facility.get("co2_kg"),
            "wall_clock_s": c.facility.get("wall_clock_s"),
        }
        for c in reports
    ]
