"""What each training framework release does (``data/software.yaml``): a fact of frameworks.

A rule names a framework (matched as a case-insensitive substring of the name given), optionally a
release range, the execution switches that release had and a source. :func:`software_switches`
returns the first matching rule's switches; the table ends with a catch-all (a current, well-tuned
stack).

Releases are compared with :mod:`packaging.version`, after one explicit normalisation so that the
schemes frameworks use compare correctly:

- a year (``"2022"``) or a date (``"2024-06"``, ``"2024.06.30"``) is a calendar version (2022, 2024.6);
- a YY.MM container tag (``"25.11"``, ``"26.04.01"``: NGC / NeMo) is the calendar version 2025.11,
  2026.4.1, so ``"2024" < "25.11"``;
- anything else is a PEP 440 version (``"0.8"``, ``"1.2.0rc1"``: Megatron-Core, DeepSpeed, PyTorch).

A calendar release and a PEP 440 bound (or the reverse) cannot be ordered: such a rule is skipped. A
missing release means the newest: rules with an upper bound are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from wanka import yamlio
from wanka.errors import CatalogError, SpecError

__all__ = [
    "DEFAULTS",
    "SWITCHES",
    "CoreRule",
    "PipelineSplits",
    "Resolved",
    "SoftwareRule",
    "SwitchFields",
    "cudnn_frontend_version",
    "kernel_time_factor",
    "megatron_core_rules",
    "pipeline_splits",
    "release_version",
    "software_rules",
    "software_switches",
]

# every switch a release sets, with the value of a current, well-tuned stack (ParallelSpec's defaults)
DEFAULTS: dict[str, Any] = {
    "tp_comm_overlap": True,
    "dp_comm_overlap": True,
    "pp_comm_overlap": True,
    "pp_scatter_gather": True,
    "flash_attention": True,
    "attention_kernel": "native",
    "ep_comm_overlap": False,
    # Megatron-Core --moe-shared-expert-overlap (TransformerConfig.moe_shared_expert_overlap = False)
    "ep_shared_overlap": False,
    "cuda_graphs": False,
    "cuda_graphs_moe": True,
    "ep_dispatch": "alltoall",
    "pp_schedule": "1f1b",
    "grad_reduce_fp32": True,
    "mlp_op_fuser": False,
    "sp_gather_fp8": True,
    "ep_dispatch_fp8": False,
    "expandable_segments": False,
    "sp_regather": True,
    "fp8_attention": False,
    "fp8_output_proj": False,
    # FP8 weights: BF16 parameters with Transformer Engine's FP8 weight caches (Megatron-LM's --fp8-param-gather
    # is off by default: megatron/core/distributed/distributed_data_parallel_config.py fp8_param_gather = False)
    "fp8_param_gather": False,
    "fp8_weight_cache": True,
    # Megatron-Core's activation offload (cpu_offloading_num_layers, from core 0.5 through Transformer Engine)
    "activation_offload": True,
}
SWITCHES = tuple(DEFAULTS)

Scheme = Literal["calendar", "pep440"]

_YEAR = re.compile(r"^(19|20)\d\d$")
_DATE = re.compile(r"^((?:19|20)\d\d)[-./](\d{1,2})(?:[-./](\d{1,2}))?$")
_YYMM = re.compile(r"^(\d\d)\.(\d\d)(?:\.(\d+))?$")


def release_version(release: str) -> tuple[Scheme, Version]:
    """A release string as (scheme, version); raises :class:`SpecError` for one that is neither.

    >>> release_version("2024") < release_version("25.11")
    True
    >>> release_version("26.04.01")[1] > release_version("26.04")[1]
    True
    """
    r = str(release).strip()
    if _YEAR.match(r):
        return "calendar", Version(r)
    m = _DATE.match(r)
    if m and 1 <= int(m.group(2)) <= 12:
        return "calendar", Version(".".join(str(int(g)) for g in m.groups() if g is not None))
    m = _YYMM.match(r)
    if m and 1 <= int(m.group(2)) <= 12:
        parts = [2000 + int(m.group(1)), int(m.group(2))] + ([int(m.group(3))] if m.group(3) else [])
        return "calendar", Version(".".join(map(str, parts)))
    try:
        return "pep440", Version(r)
    except InvalidVersion:
        raise SpecError(
            f"= {release!r}: not a release; give a year ('2022'), a date ('2024-06'), a YY.MM container tag "
            "('25.11', '26.04.01') or a version ('0.8', '1.2.0')",
            field="software.release",
        ) from None


class _Ranged(BaseModel):
    """A framework name (case-insensitive substring) and an optional inclusive release range."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    framework: str
    min_release: str | None = None
    max_release: str | None = None

    def matches(self, framework: str, release: str | None) -> bool:
        if self.framework.lower() not in framework.lower():
            return False
        if self.min_release is None and self.max_release is None:
            return True
        if release is None or not str(release).strip():
            return self.max_release is None  # no release given: the newest
        scheme, v = release_version(release)
        for bound, ok in ((self.min_release, lambda b: v >= b), (self.max_release, lambda b: v <= b)):
            if bound is None:
                continue
            b_scheme, b = release_version(bound)
            if b_scheme != scheme or not ok(b):
                return False
        return True


class SwitchFields(BaseModel):
    """Every switch a release sets (``DEFAULTS``), each optional: None = not set here. One list for the
    software table's rules, a scenario's ``software:`` overrides and a validation case's."""

    tp_comm_overlap: bool | None = None
    dp_comm_overlap: bool | None = None
    pp_comm_overlap: bool | None = None
    pp_scatter_gather: bool | None = None
    flash_attention: bool | None = None
    attention_kernel: Literal["native", "fa2"] | None = None
    ep_comm_overlap: bool | None = None
    ep_shared_overlap: bool | None = None
    cuda_graphs: bool | None = None
    cuda_graphs_moe: bool | None = None
    ep_dispatch: Literal["alltoall", "deepep", "hybridep", "einsum"] | None = None
    pp_schedule: Literal["1f1b", "dualpipe", "zero_bubble"] | None = None
    grad_reduce_fp32: bool | None = None
    mlp_op_fuser: bool | None = None
    sp_gather_fp8: bool | None = None
    ep_dispatch_fp8: bool | None = None
    expandable_segments: bool | None = None
    sp_regather: bool | None = None
    fp8_attention: bool | None = None
    fp8_output_proj: bool | None = None
    fp8_param_gather: bool | None = None
    fp8_weight_cache: bool | None = None
    activation_offload: bool | None = None


class SoftwareRule(_Ranged, SwitchFields):
    """One row of ``data/software.yaml``'s ``rules``."""

    source: str = Field(min_length=1)

    def switches(self) -> dict[str, Any]:
        return {k: DEFAULTS[k] if getattr(self, k) is None else getattr(self, k) for k in SWITCHES}


class CoreRule(_Ranged):
    """One row of ``data/software.yaml``'s ``megatron_core`` table: the Megatron-Core release a framework
    release builds its pipeline on (``version``), or ``None`` for a framework that does not use
    Megatron-Core's pipeline code (DeepSpeed, torchtitan, ...: no Megatron layout rule applies)."""

    version: str | None
    source: str = Field(min_length=1)


class LibraryRule(_Ranged):
    """One row of ``data/software.yaml``'s ``cudnn_frontend`` table: the library version a framework release
    pins, or ``None`` where no source read here states it."""

    version: str | None
    source: str = Field(min_length=1)


class KernelRegression(BaseModel):
    """One row of ``data/software.yaml``'s ``kernel_regressions``: a library kernel that runs ``time_factor``
    times its normal time in library versions ``[min_version, fixed_in)``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    library: Literal["cudnn_frontend"]
    kernel: str = Field(min_length=1)
    min_version: str
    fixed_in: str | None = None
    time_factor: float = Field(gt=1.0, le=100.0)
    source: str = Field(min_length=1)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_: Literal["wanka-software/2"] = Field(alias="schema")
    rules: list[SoftwareRule]
    megatron_core: list[CoreRule] = Field(default_factory=list)
    cudnn_frontend: list[LibraryRule] = Field(default_factory=list)
    kernel_regressions: list[KernelRegression] = Field(default_factory=list)


@lru_cache(maxsize=1)
def _file() -> _File:
    try:
        doc = _File.model_validate(yamlio.load_data(resources.files("wanka.catalog") / "data" / "software.yaml"))
    except ValidationError as e:
        err = e.errors()[0]
        raise CatalogError(f"catalog file software.yaml: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    tables: tuple[tuple[str, list[Any]], ...] = (
        ("rules", doc.rules),
        ("megatron_core", doc.megatron_core),
        ("cudnn_frontend", doc.cudnn_frontend),
    )
    for name, rows in tables:
        if not rows or rows[-1].framework or rows[-1].max_release or rows[-1].min_release:
            raise CatalogError(
                f"catalog file software.yaml: the last row of {name} must be the catch-all (framework '')"
            )
        for r in rows:
            for b in (r.min_release, r.max_release):
                if b is not None:
                    release_version(b)
    versions = [("megatron_core", c.version) for c in doc.megatron_core]
    versions += [("cudnn_frontend", c.version) for c in doc.cudnn_frontend]
    versions += [("kernel_regressions", v) for k in doc.kernel_regressions for v in (k.min_version, k.fixed_in)]
    for name, ver in versions:
        if ver is not None and release_version(ver)[0] != "pep440":
            raise CatalogError(f"catalog file software.yaml: {name} version {ver!r} is not a version")
    return doc


def software_rules() -> tuple[SoftwareRule, ...]:
    """The rules of ``data/software.yaml``, in order (loaded once)."""
    return tuple(_file().rules)


def megatron_core_rules() -> tuple[CoreRule, ...]:
    """The ``megatron_core`` table of ``data/software.yaml``, in order (loaded once)."""
    return tuple(_file().megatron_core)


@lru_cache(maxsize=256)
def cudnn_frontend_version(framework: str = "", release: str | None = None) -> tuple[str | None, str]:
    """The cuDNN frontend ``framework`` at ``release`` pins (first matching row of the ``cudnn_frontend``
    table; ``None`` where no source read here states it), with the row's source."""
    for row in _file().cudnn_frontend:
        if row.matches(framework, release):
            return row.version, row.source
    raise AssertionError("software.yaml's cudnn_frontend table ends with a catch-all row")  # pragma: no cover


def kernel_time_factor(kernel: str, cudnn_frontend: str | None) -> tuple[float, str | None]:
    """How many times its normal time ``kernel`` takes under cuDNN frontend ``cudnn_frontend`` (1.0 and no
    source where no published regression covers that version, or the version is not known)."""
    if cudnn_frontend is None:
        return 1.0, None
    v = release_version(cudnn_frontend)[1]
    for k in _file().kernel_regressions:
        if k.kernel != kernel or v < Version(k.min_version):
            continue
        if k.fixed_in is None or v < Version(k.fixed_in):
            return k.time_factor, k.source
    return 1.0, None


@dataclass(frozen=True)
class Resolved:
    switches: dict[str, Any]
    source: str


def software_switches(framework: str, release: str | None = None) -> Resolved:
    """The switches ``framework`` at ``release`` had (first matching rule), with the rule's source."""
    for rule in software_rules():
        if rule.matches(framework, release):
            return Resolved(rule.switches(), rule.source)
    raise AssertionError("software.yaml ends with a catch-all rule")  # pragma: no cover


# Megatron-Core releases that added a way to split the layers unevenly over the pipeline stages
# (NVIDIA/Megatron-LM at the tags; each read from megatron/training/arguments.py and
# megatron/core/transformer/transformer_config.py __post_init__)
_FIRST_LAST = Version("0.9")  # --decoder-first/last-pipeline-num-layers (no interleaving until 0.11)
_ACCOUNT = Version("0.11")  # --account-for-embedding/loss-in-pipeline-split; uneven first/last with vpp
_LAYOUT = Version("0.13")  # --pipeline-model-parallel-layout (any split; MTP layers in it from 0.14)
_LAYOUT_MTP = Version("0.14")
_PP2_INTERLEAVED = Version("0.8")  # vpp with pp = 2 when p2p communication overlaps (overlap_p2p_comm)
# TransformerConfig.cpu_offloading_num_layers (activation offload through Transformer Engine): first in
# Megatron-Core 0.5 (core_v0.5.0 transformer_block.py; not in core_v0.4.0)
_CPU_OFFLOADING = Version("0.5")


@dataclass(frozen=True)
class PipelineSplits:
    """How a release may place a model's layers on pp x vpp pipeline stages.

    ``megatron_core`` is the Megatron-Core release (``None``: not Megatron-Core's pipeline code, where no
    Megatron layout rule applies). Megatron-Core and Megatron-LM before it split the layers evenly
    (``n_layers % (pp·vpp) == 0``); later releases add uneven splits:

    - 0.9: ``--decoder-first/last-pipeline-num-layers`` (without interleaving: any split with a layer per stage);
    - 0.11: ``--account-for-embedding/loss-in-pipeline-split`` (n_layers + 1 or + 2 divisible by
      pp·vpp) and uneven first/last stages with ``--num-virtual-stages-per-pipeline-rank`` (vpp divides
      the first, the last and each middle stage's layers: vpp divides n_layers);
    - 0.13: ``--pipeline-model-parallel-layout`` (any split; with MTP layers from 0.14).

    Interleaving (vpp > 1) needs pp > 2, or pp = 2 with overlapped p2p communication from 0.8.
    """

    megatron_core: str | None
    source: str
    # what the release builds (set from megatron_core; None: a framework with its own pipeline split)
    first_last: bool = field(init=False)
    accounted: bool = field(init=False)
    layout_any: bool = field(init=False)
    layout_mtp: bool = field(init=False)
    pp2_interleaved: bool = field(init=False)
    cpu_offloading: bool = field(init=False)  # activation offload (a framework's own pipeline: its switch says)

    def __post_init__(self) -> None:
        v = None if self.megatron_core is None else Version(self.megatron_core)
        for name, since in (
            ("first_last", _FIRST_LAST),
            ("accounted", _ACCOUNT),
            ("layout_any", _LAYOUT),
            ("layout_mtp", _LAYOUT_MTP),
            ("pp2_interleaved", _PP2_INTERLEAVED),
            ("cpu_offloading", _CPU_OFFLOADING),
        ):
            object.__setattr__(self, name, v is None or v >= since)

    @property
    def megatron(self) -> bool:
        return self.megatron_core is not None

    def layout(self, mtp: bool) -> bool:
        """Any split (--pipeline-model-parallel-layout), for a model with or without MTP layers."""
        return self.layout_mtp if mtp else self.layout_any

    @property
    def label(self) -> str:
        if self.megatron_core is None:
            return "a framework without Megatron-Core's pipeline split"
        if Version(self.megatron_core) == Version("0"):
            return "Megatron-LM before Megatron-Core"
        return f"Megatron-Core {self.megatron_core}"


@lru_cache(maxsize=256)
def pipeline_splits(framework: str = "", release: str | None = None) -> PipelineSplits:
    """The pipeline splits ``framework`` at ``release`` allows: its Megatron-Core release from the
    ``megatron_core`` table (first matching row; for the framework Megatron-Core itself, a version
    release is the Megatron-Core version), ``''`` / no release the current one."""
    name = framework.lower()
    own = any(k in name for k in ("megatron-core", "megatron core", "megatron-lm"))
    if own and release is not None and str(release).strip():
        scheme, v = release_version(release)
        if scheme == "pep440":
            return PipelineSplits(str(v), "the release of Megatron-Core itself")
    for row in megatron_core_rules():
        if row.matches(framework, release):
            return PipelineSplits(row.version, row.source)
    raise AssertionError("software.yaml's megatron_core table ends with a catch-all row")  # pragma: no cover
