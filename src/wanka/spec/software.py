"""The software a training job runs: a framework release, whose switches come from the catalog.

A scenario's ``software:`` block names the framework and release; what that release does (TP / DP /
pipeline communication overlap, p2p style, attention kernel, MoE dispatch, CUDA graphs, pipeline
schedule) is a fact of the framework, read from ``wanka/catalog/data/software.yaml``. A switch given
here overrides the table::

    software:
      framework: Megatron-LM
      release: "2021"
      flash_attention: true      # this run patched in FlashAttention
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from wanka.catalog.software import SWITCHES, SwitchFields, release_version, software_switches
from wanka.spec.base import Spec

__all__ = ["SoftwareSpec"]


class SoftwareSpec(Spec, SwitchFields):
    """A framework release and, optionally, switches that override what the catalog says it does."""

    framework: str = Field("", max_length=200, description="e.g. 'Megatron-Core', 'NeMo', 'torchtitan'; '' = current")
    release: str | None = Field(None, max_length=50, description="'2022', '25.11', '0.8'; None = the newest")
    cudnn_frontend: str | None = Field(
        None,
        max_length=50,
        description="the nvidia-cudnn-frontend version the run used, e.g. '1.24.0' (its fused MoE kernels' "
        "published regressions apply); None = the version the framework release pins, where the catalog knows it",
    )

    @field_validator("release", mode="before")
    @classmethod
    def _quoted(cls, r: Any) -> Any:
        if isinstance(r, int | float) and not isinstance(r, bool):
            raise ValueError(
                f"got the number {r!r}: give the release as a quoted string (YAML reads 25.10 as 25.1), e.g. '25.10'"
            )
        return r

    @field_validator("release")
    @classmethod
    def _release(cls, r: str | None) -> str | None:
        if r is not None and r.strip():
            try:
                release_version(r)
            except Exception as e:  # SpecError -> a pydantic error naming the field
                raise ValueError(str(e).split(": ", 1)[-1]) from None
        return r

    @field_validator("cudnn_frontend")
    @classmethod
    def _library_version(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                scheme = release_version(v)[0]
            except Exception:
                scheme = None
            if scheme != "pep440":
                raise ValueError("not a library version; give one such as '1.24.0' (nvidia-cudnn-frontend)")
        return v

    def overrides(self) -> dict[str, Any]:
        """The switches given explicitly here."""
        return {k: getattr(self, k) for k in SWITCHES if getattr(self, k) is not None}

    def switches(self) -> dict[str, Any]:
        """Every switch: the catalog's for this framework release, then the explicit overrides."""
        return {**software_switches(self.framework, self.release).switches, **self.overrides()}

    @property
    def source(self) -> str:
        """Where the catalog's switches for this release come from."""
        return software_switches(self.framework, self.release).source
