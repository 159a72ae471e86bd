"""Sweep files: a base scenario, axes to vary (dotted field paths), and what to compute per point.

.. code-block:: yaml

    name: nic-and-domain
    base: llama3-405b-16k-h100-54d        # preset name or scenario file (relative to this file)
    mode: plan                            # plan | search | reliability
    parallel: keep                        # keep: the base strategy where it still fits, else search
    axes:                                 # the cartesian product of these is the set of points
      cluster.fabric.nic_gbps_per_gpu: [200, 400, 800]
      cluster.scale_up.domain_size: [8, 72]
    set: {training.micro_batch: 1}        # optional: overrides applied to every point
    search: {top: 3, objective: time}     # search mode, and the plan-mode fallback
    reliability: {replicas: 200, seed: 0}

A point's scenario is the base deep-merged with the point's overrides (``wanka.spec.parse_scenario``).
A point that changes the cluster size (``cluster.nodes``, ``cluster.gpus_per_node``) and does not set
``job_gpus`` runs its job on the whole new cluster; otherwise the job keeps the base's GPU count.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from wanka.errors import SpecError
from wanka.planner.search import OBJECTIVES
from wanka.spec import Scenario, load_scenario, parse_scenario
from wanka.spec.io import deep_merge, nest_dotted, read_yaml, spec_class

__all__ = ["MODES", "SweepJob", "SweepSpec", "load_sweep", "parse_sweep", "point_key", "point_scenario"]

MODES = ("plan", "search", "reliability")
POLICIES = ("keep", "auto")
MAX_POINTS = 100_000
_TOP_KEYS = ("name", "description", "base", "mode", "parallel", "axes", "set", "search", "reliability")
_SEARCH_KEYS: dict[str, type] = {"top": int, "objective": str, "goodput": bool}
_RELIABILITY_KEYS: dict[str, type] = {"replicas": int, "seed": int}
_SIZE_PATHS = ("cluster", "cluster.nodes", "cluster.gpus_per_node")


@dataclass(frozen=True)
class SweepJob:
    """What a worker needs to compute any point of a sweep (picklable, sent once per chunk)."""

    base: dict[str, Any]  # the resolved base scenario (JSON-able)
    base_gpus: int
    mode: str
    parallel: str
    fixed: tuple[tuple[str, Any], ...]
    top: int = 5
    objective: str = "time"
    goodput: bool = False
    replicas: int = 200
    seed: int = 0


@dataclass(frozen=True)
class SweepSpec:
    """A parsed sweep file: its identity (name, hash), its axes and the job each point runs."""

    name: str
    source: str | None
    base_ref: str
    axes: tuple[tuple[str, tuple[Any, ...]], ...]
    job: SweepJob
    hash: str

    @property
    def mode(self) -> str:
        return self.job.mode

    @property
    def size(self) -> int:
        n = 1
        for _, values in self.axes:
            n *= len(values)
        return n

    def points(self) -> list[dict[str, Any]]:
        """Every point's overrides (axis path → value), in axis order, the last axis varying fastest."""
        names = [a for a, _ in self.axes]
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(v for _, v in self.axes))]

    def to_dict(self) -> dict[str, Any]:
        j = self.job
        return {
            "name": self.name,
            "source": self.source,
            "base": self.base_ref,
            "mode": j.mode,
            "parallel": j.parallel,
            "axes": {a: list(v) for a, v in self.axes},
            "set": dict(j.fixed),
            "search": {"top": j.top, "objective": j.objective, "goodput": j.goodput},
            "reliability": {"replicas": j.replicas, "seed": j.seed},
            "points": self.size,
            "hash": self.hash,
        }


def point_key(overrides: Mapping[str, Any]) -> str:
    """Canonical JSON of a point's overrides: the point's identity in the run store."""
    return json.dumps(dict(overrides), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------- field paths
_spec_class = spec_class


def check_path(path: str, field: str) -> None:
    """Raise a SpecError naming ``field`` unless ``path`` is a field of the scenario tree."""
    if not isinstance(path, str) or not path:
        raise SpecError(f"= {path!r}: an axis must be a dotted field path such as cluster.nodes", field=field)
    cls: type[BaseModel] | None = Scenario
    walked: list[str] = []
    for part in path.split("."):
        if cls is None:
            raise SpecError(f"{'.'.join(walked)} is a value, it has no field {part!r}", field=field)
        fields = cls.model_fields
        if part not in fields:
            where = ".".join(walked) or "the scenario"
            raise SpecError(f"unknown field {part!r} in {where}; known: {', '.join(sorted(fields))}", field=field)
        walked.append(part)
        cls = _spec_class(fields[part].annotation)


def point_scenario(job: SweepJob, overrides: Mapping[str, Any]) -> tuple[Scenario, dict[str, Any] | None]:
    """The point's scenario (no strategy) and the strategy mapping it would inherit (or None)."""
    flat = dict(job.fixed)
    flat.update(overrides)
    data = deep_merge(job.base, nest_dotted(flat))
    parallel = data.pop("parallel", None)
    if "job_gpus" not in flat:
        resized = any(p in _SIZE_PATHS for p in flat)
        data["job_gpus"] = None if resized else job.base_gpus
    return parse_scenario(data, source="sweep point"), parallel


# ---------------------------------------------------------------- parsing
def _options(raw: Any, allowed: dict[str, type], field: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise SpecError(f"expected a mapping of {', '.join(allowed)}", field=field)
    out = {}
    for k, v in raw.items():
        if k not in allowed:
            raise SpecError(f"unknown option; allowed: {', '.join(allowed)}", field=f"{field}.{k}")
        want = allowed[k]
        if not isinstance(v, want) or (want is int and isinstance(v, bool)):
            raise SpecError(f"= {v!r}: must be {want.__name__}", field=f"{field}.{k}")
        out[k] = v
    return out


def _base_ref(base: Any, here: Path | None) -> str:
    if not isinstance(base, str) or not base:
        raise SpecError(f"= {base!r}: must be a preset name or a scenario file", field="base")
    p = Path(base)
    if p.suffix in (".yaml", ".yml", ".json"):
        if not p.is_absolute() and here is not None and (here / p).exists():
            p = here / p
        return str(p.resolve())
    return base


def parse_sweep(data: Any, source: str | None = None, lines: Any = None) -> SweepSpec:
    """Validate a sweep mapping (see the module docstring); errors name the field and its line."""

    def err(message: str, field: str, loc: tuple[str, ...] = ()) -> SpecError:
        line = lines.line(loc or tuple(field.split(".")[:1])) if lines is not None else None
        return SpecError(message, field=field, source=source, line=line)

    if not isinstance(data, Mapping):
        raise SpecError(f"expected a mapping with base and axes, got {type(data).__name__}", source=source)
    problems: list[SpecError] = []  # every independent problem is reported at once

    def bad(message: str, field: str, loc: tuple[str, ...] = ()) -> None:
        problems.append(err(message, field, loc))

    for k in data:
        if k not in _TOP_KEYS:
            bad(f"unknown field; allowed: {', '.join(_TOP_KEYS)}", str(k), (str(k),))
    base: Scenario | None = None
    base_ref = ""
    if "base" not in data:
        bad("required field is missing (a preset name or scenario file)", "base")
    else:
        here = Path(source).parent if source else None
        try:
            base_ref = _base_ref(data["base"], here)
            base = load_scenario(base_ref)
        except SpecError as e:
            bad(e.detail if e.field == "base" else str(e), "base")
    mode = data.get("mode", "plan")
    if mode not in MODES:
        bad(f"= {mode!r}: must be one of {', '.join(MODES)}", "mode")
    policy = data.get("parallel", "keep")
    if policy not in POLICIES:
        bad(f"= {policy!r}: must be keep (the base strategy where it fits) or auto (search)", "parallel")
    if base is not None and (base.model is None or base.training is None):
        bad(f"base scenario {base_ref!r} has no training job (model and training)", "base")
    axes_raw = data.get("axes")
    axes: list[tuple[str, tuple[Any, ...]]] = []
    if not isinstance(axes_raw, Mapping) or not axes_raw:
        bad("must map at least one dotted field path to a list of values", "axes")
        axes_raw = {}
    for path, values in axes_raw.items():
        field = f"axes.{path}"
        try:
            check_path(path, field)
        except SpecError as e:
            bad(e.detail, field, ("axes", str(path)))
            continue
        if not isinstance(values, list) or not values:
            bad(f"= {values!r}: must be a non-empty list of values", field, ("axes", path))
            continue
        if len({point_key({"v": v}) for v in values}) != len(values):
            bad("lists a value twice", field, ("axes", path))
            continue
        axes.append((path, tuple(values)))
    fixed_raw = data.get("set") or {}
    if not isinstance(fixed_raw, Mapping):
        bad("must map dotted field paths to values", "set")
        fixed_raw = {}
    for path in fixed_raw:
        try:
            check_path(path, f"set.{path}")
        except SpecError as e:
            bad(e.detail, f"set.{path}", ("set", str(path)))
            continue
        if path in axes_raw:
            bad("is also an axis; give it in one place", f"set.{path}", ("set", str(path)))
    so: dict[str, Any] = {}
    ro: dict[str, Any] = {}
    try:
        so = _options(data.get("search"), _SEARCH_KEYS, "search")
        if so.get("objective", "time") not in OBJECTIVES:
            bad(f"= {so['objective']!r}: must be one of {', '.join(OBJECTIVES)}", "search.objective")
        if not (1 <= so.get("top", 5) <= 100):
            bad(f"= {so['top']}: must be between 1 and 100", "search.top")
    except SpecError as e:
        problems.append(err(e.detail, e.field or "search", tuple((e.field or "search").split("."))))
    try:
        ro = _options(data.get("reliability"), _RELIABILITY_KEYS, "reliability")
        if not (1 <= ro.get("replicas", 200) <= 100_000):
            bad(f"= {ro['replicas']}: must be between 1 and 100,000", "reliability.replicas")
        if not (0 <= ro.get("seed", 0) <= 2**32 - 1):
            bad(f"= {ro['seed']}: must be between 0 and 4,294,967,295", "reliability.seed")
    except SpecError as e:
        problems.append(err(e.detail, e.field or "reliability", tuple((e.field or "reliability").split("."))))
    if problems or base is None:
        raise SpecError.collect(problems)
    base_data = base.model_dump(mode="json", exclude_unset=True)  # unset stays unset (fabric.tiers: auto)
    job = SweepJob(
        base=base_data,
        base_gpus=base.gpus,
        mode=mode,
        parallel=policy,
        fixed=tuple((str(k), v) for k, v in fixed_raw.items()),
        **so,
        **ro,
    )
    name = data.get("name") or (Path(source).stem if source else "sweep")
    if not isinstance(name, str):
        raise err(f"= {name!r}: must be a string", "name")
    size = 1
    for _, v in axes:
        size *= len(v)
    if size > MAX_POINTS:
        raise err(f"the axes make {size:,} points; at most {MAX_POINTS:,}", "axes")
    # every `set:` value must be valid for its own field (else every point would fail the same way)
    try:
        point_scenario(job, {})
    except SpecError as e:
        for pr in e.problems:
            hit = next(
                (
                    q
                    for q in job.fixed
                    if pr.field and not pr.cross_field and (pr.field == q[0] or pr.field.startswith(q[0] + "."))
                ),
                None,
            )
            if hit is not None:
                detail = pr.detail if pr.detail.startswith("= ") else f"= {hit[1]!r}: {pr.detail}"
                raise err(detail, f"set.{hit[0]}", ("set", hit[0])) from None
    # each value must be valid for its own field; rules across fields (domain size vs GPUs per node)
    # depend on the other axes and are checked per point, where a failure is stored as that point's error
    for path, values in axes:
        for v in values:
            try:
                point_scenario(job, {path: v})
            except SpecError as e:
                own = next(
                    (
                        p
                        for p in e.problems
                        if p.field is not None
                        and not p.cross_field  # a rule across fields is checked per point
                        and (p.field == path or p.field.startswith(path + "."))
                    ),
                    None,
                )
                if own is not None:
                    detail = own.detail if own.detail.startswith("= ") else f"= {v!r}: {own.detail}"
                    raise err(detail, f"axes.{path}", ("axes", path)) from None
    ident = {
        "base": base_ref,
        "base_scenario": base_data,
        "mode": mode,
        "parallel": policy,
        "axes": [[a, list(v)] for a, v in axes],
        "set": dict(job.fixed),
        "options": {"search": so, "reliability": ro},
    }
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return SweepSpec(name=name, source=source, base_ref=base_ref, axes=tuple(axes), job=job, hash=digest)


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and validate a sweep YAML file."""
    p = Path(path)
    if not p.exists():
        raise SpecError(f"no such sweep file: {p}", field="sweep")
    data, lines = read_yaml(p, field="sweep file")
    return parse_sweep(data, str(p), lines)
