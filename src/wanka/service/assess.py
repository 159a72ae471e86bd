"""One entry for every face: run the layers in order on a scenario and return one typed result.

``assess(scenario, what=...)`` runs

1. **engine** — the scenario's own strategy, or (no ``parallel:`` block, or one that cannot run)
   the fastest strategy of one shared search (:func:`wanka.planner.presets.search_preset`);
2. **ops** — the Monte Carlo campaign: failures, restarts, checkpoints, ETTR, wall clock;
3. **facility** — power, racks, energy, cost and CO2 over the campaign's wall clock;
4. **storage** — checkpoint size and save/stall/load, data-read demand against supply;
5. **network** — the fabric's bill of materials (tiers, switches, optics, bisection, power);

and collects every assumption the layers state, tagged with the layer it comes from. A layer that
fails on the input (a WankaError) leaves its section empty and says why in ``errors``; the layers
after it that do not need it still run. The CLI (``compare``, ``claims``), the HTML report, the web
pages and the HTTP API all call this function; none chains the layers itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wanka.catalog.envelope import envelope_note
from wanka.engine import StepResult, estimate_step
from wanka.errors import InfeasibleError, SpecError, WankaError
from wanka.spec import Scenario, parse_scenario

if TYPE_CHECKING:  # the planner is imported when a strategy must be searched (~80 ms)
    from wanka.planner import Candidate

__all__ = [
    "LAYERS",
    "Assessment",
    "Assumption",
    "StrategyChoice",
    "assess",
    "choose_strategy",
    "windowless",
]

LAYERS: tuple[str, ...] = ("engine", "ops", "facility", "storage", "network")
MAX_REPLICAS = 1_000_000  # as wanka.ops; each face bounds its own (the API: 500)


@dataclass(frozen=True)
class Assumption:
    """An input that is not published, and which layer or file states it."""

    origin: str  # preset | engine | ops | storage | network | facility | infra | report | service
    text: str


@dataclass(frozen=True)
class StrategyChoice:
    """Where the strategy the engine ran comes from."""

    source: str  # "scenario" | "search" | "search (scenario's strategy cannot run)"
    preset: str | None
    evaluated: int
    feasible: int
    gpus_tried: tuple[int, ...]
    candidate: Candidate | None
    why: str = ""

    @property
    def searched(self) -> bool:
        return self.source != "scenario"

    def rule(self) -> str:
        if not self.searched:
            return "the scenario's parallel: block"
        assert self.preset is not None
        from wanka.planner.presets import get_preset

        return f"wanka search, preset {self.preset!r}: {get_preset(self.preset).en}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "preset": self.preset,
            "rule": self.rule(),
            "evaluated": self.evaluated,
            "feasible": self.feasible,
            "gpus_tried": list(self.gpus_tried),
            "why": self.why,
            "strategy": None if self.candidate is None else self.candidate.to_dict(),
        }


@dataclass(frozen=True)
class Assessment:
    """Every layer's result for one scenario (``None`` where a layer was not asked for or failed)."""

    scenario: Scenario  # the scenario as run (strategy set)
    strategy: StrategyChoice | None
    step: StepResult | None
    campaign: Any | None  # wanka.ops.CampaignResult
    facility: Any | None  # wanka.facility.FacilityResult
    checkpoint: Any | None  # wanka.storage.CheckpointIO
    data_read: Any | None  # wanka.storage.DataReadDemand
    network: Any | None  # wanka.network.BillOfMaterials
    assumptions: tuple[Assumption, ...]
    errors: dict[str, str] = field(default_factory=dict)
    layers: tuple[str, ...] = LAYERS
    checkpoint_modes: dict[str, Any] = field(default_factory=dict)  # CheckpointIO per checkpoint mode
    exceptions: dict[str, WankaError] = field(default_factory=dict, repr=False, compare=False)

    def check(self, *layers: str) -> None:
        """Raise the error of the first of ``layers`` (default: all) that failed on the input."""
        for k in layers or tuple(self.exceptions):
            if k in self.exceptions:
                raise self.exceptions[k]

    def to_dict(self) -> dict[str, Any]:
        import json

        from wanka.spec import dump_json

        return _finite(
            {
                "scenario": self.scenario.name,
                "layers": list(self.layers),
                "strategy": None if self.strategy is None else self.strategy.to_dict(),
                "engine": None if self.step is None else self.step.to_dict(),
                "ops": None if self.campaign is None else self.campaign.to_dict(),
                "facility": None if self.facility is None else self.facility.to_dict(),
                "storage": {
                    "checkpoint": None if self.checkpoint is None else self.checkpoint.to_dict(),
                    "data_read": None if self.data_read is None else self.data_read.to_dict(),
                    "modes": {m: io.to_dict() for m, io in self.checkpoint_modes.items()},
                },
                "network": None if self.network is None else self.network.to_dict(),
                "assumptions": [{"origin": a.origin, "text": a.text} for a in self.assumptions],
                "errors": dict(self.errors),
                "scenario_spec": json.loads(dump_json(self.scenario)),
            }
        )


def _finite(x: Any) -> Any:
    """``x`` with every non-finite float replaced by None (JSON has no NaN or infinity)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    if hasattr(x, "item") and callable(x.item):  # numpy scalars
        return _finite(x.item())
    return x


def windowless(s: Scenario) -> Scenario:
    """``s`` without a fixed ``campaign_days`` window: the campaign runs until the tokens are trained."""
    if s.campaign_days is None:
        return s
    data = s.model_dump(mode="python")
    data["campaign_days"] = None
    return parse_scenario(data, source=s.name)


def choose_strategy(scenario: Scenario, preset: str = "place", *, why: str = "") -> tuple[Scenario, StrategyChoice]:
    """``scenario`` running the fastest strategy of ``preset``'s search, and how it was chosen
    (:func:`wanka.planner.pick.pick_strategy`, the one picker)."""
    from wanka.planner.pick import pick_strategy

    picked, res = pick_strategy(scenario, preset)
    best = res.top[0]
    source = "search" if not why else "search (scenario's strategy cannot run)"
    choice = StrategyChoice(source, preset, res.evaluated, res.feasible, res.gpus, best, why)
    return picked, choice


def _check_what(what: Iterable[str]) -> tuple[str, ...]:
    w = tuple(dict.fromkeys(what))
    bad = [x for x in w if x not in LAYERS]
    if bad:
        raise SpecError(f"= {bad[0]!r}: must be among {', '.join(LAYERS)}", field="what")
    return w


def assess(
    scenario: Scenario,
    what: Iterable[str] = LAYERS,
    *,
    preset: str = "place",
    seed: int = 0,
    replicas: int = 200,
    until_trained: bool = False,
    fallback: bool = True,
    step_time_s: float | None = None,
    utilization: float | None = None,
    wall_clock_s: float | None = None,
    wall_clock_from: str = "given",
) -> Assessment:
    """Run ``what`` (a subset of :data:`LAYERS`, always in that order) on ``scenario``.

    ``preset`` names the search used when the scenario has no strategy (or one that cannot run);
    ``until_trained`` drops a fixed ``campaign_days`` window so the campaign runs until the job's
    tokens are trained. The ops layer needs the engine's step time; the facility layer takes the
    engine's MFU and the ops wall clock when they were computed.

    ``fallback=False``: a scenario whose own strategy cannot run is an engine error (no search).
    ``step_time_s``: the ops layer runs on this step time instead of the engine's (no engine run).
    ``utilization`` (MFU), ``wall_clock_s``: the facility layer's inputs, given instead of the
    engine's MFU/HFU and the campaign's wall clock. A scenario's own ``facility.gpu_utilization``
    is kept (the engine's HFU still sets the accelerators' draw).
    A failed layer's exception is kept: ``Assessment.check(layer)`` raises it.
    """
    layers = _check_what(what)
    from wanka.planner.presets import PRESETS

    if preset not in PRESETS:
        from wanka.planner.presets import get_preset

        get_preset(preset)  # the SpecError naming the known presets
    if step_time_s is not None and not (math.isfinite(step_time_s) and step_time_s > 0):
        raise SpecError(f"= {step_time_s!r}: must be a positive number of seconds", field="step_time_s")
    if not 1 <= replicas <= MAX_REPLICAS:
        raise SpecError(f"= {replicas}: must be between 1 and {MAX_REPLICAS:,}", field="replicas")
    s = windowless(scenario) if until_trained else scenario
    notes: list[Assumption] = [Assumption("preset", a) for a in s.assumptions]
    errors: dict[str, str] = {}
    excs: dict[str, WankaError] = {}
    choice: StrategyChoice | None = None
    step: StepResult | None = None
    has_job = s.model is not None and s.training is not None
    if step_time_s is None and ("engine" in layers or "ops" in layers):
        if not has_job:
            excs["engine"] = SpecError(
                "the scenario has no training job (model: and training:)", field="training", source=s.name
            )
            errors["engine"] = "the scenario has no training job (model: and training:)"
        else:
            try:
                if s.parallel is None:
                    s, choice = choose_strategy(s, preset)
                    step = estimate_step(s)
                else:
                    try:
                        step = estimate_step(s)
                        choice = StrategyChoice("scenario", None, 1, 1, (s.gpus,), None)
                    except WankaError as e:
                        if not fallback or not isinstance(e, InfeasibleError):
                            raise
                        s, choice = choose_strategy(s, preset, why=str(e))
                        step = estimate_step(s)
            except WankaError as e:
                errors["engine"], excs["engine"] = str(e), e
        if choice is not None and choice.searched:
            extra = f"; the scenario's own cannot run: {choice.why}" if choice.why else ""
            notes.append(
                Assumption(
                    "service",
                    f"strategy: the fastest of {choice.evaluated:,} candidates ({choice.feasible:,} feasible) "
                    f"by {choice.rule()}{extra}",
                )
            )
        if step is not None:
            notes += [Assumption("engine", a) for a in step.assumptions]
            # a prediction above every published run on this accelerator and precision at its scale says so
            assert s.training is not None
            above = envelope_note(s.cluster.accelerator, s.training.precision, step.mfu, step.gpus)
            if above is not None:
                notes.append(Assumption("engine", above))
    campaign = None
    dt = step_time_s if step_time_s is not None else None if step is None else step.step_time_s
    if "ops" in layers and dt is not None:
        try:
            from wanka.ops import simulate_campaign

            campaign = simulate_campaign(
                s,
                step_time_s=dt,
                tokens_per_step=None if step is None else step.tokens_per_step,
                seed=seed,
                replicas=replicas,
            )
            notes += [Assumption("ops", a) for a in campaign.assumptions]
        except WankaError as e:
            errors["ops"], excs["ops"] = str(e), e
    elif "ops" in layers and "engine" not in errors:
        errors["ops"] = "needs the engine's step time"
    fac = None
    if "facility" in layers:
        try:
            from wanka.facility import assess as facility_assess

            u: float | None
            if utilization is not None:
                u, h = utilization, None
            else:
                u = None if step is None else min(max(step.mfu, 0.0), 1.0)
                if s.facility.gpu_utilization is not None:
                    u = None  # the scenario's own utilisation wins over the engine's MFU
                h = None if step is None else min(max(step.hfu, 0.0), 1.0)  # the silicon runs hardware FLOPs
            wall, wall_from = None, "given"
            if wall_clock_s is not None:
                wall, wall_from = wall_clock_s, wall_clock_from
            elif campaign is not None and s.campaign_days is None:
                wall, wall_from = float(campaign.wall_clock_s.mean), "campaign with failures (wanka.ops)"
            elif step is not None and s.campaign_days is None:
                wall, wall_from = step.time_to_train_s, "steady-state time to train (wanka.engine)"
            fac = facility_assess(s, utilization=u, wall_clock_s=wall, wall_clock_from=wall_from, hfu=h)
            notes += [Assumption("facility", a) for a in fac.assumptions]
        except WankaError as e:
            errors["facility"], excs["facility"] = str(e), e
    ck = demand = None
    modes: dict[str, Any] = {}
    if "storage" in layers:
        try:
            from wanka.storage import checkpoint_io, data_read_demand

            ck = checkpoint_io(s)
            modes = {m: checkpoint_io(s, mode=m) for m in ("sync", "async", "in_memory")}
            notes += [Assumption("storage", a) for a in ck.assumptions]
            if step is not None:
                demand = data_read_demand(s, step.tokens_per_s)
        except WankaError as e:
            errors["storage"], excs["storage"] = str(e), e
    bom = None
    if "network" in layers:
        try:
            from wanka.network import bill_of_materials

            bom = bill_of_materials(s.cluster)
            notes += [Assumption("network", a) for a in getattr(bom, "assumptions", ())]
        except WankaError as e:
            errors["network"], excs["network"] = str(e), e
    return Assessment(
        scenario=s,
        strategy=choice,
        step=step,
        campaign=campaign,
        facility=fac,
        checkpoint=ck,
        data_read=demand,
        network=bom,
        assumptions=dedupe_assumptions(notes),
        errors=errors,
        layers=layers,
        checkpoint_modes=modes,
        exceptions=excs,
    )


def dedupe_assumptions(items: list[Assumption]) -> tuple[Assumption, ...]:
    """The assumptions in order, each text once."""
    seen: set[str] = set()
    out = []
    for a in items:
        if a.text not in seen:
            seen.add(a.text)
            out.append(a)
    return tuple(out)
