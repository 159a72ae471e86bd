"""The step model's calibration: every tuned or measured constant, as data.

The constants live in ``wanka/data/calibration.yaml``, one entry each with its value, its
provenance (``datasheet``, ``benchmark`` or ``fit``), its source in words and, for fitted ones, the
fit's bounds. :func:`load_calibration` reads such a file into a frozen :class:`Calibration`; the
engine receives one in its :class:`~wanka.engine.Context` (``ctx.cal``) and never reads module
state, so two calibrations can run side by side::

    from dataclasses import replace
    alt = replace(default_calibration(), attn_efficiency=0.4)
    ctx2 = make_context(scenario, cal=alt)

Every constant is global: none keys on a case, a model name or a GPU count. The fitted ones are set by
``python -m benchmarks.fit_calibration`` on ``validation/public_runs.yaml`` (steady-state cases only).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from wanka.errors import SpecError

__all__ = ["Calibration", "ConstantInfo", "calibration_info", "default_calibration", "load_calibration"]

Provenance = Literal["datasheet", "benchmark", "fit"]


@dataclass(frozen=True)
class Calibration:
    """Global constants of the step model (SI units). See ``data/calibration.yaml`` for sources."""

    # network (nccl-tests)
    scale_up_efficiency: float
    scale_out_efficiency: float
    a2a_efficiency: float
    hybridep_rdma_share_pair: float
    hybridep_rdma_share: float
    nvls_efficiency: float
    scale_up_latency_s: float
    scale_out_latency_s: float
    collective_launch_s: float
    # compute
    gemm_eff_max: float
    gemm_half_dim: float
    attn_efficiency: float
    attn_half_len_tokens: float
    elementwise_efficiency: float
    fp8_gemm_ratio: float
    fp8_cast_bytes_per_element: float
    grouped_gemm_penalty: float
    moe_routing_imbalance: float
    # overlap
    tp_overlap_efficiency: float
    dp_exposed_floor: float
    pp_p2p_exposed: float
    comm_sm_share: float
    # memory
    framework_overhead_bytes: float
    optimizer_bytes_per_param: float
    ep_overlap_floor: float
    ep_overlap_hidden: float
    allocator_fragmentation: float
    allocator_fragmentation_expandable: float
    nccl_bytes_per_communicator: float
    usable_hbm_fraction: float
    # fixed costs
    layer_overhead_s: float
    cuda_graph_overhead_factor: float
    moe_layer_overhead_s: float
    dp_bucket_params: float
    dp_bucket_params_per_rank: float
    zero3_bucket_params: float
    rank_jitter_cv: float
    moe_expert_load_cv: float
    grouped_gemm_tile_rows: float
    moe_host_sync_s: float
    attn_softmax_ratio: float
    attn_ref_flop_per_exp: float
    attn_ref_flop_per_fp32: float

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


class ConstantInfo(BaseModel):
    """One entry of a calibration file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float = Field(allow_inf_nan=False)
    provenance: Provenance
    source: str = Field(min_length=1)
    bounds: tuple[float, float] | None = None

    @field_validator("bounds")
    @classmethod
    def _ordered(cls, b: tuple[float, float] | None) -> tuple[float, float] | None:
        if b is not None and not b[0] <= b[1]:
            raise ValueError(f"bounds must be [low, high] with low <= high, got {list(b)}")
        return b


class _CalibrationFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["wanka-calibration/1"]
    constants: dict[str, ConstantInfo]


def _parse(data: Any, where: str) -> tuple[Calibration, dict[str, ConstantInfo]]:
    try:
        doc = _CalibrationFile.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise SpecError(f"{where}: {loc}: {first['msg']}") from None
    names = set(Calibration.names())
    missing = sorted(names - doc.constants.keys())
    unknown = sorted(doc.constants.keys() - names)
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"missing constants {missing}")
        if unknown:
            parts.append(f"unknown constants {unknown} (allowed: {sorted(names)})")
        raise SpecError(f"{where}: " + "; ".join(parts))
    for name, info in doc.constants.items():
        if info.bounds is not None and not info.bounds[0] <= info.value <= info.bounds[1]:
            raise SpecError(
                f"{where}: constants.{name}.value {info.value:g} lies outside its bounds {list(info.bounds)}"
            )
    cal = Calibration(**{n: float(doc.constants[n].value) for n in Calibration.names()})
    return cal, dict(doc.constants)


def load_calibration(path: str | Path) -> Calibration:
    """Read a ``wanka-calibration/1`` YAML file into a :class:`Calibration`."""
    from wanka import yamlio

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError(f"{p}: cannot read calibration file ({e})") from None
    return _parse(yamlio.load(text), str(p))[0]


@functools.cache
def _default() -> tuple[Calibration, dict[str, ConstantInfo]]:
    from wanka import yamlio

    data = yamlio.load_data(resources.files("wanka").joinpath("data/calibration.yaml"))  # parsed-data cache
    return _parse(data, "wanka/data/calibration.yaml")


def default_calibration() -> Calibration:
    """The shipped calibration (``wanka/data/calibration.yaml``)."""
    return _default()[0]


def calibration_info() -> dict[str, ConstantInfo]:
    """Provenance, source and bounds of every shipped constant."""
    return dict(_default()[1])
