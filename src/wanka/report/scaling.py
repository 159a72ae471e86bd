"""Scaling efficiency (线性加速比) of a job against a small reference slice of the same cluster.

Definition (weak scaling, the way 万卡 cluster vendors quote 线性加速比): keep the job's model,
sequence length, micro-batch, micro-batches per pipeline (so the same per-replica work and the same
pipeline bubble), tensor/pipeline/context/expert parallelism, and shrink data parallelism to
``dp_ref`` — the smallest multiple of ep whose slice ``tp·pp·cp·dp_ref`` covers at least one
scale-up domain (8 GPUs on an HGX board). The global batch shrinks with it,
``B_ref = B / dp · dp_ref``. Then

    线性加速比 = (tokens/s/GPU of the full job) / (tokens/s/GPU of the reference slice)

i.e. the full job's throughput over ``N / N_ref`` times the slice's. 1.0 is linear; what it loses is
what grows with scale: data-parallel (and cross-domain expert) communication crossing more fabric
tiers. The reference is evaluated without the HBM check (fewer data-parallel ranks shard ZeRO state
less, so it can exceed HBM; only its throughput is used).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from wanka.engine import StepResult, estimate_step
from wanka.spec import Scenario

__all__ = ["DEFINITION", "ScalingResult", "scaling_efficiency"]

DEFINITION = (
    "线性加速比 (scaling efficiency) = tokens/s/GPU of the full job / tokens/s/GPU of a reference slice "
    "of the same cluster: same model, strategy (tp, pp, cp, ep) and per-replica batch, data parallelism "
    "shrunk to the smallest slice covering one scale-up domain (weak scaling)"
)


@dataclass(frozen=True)
class ScalingResult:
    """The reference slice and the efficiency of the full job against it."""

    gpus: int
    reference_gpus: int
    reference_dp: int
    tokens_per_s_per_gpu: float
    reference_tokens_per_s_per_gpu: float
    efficiency: float
    reference_fits: bool
    definition: str = DEFINITION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def scaling_efficiency(scenario: Scenario, step: StepResult) -> ScalingResult:
    """线性加速比 of ``scenario``'s job (``step`` is its engine result) per the module docstring."""
    assert scenario.parallel is not None and scenario.training is not None
    par = scenario.parallel
    mp = par.tp * par.pp * par.cp
    domain = scenario.cluster.scale_up.domain_size
    dp_ref = par.dp
    for d in range(par.ep, par.dp + 1, par.ep):
        if par.dp % d == 0 and (d * par.cp) % par.ep == 0 and mp * d >= min(domain, mp * par.dp):
            dp_ref = d
            break
    per_replica = scenario.training.global_batch_seqs // par.dp
    training = scenario.training.model_copy(update={"global_batch_seqs": per_replica * dp_ref})
    ref = scenario.model_copy(
        update={"parallel": par.model_copy(update={"dp": dp_ref}), "training": training, "job_gpus": None}
    )
    r = estimate_step(ref, require_fit=False)
    eff = step.tokens_per_s_per_gpu / r.tokens_per_s_per_gpu if r.tokens_per_s_per_gpu > 0 else float("nan")
    return ScalingResult(
        gpus=step.gpus,
        reference_gpus=mp * dp_ref,
        reference_dp=dp_ref,
        tokens_per_s_per_gpu=step.tokens_per_s_per_gpu,
        reference_tokens_per_s_per_gpu=r.tokens_per_s_per_gpu,
        efficiency=eff,
        reference_fits=r.memory.fits,
    )
