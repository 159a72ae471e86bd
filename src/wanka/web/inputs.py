"""What a client may send: scenarios by preset name or inline, dotted overrides, and the bounds.

No input names a path on the server: a scenario string must be a preset name; an inline scenario's
``base`` must be a preset name and its ``model`` a model preset name or an inline model. Everything
else is validated by the same spec code as the CLI (:func:`wanka.spec.parse_scenario`), so a bad
field is the same message, naming the field, that ``wanka plan`` prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from wanka.errors import SpecError
from wanka.spec import (
    Scenario,
    deep_merge,
    list_model_presets,
    list_presets,
    load_scenario,
    nest_dotted,
    parse_scenario,
)

__all__ = [
    "KNOBS",
    "MAX_BODY_BYTES",
    "MAX_DEPTH",
    "MAX_OVERRIDES",
    "check_depth",
    "resolve_scenario",
]

MAX_BODY_BYTES = 1 << 20  # 1 MiB: a scenario is a few kB
MAX_DEPTH = 16  # a scenario nests 4 deep
MAX_OVERRIDES = 32

# the planner page's knobs: dotted field -> (kind, choices or bounds)
KNOBS: dict[str, tuple[str, Any]] = {
    "model": ("model", None),
    "cluster.nodes": ("int", (1, 131_072)),
    "cluster.fabric.nic_gbps_per_gpu": ("float", (25.0, 3200.0)),
    "cluster.scale_up.domain_size": ("int", (1, 1024)),
    "training.precision": ("choice", ("bf16", "fp8")),
    "checkpoint.mode": ("choice", ("sync", "async", "in_memory")),
}


def check_depth(x: Any, field: str = "body", depth: int = 0) -> None:
    """A SpecError when ``x`` nests deeper than :data:`MAX_DEPTH` (mappings and lists)."""
    if depth > MAX_DEPTH:
        raise SpecError(f"nests deeper than {MAX_DEPTH} levels", field=field)
    if isinstance(x, Mapping):
        for k, v in x.items():
            check_depth(v, f"{field}.{k}", depth + 1)
    elif isinstance(x, list | tuple):
        for i, v in enumerate(x):
            check_depth(v, f"{field}[{i}]", depth + 1)


def _preset_name(v: Any, field: str, known: list[str], what: str) -> str:
    if not isinstance(v, str) or v not in known:
        shown = repr(v)[:80]
        raise SpecError(f"= {shown}: must be a {what} name ({', '.join(known)}); paths are not read", field=field)
    return v


@lru_cache(maxsize=64)
def _preset(name: str) -> Scenario:
    """A preset, parsed once (scenarios are frozen)."""
    return load_scenario(name)


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    for path in flat:
        if not isinstance(path, str) or not path or len(path) > 120:
            raise SpecError(f"= {str(path)[:80]!r}: must be a dotted field name", field="set")
    return nest_dotted(flat)


def resolve_scenario(ref: Any, overrides: Mapping[str, Any] | None = None, field: str = "scenario") -> Scenario:
    """A validated Scenario from a preset name or an inline mapping, with dotted ``overrides`` applied."""
    overrides = dict(overrides or {})
    if len(overrides) > MAX_OVERRIDES:
        raise SpecError(f"{len(overrides)} overrides; at most {MAX_OVERRIDES}", field="set")
    check_depth(ref, field)
    check_depth(overrides, "set")
    if isinstance(ref, str):
        name = _preset_name(ref, field, list_presets(), "scenario preset")
        if not overrides:
            return _preset(name)
        data: dict[str, Any] = _preset(name).model_dump(mode="python")  # the parsed preset: no file read
    elif isinstance(ref, Mapping):
        data = dict(ref)
        if "base" in data:
            _preset_name(data["base"], f"{field}.base", list_presets(), "scenario preset")
    else:
        raise SpecError(f"= {type(ref).__name__}: must be a preset name or a scenario mapping", field=field)
    models = list_model_presets()
    for src, where in ((data, field), (overrides, "set")):
        m = src.get("model")
        if isinstance(m, str):
            _preset_name(m, f"{where}.model", models, "model preset")
        elif isinstance(m, Mapping) and "base" in m:
            _preset_name(m["base"], f"{where}.model.base", models, "model preset")
    if overrides:
        flat = _nest(overrides)
        model = flat.pop("model", None)
        data = deep_merge(data, flat)
        if model is not None:
            data["model"] = model
    return parse_scenario(data, source="request")
