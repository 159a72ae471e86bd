"""The HTTP API (``/api/...``): every face of the CLI as JSON, through the service layer.

Validation is the CLI's: a bad field is a 422 whose ``detail[0].loc`` ends in the field's dotted
path and whose ``msg`` is the message ``wanka`` prints. Sizes are bounded (body 1 MiB, GPUs by the
spec, replicas, top-k, GPU options, compare clusters); work runs in a worker thread with a time
limit (503 when the server is busy, 504 past the limit); no endpoint reads or writes a path the
client names (the run store is the one given to ``wanka serve --db``).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from wanka.errors import SpecError
from wanka.service import assess
from wanka.web.inputs import resolve_scenario
from wanka.web.runtime import offload, plan_json

__all__ = ["router"]

router = APIRouter(prefix="/api")

ScenarioRef = str | dict[str, Any]
MAX_API_REPLICAS = 2_000


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScenarioIn(_In):
    scenario: ScenarioRef = Field(
        ...,
        description="a preset name (see /api/presets) or an inline scenario mapping",
        examples=["meta-24k-h100-roce"],
    )
    set: dict[str, Any] = Field(
        default_factory=dict,
        description="dotted-field overrides, e.g. {'cluster.fabric.nic_gbps_per_gpu': 800}",
        max_length=32,
    )
    preset: Literal["search", "place", "quick"] = Field(
        "quick", description="search preset used when the scenario gives no strategy (or one that cannot run)"
    )


class RunIn(ScenarioIn):
    replicas: int = Field(200, ge=1, le=MAX_API_REPLICAS, description="Monte Carlo replicas")
    seed: int = Field(0, ge=0, le=2**31 - 1)


class SearchIn(ScenarioIn):
    top: int = Field(5, ge=1, le=100)
    objective: Literal["time", "cost", "energy"] = "time"
    gpus: list[int] | None = Field(None, max_length=16, description="GPU counts to search (Pareto front)")


class CollectiveIn(_In):
    op: Literal["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send_recv"] = "all_reduce"
    bytes: float = Field(2**30, gt=0, le=2**40, description="per-rank buffer in bytes (nccl-tests size)")
    gpus: int = Field(8, ge=1, le=2_000_000)
    stride: int = Field(1, ge=1, le=1024)
    scenario: ScenarioRef | None = Field(None, description="preset or inline scenario; default DGX-H100-like")
    algorithm: str = Field(
        "auto",
        max_length=40,
        description="force an algorithm as NCCL_ALGO does (ring, tree, nvls, nvls_tree, collnet, collnet_chain, "
        "pat, hierarchical, or NCCL's names); auto: NCCL's tuner",
    )


class CompareIn(_In):
    scenarios: list[ScenarioRef] = Field(..., min_length=1, max_length=4)
    job: str | None = Field(None, description="a model preset put on every cluster")
    tokens: float | None = Field(None, gt=0, le=1e16)
    replicas: int = Field(60, ge=1, le=500)
    seed: int = Field(0, ge=0, le=2**31 - 1)


def _scenario(body: ScenarioIn) -> Any:
    return resolve_scenario(body.scenario, body.set)


# ---------------------------------------------------------------- compute endpoints
@router.post(
    "/plan",
    summary="Step time, breakdown, memory, MFU of the job (engine), with checkpoint I/O",
    response_class=Response,
    responses={200: {"content": {"application/json": {}}}},
)
async def plan(body: ScenarioIn) -> Response:
    data = await offload(lambda: plan_json(_scenario(body), body.preset))
    return Response(data, media_type="application/json")


async def _campaign(body: RunIn, layers: tuple[str, ...]) -> dict[str, Any]:
    """The service's assessment of ``layers`` with the request's Monte Carlo seed and replicas, off the loop."""
    return await offload(
        lambda: assess(_scenario(body), layers, preset=body.preset, seed=body.seed, replicas=body.replicas).to_dict()
    )


@router.post("/reliability", summary="Failures, MTBF, checkpoints, ETTR and wall clock (engine → ops)")
async def reliability(body: RunIn) -> dict[str, Any]:
    return await _campaign(body, ("engine", "ops", "storage"))


@router.post("/facility", summary="Power, racks, PUE, energy, cost, CO2 (engine → ops → facility)")
async def facility(body: RunIn) -> dict[str, Any]:
    return await _campaign(body, ("engine", "ops", "facility"))


@router.post("/storage", summary="Checkpoint size and save/stall/load per mode, data-read demand vs supply")
async def storage(body: ScenarioIn) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        from wanka.storage import checkpoint_io

        a = assess(_scenario(body), ("engine", "storage"), preset=body.preset)
        d = a.to_dict()
        d["storage"]["modes"] = {m: checkpoint_io(a.scenario, mode=m).to_dict() for m in ("sync", "async", "in_memory")}
        return d

    return await offload(run)


@router.post("/fabric", summary="The scale-out fabric: tiers, switches, optics, bisection, power")
async def fabric(body: ScenarioIn) -> dict[str, Any]:
    return await offload(lambda: assess(_scenario(body), ("network",)).to_dict())


@router.post("/assess", summary="Every layer in order: engine, ops, facility, storage, network")
async def assess_all(body: RunIn) -> dict[str, Any]:
    return await offload(
        lambda: assess(_scenario(body), preset=body.preset, seed=body.seed, replicas=body.replicas).to_dict()
    )


@router.post("/search", summary="Ranked parallel strategies (wanka search)")
async def search(body: SearchIn) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        from wanka.planner import search as planner_search
        from wanka.planner.presets import get_preset

        s = _scenario(body)
        cap = s.cluster.accelerators
        for i, g in enumerate(body.gpus or []):
            if not 1 <= g <= cap:
                raise SpecError(f"= {g}: must be between 1 and the cluster's {cap:,} accelerators", field=f"gpus[{i}]")
        space = get_preset(body.preset).space
        r = planner_search(s, top=body.top, objective=body.objective, gpus=body.gpus, space=space)
        return r.to_dict()

    return await offload(run)


@router.post("/collective", summary="One collective's time, algbw, busbw (nccl-tests conventions)")
async def collective(body: CollectiveIn) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        from wanka.network.collectives import algorithm_name, collective_time, forced_algorithm_problem
        from wanka.network.groups import comm_group
        from wanka.spec import ClusterSpec, FabricSpec

        if body.scenario is not None:
            cluster = resolve_scenario(body.scenario).cluster
        else:
            if body.gpus * body.stride > 2_000_000:
                raise SpecError(f"= {body.gpus} x stride {body.stride}: at most 2,000,000 GPUs", field="gpus")
            nodes = max(1, math.ceil(body.gpus * body.stride / 8))
            cluster = ClusterSpec(
                name=f"dgx-h100-like-{body.gpus}",
                accelerator="H100-SXM5-80GB",
                nodes=nodes,
                fabric=FabricSpec(kind="infiniband", tiers=3 if nodes * 8 > 2048 else 2),
            )
        if body.gpus * body.stride > cluster.accelerators:
            raise SpecError(
                f"= {body.gpus} x stride {body.stride} exceeds the cluster's {cluster.accelerators:,} GPUs",
                field="gpus",
            )
        g = comm_group(cluster, body.gpus, body.stride)
        try:
            algorithm = algorithm_name(body.algorithm)
        except ValueError as e:
            raise SpecError(str(e), field="algorithm") from None
        problem = forced_algorithm_problem(algorithm, body.op, g)
        if problem is not None:
            raise SpecError(problem, field="algorithm")
        try:
            r = collective_time(body.op, body.bytes, g, algorithm)
        except ValueError as e:
            raise SpecError(str(e).removeprefix("algorithm "), field="algorithm") from None
        return {"cluster": cluster.name, **r.to_dict(), "per_domain": g.per_domain}

    return await offload(run)


@router.post("/compare", summary="Traditional vs 万卡: the same job on several clusters, every layer")
async def compare(body: CompareIn) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        from wanka.report.compare import compare as do_compare

        scs = [resolve_scenario(x, field=f"scenarios[{i}]") for i, x in enumerate(body.scenarios)]
        if body.job is not None:
            from wanka.spec import list_model_presets

            if body.job not in list_model_presets():
                raise SpecError(f"= {body.job[:80]!r}: must be a model preset name", field="job")
        return do_compare(scs, job=body.job, tokens=body.tokens, seed=body.seed, replicas=body.replicas).to_dict()

    return await offload(run, limit_s=120.0)


@router.get("/claims", summary="The seed article's claims with the arithmetic and a verdict")
async def claims(ids: list[str] | None = Query(None, max_length=32)) -> list[dict[str, Any]]:
    def run() -> list[dict[str, Any]]:
        from wanka.report.claims import evaluate_claims

        return [r.to_dict() for r in evaluate_claims(only=list(ids) if ids else None)]

    return await offload(run, limit_s=120.0, cache_key=("claims", tuple(ids or ())))


# ---------------------------------------------------------------- look-ups
@router.get("/presets", summary="Scenario presets, model presets and search presets")
async def presets() -> dict[str, Any]:
    from wanka.planner.presets import PRESETS
    from wanka.spec import list_model_presets, list_presets

    return {
        "scenarios": list_presets(),
        "models": list_model_presets(),
        "search": [p.to_dict() for p in PRESETS.values()],
    }


@router.get("/presets/{name}", summary="One scenario preset as JSON")
async def preset(name: str) -> dict[str, Any]:
    import json

    from wanka.spec import dump_json

    return json.loads(dump_json(resolve_scenario(name, field="name")))


@router.get("/catalog", summary="Hardware catalog entries with their sources")
async def catalog(
    kind: Literal["accelerators", "nodes", "nics", "switches", "optics", "storage"] | None = None,
) -> dict[str, Any]:
    from wanka.catalog import catalog as cat

    raw = cat().raw
    kinds = (kind,) if kind else ("accelerators", "nodes", "nics", "switches", "optics", "storage")
    return {k: raw[k] for k in kinds}


@router.post("/model/import", summary="A Hugging Face config.json (the request body) as a wanka model spec")
async def model_import(
    request: Request,
    name: str | None = Query(None, max_length=80, pattern=r"^[A-Za-z0-9._-]+$"),
    seq_len: int | None = Query(None, ge=1, le=10_000_000),
) -> dict[str, Any]:
    from wanka.spec.hf_import import model_from_hf_config
    from wanka.web.runtime import read_json_body

    data = await read_json_body(request)

    def run() -> dict[str, Any]:
        m = model_from_hf_config(data, name=name, seq_len=seq_len, source="request body")
        from wanka.workload import parameter_count

        pc = parameter_count(m)
        return {"model": m.model_dump(mode="json"), "params": pc.total, "active_params": pc.active}

    return await offload(run)


# ---------------------------------------------------------------- run store
@router.get("/runs", summary="Runs in the server's store (sweeps and saved plans)")
async def runs(request: Request) -> list[dict[str, Any]]:
    from wanka.web.runtime import store_call

    return await store_call(request, lambda st: [r.to_dict() for r in st.runs()])


@router.get("/runs/{run_id}", summary="One run and its points")
async def run(request: Request, run_id: int = Path(..., ge=0, le=2**62)) -> dict[str, Any]:
    from wanka.web.runtime import store_call

    def get(st: Any) -> dict[str, Any]:
        return {"run": st.run(run_id).to_dict(), "points": [p.to_dict() for p in st.points(run_id)]}

    return await store_call(request, get)


@router.post("/runs", summary="Save a plan of a scenario as a run in the server's store")
async def save_run(request: Request, body: ScenarioIn) -> dict[str, Any]:
    from wanka.web.runtime import save_plan_run

    return await save_plan_run(request, _scenario(body), body.preset)
