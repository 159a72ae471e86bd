"""Reading and writing the scenario tree: YAML/JSON in, YAML/JSON out, errors that point at the line.

A scenario file may name a preset as its ``base`` and override a few fields, and may give its
``model`` as a preset name (``model: llama3-405b``) or inline.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from wanka import yamlio
from wanka.errors import SpecError
from wanka.spec.cluster import ClusterSpec
from wanka.spec.model import ModelSpec
from wanka.spec.scenario import Scenario

__all__ = [
    "deep_merge",
    "dump_json",
    "dump_yaml",
    "list_model_presets",
    "list_presets",
    "load_cluster",
    "load_model",
    "load_scenario",
    "parse_model",
    "parse_scenario",
    "read_yaml",
]

T = TypeVar("T", bound=BaseModel)
_PRESETS = "scenarios"


def _preset_dir() -> Path:
    return Path(str(resources.files("wanka") / _PRESETS))


def list_presets() -> list[str]:
    """Names of the built-in scenario presets."""
    return sorted(p.stem for p in _preset_dir().glob("*.yaml"))


def list_model_presets() -> list[str]:
    """Names of the built-in model presets."""
    return sorted(p.stem for p in (_preset_dir() / "models").glob("*.yaml"))


# ---------------------------------------------------------------- YAML with line numbers
class _Lines:
    """Maps a dotted key path to the line it sits on, from PyYAML's node tree."""

    def __init__(self, text: str) -> None:
        try:
            self.root: yaml.Node | None = yamlio.compose(text)
        except yaml.YAMLError:
            self.root = None

    def line(self, loc: tuple[int | str, ...]) -> int | None:
        node = self.root
        best: int | None = None
        for key in loc:
            if isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    if k.value == key:
                        best = k.start_mark.line + 1
                        node = v
                        break
                else:
                    return best
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
                node = node.value[key]
                best = node.start_mark.line + 1
            else:
                return best
        return best


def read_yaml(path: Path) -> tuple[Any, _Lines]:
    """Parse a YAML (or JSON) file; malformed text is a SpecError with the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"cannot read file: {e.strerror}", source=str(path)) from None
    try:
        data = yamlio.load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(e, "problem", None) or str(e)
        raise SpecError(f"malformed YAML: {problem}", source=str(path), line=line) from None
    return data, _Lines(text)


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge ``over`` into ``base`` (mappings merge, everything else replaces)."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def _validation_to_spec_error(
    err: ValidationError, source: str | None, lines: _Lines | None, prefix: str = ""
) -> SpecError:
    first = err.errors()[0]
    loc = tuple(p for p in first["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    field = prefix + ".".join(str(p) for p in loc) if loc else (prefix.rstrip(".") or None)
    msg = first["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    typ = first["type"]
    value = first.get("input")
    if typ == "extra_forbidden":
        msg = "unknown field; check the spelling against the schema (`wanka show --help`)"
    elif typ == "missing":
        msg = "required field is missing"
    elif not isinstance(value, Mapping | list):
        msg = f"= {value!r}: {msg.lower()}" if value is not None else msg
    line = lines.line(loc) if lines is not None and loc else None
    extra = f" (and {len(err.errors()) - 1} more problem(s))" if len(err.errors()) > 1 else ""
    return SpecError(msg + extra, field=field, source=source, line=line)


def _validate(cls: type[T], data: Any, source: str | None, lines: _Lines | None, prefix: str = "") -> T:
    if not isinstance(data, Mapping):
        raise SpecError(f"expected a mapping of fields, got {type(data).__name__}", source=source)
    try:
        return cls.model_validate(dict(data))
    except ValidationError as e:
        raise _validation_to_spec_error(e, source, lines, prefix) from None


# ---------------------------------------------------------------- models
@lru_cache(maxsize=64)
def _model_preset(name: str) -> ModelSpec:
    path = _preset_dir() / "models" / f"{name}.yaml"
    data, lines = read_yaml(path)
    return _validate(ModelSpec, data, str(path), lines)


def load_model(name_or_path: str | Path) -> ModelSpec:
    """A model preset by name, or a model YAML/JSON file."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml", ".json") and p.exists():
        data, lines = read_yaml(p)
        return _validate(ModelSpec, data, str(p), lines)
    name = str(name_or_path)
    if name in list_model_presets():
        return _model_preset(name)
    raise SpecError(
        f"unknown model {name!r}; known presets: {', '.join(list_model_presets())}, or a path to a .yaml file",
        field="model",
    )


def parse_model(data: Mapping[str, Any], source: str | None = None) -> ModelSpec:
    return _validate(ModelSpec, data, source, None)


# ---------------------------------------------------------------- scenarios
def _resolve(data: Mapping[str, Any], source: str | None, depth: int = 0) -> dict[str, Any]:
    out = dict(data)
    base = out.pop("base", None)
    if base is not None:
        if depth > 8:
            raise SpecError("base chain is deeper than 8 (a cycle?)", field="base", source=source)
        if not isinstance(base, str):
            raise SpecError(f"= {base!r}: must be a preset name or file path", field="base", source=source)
        base_data, _ = read_yaml(_scenario_path(base))
        out = deep_merge(_resolve(base_data, base, depth + 1), out)
    model = out.get("model")
    if isinstance(model, str):
        out["model"] = load_model(model).model_dump(mode="python")
    elif isinstance(model, Mapping) and "base" in model:
        m = dict(model)
        base_model = load_model(str(m.pop("base"))).model_dump(mode="python")
        out["model"] = deep_merge(base_model, m)
    return out


def _scenario_path(name_or_path: str | Path) -> Path:
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml", ".json"):
        if not p.exists():
            raise SpecError(f"no such file: {p}")
        return p
    preset = _preset_dir() / f"{name_or_path}.yaml"
    if preset.exists():
        return preset
    raise SpecError(
        f"unknown scenario {str(name_or_path)!r}; presets: {', '.join(list_presets())}, or a path to a .yaml file"
    )


def parse_scenario(data: Mapping[str, Any], source: str | None = None, lines: _Lines | None = None) -> Scenario:
    """Validate a scenario mapping (after resolving ``base`` and a named ``model``)."""
    if not isinstance(data, Mapping):
        raise SpecError(f"expected a mapping of fields, got {type(data).__name__}", source=source)
    return _validate(Scenario, _resolve(data, source), source, lines)


def load_scenario(name_or_path: str | Path) -> Scenario:
    """A preset by name, or a scenario YAML/JSON file."""
    path = _scenario_path(name_or_path)
    data, lines = read_yaml(path)
    source = str(name_or_path) if path.parent == _preset_dir() else str(path)
    return parse_scenario(data, source, lines)


def dump_yaml(spec: BaseModel) -> str:
    """YAML text that loads back to an equal spec."""
    return yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=100)


def dump_json(spec: BaseModel) -> str:
    return json.dumps(spec.model_dump(mode="json"), ensure_ascii=False, indent=2)


def load_cluster(path: str | Path) -> ClusterSpec:
    """A bare cluster YAML/JSON file (the ``cluster:`` block of a scenario on its own)."""
    p = Path(path)
    data, lines = read_yaml(p)
    return _validate(ClusterSpec, data, str(p), lines)
