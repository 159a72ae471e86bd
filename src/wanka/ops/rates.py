"""Failure-rate tables (data in ``catalog/data/failures.yaml``) and the job-level rate they imply.

A table gives each cause a rate per unit-hour of the component it lives in (GPU, node, NIC, link,
leaf switch, or job). A job spans ``job_footprint`` units of each kind, so its rate for a cause is
``rate_per_unit_hour × units / 3600`` per second, times ``failures.rate_scale`` (superposition of
independent Poisson processes; e.g. Kokolis et al. 2024, "Revisiting Reliability in Large-Scale ML
Research Clusters", §IV: job MTTF ∝ 1 / GPUs).

>>> t = failure_table("llama3-405b")
>>> sum(c.count or 0 for c in t.causes)
419
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from wanka import yamlio
from wanka.catalog import switch as catalog_switch
from wanka.errors import CatalogError, SpecError
from wanka.spec import Scenario

__all__ = [
    "CauseEntry",
    "FailureTable",
    "JobFailureRates",
    "JobFootprint",
    "failure_table",
    "generation_factor",
    "job_failure_rates",
    "job_footprint",
    "list_failure_tables",
    "spare_pool_rule",
]

Unit = Literal["gpu", "node", "nic", "link", "switch", "job"]
_HOUR = 3600.0


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CauseEntry(_Strict):
    """One cause of unexpected interruptions (a row of a published table)."""

    name: str = Field(pattern=r"^[a-z0-9_]+$")
    label: str
    category: str
    component: Literal[
        "gpu",
        "hbm",
        "nvlink",
        "nic",
        "network",
        "switch",
        "optic",
        "host",
        "host_cpu",
        "host_memory",
        "storage",
        "psu",
        "software",
    ]
    unit: Unit
    rate_per_unit_hour: float = Field(ge=0)
    count: int | None = Field(None, ge=0, description="events behind the rate, for provenance")
    replace_node: bool = Field(description="the job must swap a node (hardware) or only restart (software)")
    detection: Literal["heartbeat", "timeout"] = "heartbeat"
    detection_s: float | None = Field(None, ge=0, description="overrides the detection class")
    notes: str = ""


def _units(x: Exposure | JobFootprint, unit: Unit) -> float:
    """How many of ``unit`` (gpu, node, nic, link, switch, job) ``x`` counts."""
    return 1.0 if unit == "job" else float(getattr(x, unit + "es" if unit == "switch" else unit + "s"))


class Exposure(_Strict):
    """Units observed and the window the counts come from."""

    gpus: int = Field(gt=0)
    nodes: int = Field(gt=0)
    nics: int = Field(gt=0)
    links: int = Field(gt=0)
    switches: int = Field(gt=0)
    window_hours: float = Field(gt=0)

    def units(self, unit: Unit) -> float:
        return _units(self, unit)


class FailureTable(_Strict):
    """A published failure table converted to per-unit-hour rates."""

    name: str
    aliases: list[str] = []
    source: str = Field(min_length=5)
    accelerator: str = ""
    exposure: Exposure | None = None
    planned_per_day_observed: float | None = Field(None, ge=0)
    hang_detection_s: float = Field(gt=0)
    hang_detection_source: str = Field(min_length=5)
    leaf_downlinks: int = Field(gt=0)
    leaf_downlinks_source: str = Field(min_length=5)
    causes: list[CauseEntry] = Field(min_length=1)
    notes: str = ""


class SparePoolRule(_Strict):
    """How big a spare pool operators keep when the scenario does not say (``failures.hot_spares``)."""

    blocking: float = Field(gt=0, lt=1)
    min_fraction: float = Field(ge=0, le=1)
    source: str = Field(min_length=5)


class Generation(_Strict):
    """Hardware-rate multiplier for accelerators whose catalog name starts with one of ``match``."""

    match: list[str] = Field(min_length=1)
    factor: float = Field(gt=0, le=100)
    published: bool
    source: str = Field(min_length=5)


class _File(_Strict):
    schema_: Literal["wanka-failures/1"] = Field(alias="schema")
    spare_pool: SparePoolRule
    generations: list[Generation] = []
    tables: list[FailureTable]


def _path() -> Path:
    return Path(str(resources.files("wanka.catalog") / "data" / "failures.yaml"))


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-")


@lru_cache(maxsize=1)
def _file() -> _File:
    path = _path()
    try:
        data = yamlio.load_data(path, yaml11=True)  # yaml.safe_load's result, libyaml + parsed-data cache
        return _File.model_validate(data)
    except (OSError, yaml.YAMLError, ValidationError) as e:
        raise CatalogError(f"failure tables ({path}) are malformed: {e}") from None


def spare_pool_rule() -> SparePoolRule:
    """The default spare-pool rule (``failures.yaml`` ``spare_pool``)."""
    return _file().spare_pool


def generation_factor(accelerator: str, table: FailureTable) -> tuple[float, str | None]:
    """Hardware-rate multiplier for ``accelerator`` and, when it rests on no published table, a note."""
    name = accelerator.upper()
    if table.accelerator and name.startswith(table.accelerator.split("-")[0].upper()):
        return 1.0, None
    for g in _file().generations:
        if any(name.startswith(m.upper()) for m in g.match):
            note = None if g.published else f"failure rates for {accelerator}: {g.source} (×{g.factor:g})"
            return g.factor, note
    return 1.0, f"failure rates for {accelerator}: no published table; {table.name} rates used"


@lru_cache(maxsize=1)
def _tables() -> dict[str, FailureTable]:
    path = _path()
    parsed = _file()
    out: dict[str, FailureTable] = {}
    for t in parsed.tables:
        for key in (t.name, *t.aliases):
            if _norm(key) in out:
                raise CatalogError(f"failure table name or alias {key!r} is used twice ({path})")
            out[_norm(key)] = t
    return out


def list_failure_tables() -> list[str]:
    """Names of the failure-rate tables."""
    return sorted({t.name for t in _tables().values()})


def failure_table(name: str) -> FailureTable:
    """A failure-rate table by name or alias; an unknown name is a SpecError on ``failures.rates``."""
    try:
        return _tables()[_norm(name)]
    except KeyError:
        raise SpecError(
            f"= {name!r}: unknown failure table; known: {', '.join(list_failure_tables())}", field="failures.rates"
        ) from None


@dataclass(frozen=True)
class JobFootprint:
    """Components one job spans: its GPUs, their nodes, NICs, links and leaf switches."""

    gpus: int
    nodes: int
    nics: int
    links: int
    switches: int

    def units(self, unit: Unit) -> float:
        return _units(self, unit)


def job_footprint(scenario: Scenario, *, gpus: int | None = None, table: FailureTable | None = None) -> JobFootprint:
    """Units a job of ``gpus`` (default: the scenario's job) spans.

    One scale-out NIC and one link per GPU (rail-optimised fabrics, e.g. Llama 3 §3.3.1: 400 Gb/s per
    GPU); leaf switches = ceil(NICs / leaf downlinks), the downlinks from the catalog switch when the
    fabric names one, else the table's ``leaf_downlinks``.
    """
    g = scenario.gpus if gpus is None else gpus
    per_node = scenario.cluster.gpus_per_node
    nodes = math.ceil(g / per_node)
    nics = g
    t = table if table is not None else failure_table(scenario.failures.rates)
    down = t.leaf_downlinks
    name = scenario.cluster.fabric.switch
    if name is not None:
        with contextlib.suppress(CatalogError):  # an unknown switch is the network layer's to report
            down = max(1, catalog_switch(name).radix // 2)
    return JobFootprint(gpus=g, nodes=nodes, nics=nics, links=nics, switches=math.ceil(nics / down))


@dataclass(frozen=True)
class JobFailureRates:
    """Per-cause unexpected-interruption rates of one job (1/s) and how each is handled."""

    table: str
    source: str
    footprint: JobFootprint
    names: tuple[str, ...]
    labels: tuple[str, ...]
    categories: tuple[str, ...]
    rates: np.ndarray  # 1/s per cause
    replace_node: np.ndarray  # bool per cause
    detection_s: np.ndarray  # s per cause
    node_replace_rate_per_node: float  # 1/s, one node's rate of node-replacing failures
    floor_rate: float = 0.0  # 1/s, the size-independent (unit: job) part of ``total``
    notes: tuple[str, ...] = ()

    @property
    def total(self) -> float:
        """Job failure rate, 1/s."""
        return float(self.rates.sum())

    @property
    def mtbf_s(self) -> float:
        """Job mean time between unexpected interruptions, s (inf with no failures)."""
        return math.inf if self.total <= 0 else 1.0 / self.total


def job_failure_rates(scenario: Scenario, *, gpus: int | None = None) -> JobFailureRates:
    """The job's per-cause rates from its table, footprint and ``failures.rate_scale``.

    Detection: ``heartbeat`` causes (fail-stop: a crash or an XID error a health check sees) take
    ``failures.detection_s``; ``timeout`` causes (hangs) take the table's collective timeout.
    """
    f = scenario.failures
    t = failure_table(f.rates)
    fp = job_footprint(scenario, gpus=gpus, table=t)
    gen, gen_note = generation_factor(scenario.cluster.accelerator, t)
    hw = np.array([c.component != "software" for c in t.causes], dtype=bool)
    rates = np.array([c.rate_per_unit_hour * fp.units(c.unit) / _HOUR for c in t.causes]) * f.rate_scale
    rates = np.where(hw, rates * gen, rates)
    job_level = np.array([c.unit == "job" for c in t.causes], dtype=bool)
    det = np.array(
        [
            c.detection_s
            if c.detection_s is not None
            else (t.hang_detection_s if c.detection == "timeout" else f.detection_s)
            for c in t.causes
        ]
    )
    repl = np.array([c.replace_node for c in t.causes], dtype=bool)
    per_node = float(rates[repl].sum()) / fp.nodes
    return JobFailureRates(
        table=t.name,
        source=t.source,
        footprint=fp,
        names=tuple(c.name for c in t.causes),
        labels=tuple(c.label for c in t.causes),
        categories=tuple(c.category for c in t.causes),
        rates=rates,
        replace_node=repl,
        detection_s=det,
        node_replace_rate_per_node=per_node,
        floor_rate=float(rates[job_level].sum()),
        notes=(gen_note,) if gen_note else (),
    )
