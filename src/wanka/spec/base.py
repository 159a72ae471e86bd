"""Shared base for every spec model: frozen, unknown keys rejected, no silent type coercion."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["FieldError", "Spec"]


class FieldError(ValueError):
    """A cross-field check failed; ``field`` is the key to change, relative to the model that checks.

    Raised from a model validator, pydantic keeps the exception in the error's context and
    :mod:`wanka.spec.io` appends ``field`` to the error's location, so the message names the field
    (``parallel — tp·pp·dp·cp = 512 exceeds …``) and its YAML line.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class Spec(BaseModel):
    """Base class of the scenario tree: immutable, strict about names and types."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, validate_default=True, allow_inf_nan=False)
