"""Shared base for every spec model: frozen, unknown keys rejected, no silent type coercion."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Spec"]


class Spec(BaseModel):
    """Base class of the scenario tree: immutable, strict about names and types."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, validate_default=True, allow_inf_nan=False)
