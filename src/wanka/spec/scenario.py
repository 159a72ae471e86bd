"""The whole scenario tree: a cluster and, optionally, a training job on it."""

from __future__ import annotations

from typing import Any

from pydantic import Field, PositiveInt, ValidationError, model_validator

from wanka.spec.base import FieldError, Spec
from wanka.spec.cluster import ClusterSpec
from wanka.spec.model import ModelSpec
from wanka.spec.ops import CheckpointSpec, FacilitySpec, FailureSpec
from wanka.spec.software import SoftwareSpec
from wanka.spec.text import BilingualText
from wanka.spec.training import ParallelSpec, TrainingSpec

__all__ = ["Scenario"]


class Scenario(Spec):
    """A cluster, a model, a training job and a parallel strategy, plus ops and facility inputs.

    ``sources`` lists where the inputs come from; ``assumptions`` lists what is not public and the
    typical value chosen instead (each a string, or ``{en: ..., zh: ...}``). Every consumer reads this one tree.
    """

    name: str = "custom"
    description: str = ""
    cluster: ClusterSpec
    model: ModelSpec | None = None
    training: TrainingSpec | None = None
    parallel: ParallelSpec | None = None
    software: SoftwareSpec | None = Field(
        None,
        description="framework and release; its switches (from the catalog, explicit ones overriding) "
        "replace the parallel strategy's defaults",
    )
    job_gpus: PositiveInt | None = Field(None, description="GPUs the job uses; None = tp·pp·dp·cp or all")
    failures: FailureSpec = FailureSpec()
    checkpoint: CheckpointSpec = CheckpointSpec()
    facility: FacilitySpec = FacilitySpec()
    campaign_days: float | None = Field(None, gt=0, le=3650, description="fixed wall-clock window to simulate")
    sources: list[str] = Field(default_factory=list)
    assumptions: list[BilingualText] = Field(
        default_factory=list,
        description="what is not public and the value chosen: each a string (English) or {en: ..., zh: ...}",
    )

    @model_validator(mode="before")
    @classmethod
    def _apply_software(cls, data: Any) -> Any:
        """Switches of ``software:`` go into ``parallel:``; one set in both must agree."""
        if not isinstance(data, dict) or data.get("software") is None or data.get("parallel") is None:
            return data
        sw = data["software"]
        if not isinstance(sw, SoftwareSpec):
            try:
                sw = SoftwareSpec.model_validate(sw)
            except ValidationError:
                return data  # the field's own validation reports it, at software.<field> with its line
        par = data["parallel"]
        given = (
            set(par.model_fields_set) if isinstance(par, ParallelSpec) else set(par) if isinstance(par, dict) else None
        )
        if given is None:
            return data  # not a mapping: the field's own validation reports it
        explicit = sw.overrides()

        def value(k: str) -> Any:
            return getattr(par, k) if isinstance(par, ParallelSpec) else par[k]

        for k in sorted(given & set(explicit)):
            if value(k) != explicit[k]:
                raise ValueError(
                    f"parallel.{k} = {value(k)!r} and software.{k} = {explicit[k]!r} disagree; give it in one place"
                )
        update = {k: v for k, v in sw.switches().items() if k not in given}
        if isinstance(par, ParallelSpec):
            par = ParallelSpec.model_validate({**par.model_dump(exclude_unset=True), **update})
        else:
            par = {**par, **update}
        return {**data, "software": sw, "parallel": par}

    @model_validator(mode="after")
    def _check(self) -> Scenario:
        n = self.cluster.accelerators
        if self.parallel is not None:
            w = self.parallel.world_size
            if self.job_gpus is not None and self.job_gpus != w:
                raise FieldError(
                    "job_gpus",
                    f"tp·pp·dp·cp = {self.parallel.tp}·{self.parallel.pp}·{self.parallel.dp}·"
                    f"{self.parallel.cp} = {w} must equal job_gpus = {self.job_gpus}",
                )
            if w > n:
                raise FieldError(
                    "parallel",
                    f"tp·pp·dp·cp = {w} exceeds the cluster's {n} accelerators "
                    f"({self.cluster.nodes} nodes × {self.cluster.gpus_per_node})",
                )
        if self.job_gpus is not None and self.job_gpus > n:
            raise FieldError("job_gpus", f"= {self.job_gpus} exceeds the cluster's {n} accelerators")
        if (self.parallel is not None or self.training is not None) and self.model is None:
            raise FieldError("model", "a training job (training/parallel) needs a model")
        return self

    @property
    def gpus(self) -> int:
        """GPUs the job runs on."""
        if self.parallel is not None:
            return self.parallel.world_size
        return self.job_gpus if self.job_gpus is not None else self.cluster.accelerators

    @property
    def seq_len(self) -> int:
        assert self.model is not None
        if self.training is not None and self.training.seq_len is not None:
            return self.training.seq_len
        return self.model.seq_len
