"""Facility facts (``catalog/data/facility.yaml``): cooling types, power curves, fallback figures."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from wanka import yamlio
from wanka.errors import CatalogError

__all__ = ["CoolingFacts", "FacilityFacts", "Tariff", "facts"]


class _Fact(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    source: str = Field(min_length=5)
    assumptions: list[str] = []


class CoolingFacts(_Fact):
    name: str
    pue: float = Field(ge=1.0, le=3.0)
    rack_power_kw: float = Field(gt=0)


class PowerCurve(_Fact):
    accelerator_knee: float = Field(gt=0, le=1)
    accelerator_exponent: float = Field(gt=0, le=4)
    host_knee: float = Field(gt=0, le=1)
    typical_utilization: float = Field(gt=0, le=1)


class Tariff(_Fact):
    currency: str
    price_per_kwh: float = Field(ge=0)
    grid_kgco2_per_kwh: float = Field(ge=0, le=2)


class HostFacts(_Fact):
    cpu_idle_fraction: float = Field(ge=0, le=1)


class NetworkFallback(_Fact):
    switch_w_per_400g_port: float = Field(gt=0)
    optic_w_per_400g: float = Field(gt=0)
    optics_per_link: int = Field(ge=0)


class FacilityFacts(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    schema_: str = Field(alias="schema")
    cooling: list[CoolingFacts]
    power_curve: PowerCurve
    tariffs: list[Tariff]
    host: HostFacts
    network_fallback: NetworkFallback

    def tariff(self, currency: str) -> Tariff:
        for t in self.tariffs:
            if t.currency == currency:
                return t
        known = ", ".join(t.currency for t in self.tariffs)
        raise CatalogError(f"facility.currency = {currency!r}: no tariff in facility.yaml; known: {known}")

    def cooling_type(self, name: str) -> CoolingFacts:
        for c in self.cooling:
            if c.name == name:
                return c
        known = ", ".join(c.name for c in self.cooling)
        raise CatalogError(f"facility.cooling = {name!r}: no facts for it in facility.yaml; known: {known}")


@lru_cache(maxsize=1)
def facts() -> FacilityFacts:
    """The facility facts, loaded once."""
    path = resources.files("wanka.catalog") / "data" / "facility.yaml"
    try:  # yaml.safe_load's result, through libyaml and the parsed-data cache
        return FacilityFacts.model_validate(yamlio.load_data(path, yaml11=True))
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise CatalogError(f"catalog file facility.yaml: {loc}: {err['msg']}") from None
