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
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from wanka import yamlio
from wanka.errors import CatalogError, SpecError

__all__ = ["DEFAULTS", "SWITCHES", "Resolved", "SoftwareRule", "release_version", "software_rules", "software_switches"]

# every switch a release sets, with the value of a current, well-tuned stack (ParallelSpec's defaults)
DEFAULTS: dict[str, Any] = {
    "tp_comm_overlap": True,
    "dp_comm_overlap": True,
    "pp_comm_overlap": True,
    "pp_scatter_gather": True,
    "flash_attention": True,
    "attention_kernel": "native",
    "ep_comm_overlap": False,
    "cuda_graphs": False,
    "ep_dispatch": "alltoall",
    "pp_schedule": "1f1b",
    "grad_reduce_fp32": True,
    "mlp_op_fuser": False,
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


class SoftwareRule(BaseModel):
    """One row of ``data/software.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    framework: str
    min_release: str | None = None
    max_release: str | None = None
    tp_comm_overlap: bool | None = None
    dp_comm_overlap: bool | None = None
    pp_comm_overlap: bool | None = None
    pp_scatter_gather: bool | None = None
    flash_attention: bool | None = None
    attention_kernel: Literal["native", "fa2"] | None = None
    ep_comm_overlap: bool | None = None
    cuda_graphs: bool | None = None
    ep_dispatch: Literal["alltoall", "deepep"] | None = None
    pp_schedule: Literal["1f1b", "dualpipe"] | None = None
    grad_reduce_fp32: bool | None = None
    mlp_op_fuser: bool | None = None
    source: str = Field(min_length=1)

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

    def switches(self) -> dict[str, Any]:
        return {k: DEFAULTS[k] if getattr(self, k) is None else getattr(self, k) for k in SWITCHES}


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_: Literal["wanka-software/2"] = Field(alias="schema")
    rules: list[SoftwareRule]


@lru_cache(maxsize=1)
def software_rules() -> tuple[SoftwareRule, ...]:
    """The rules of ``data/software.yaml``, in order (loaded once)."""
    try:
        doc = _File.model_validate(yamlio.load_data(resources.files("wanka.catalog") / "data" / "software.yaml"))
    except ValidationError as e:
        err = e.errors()[0]
        raise CatalogError(f"catalog file software.yaml: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    if not doc.rules or doc.rules[-1].framework or doc.rules[-1].max_release or doc.rules[-1].min_release:
        raise CatalogError("catalog file software.yaml: the last rule must be the catch-all (framework '')")
    for r in doc.rules:
        for b in (r.min_release, r.max_release):
            if b is not None:
                release_version(b)
    return tuple(doc.rules)


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
