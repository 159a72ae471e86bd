"""Reading and writing the scenario tree: YAML/JSON in, YAML/JSON out, errors that point at the line.

A scenario file may name a preset as its ``base`` and override a few fields, and may give its
``model`` as a preset name (``model: llama3-405b``) or inline.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from wanka import fileio, yamlio
from wanka.errors import CatalogNameError, SpecError
from wanka.spec.base import FieldError
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
    "nest_dotted",
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

    def __init__(self, root: yaml.Node | None) -> None:
        self.root = root

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


def read_yaml(path: Path, *, field: str | None = None) -> tuple[Any, _Lines]:
    """Parse a YAML (or JSON) file through the door (:mod:`wanka.fileio`): regular file, size, UTF-8,
    depth and alias limits; malformed text is a SpecError with the line."""
    text = fileio.read_text(path, field=field)
    data, root = yamlio.parse(text, str(path))
    return data, _Lines(root)


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge ``over`` into ``base`` (mappings merge, everything else replaces)."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def nest_dotted(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"a.b": 1, "a.c": 2}`` -> ``{"a": {"b": 1, "c": 2}}`` (a later path replaces a value in its way)."""
    out: dict[str, Any] = {}
    for path, value in flat.items():
        node = out
        parts = path.split(".")
        for p in parts[:-1]:
            nxt = node.get(p)
            if not isinstance(nxt, dict):
                nxt = {}
                node[p] = nxt
            node = nxt
        node[parts[-1]] = value
    return out


# ---------------------------------------------------------------- validation errors, all at once
_MESSAGES = {
    "greater_than": "must be > {gt}",
    "greater_than_equal": "must be ≥ {ge}",
    "less_than": "must be < {lt}",
    "less_than_equal": "must be ≤ {le}",
    "int_type": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a number",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "dict_type": "must be a mapping of fields",
    "model_type": "must be a mapping of fields",
    "model_attributes_type": "must be a mapping of fields",
    "finite_number": "must be a finite number",
    "literal_error": "must be one of {expected}",
    "missing": "required field is missing",
}


def spec_class(annotation: Any) -> type[BaseModel] | None:
    """The spec model inside ``X``, ``X | None`` or ``Optional[X]``, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        for a in typing.get_args(annotation):
            found = spec_class(a)
            if found is not None:
                return found
    return None


def _walk_field(cls: type[BaseModel], loc: tuple[Any, ...]) -> tuple[type[BaseModel] | None, Any]:
    """(model class holding the last key, its FieldInfo or None) along a pydantic error location."""
    holder: type[BaseModel] | None = cls
    for part in loc[:-1]:
        if holder is None or not isinstance(part, str) or part not in holder.model_fields:
            return None, None
        holder = spec_class(holder.model_fields[part].annotation)
    if holder is None or not loc:
        return holder, None
    return holder, holder.model_fields.get(str(loc[-1]))


def _allowed_range(info: Any) -> str:
    lo = hi = None
    for m in getattr(info, "metadata", ()):
        for attr in ("gt", "ge"):
            if getattr(m, attr, None) is not None:
                lo = f"{'>' if attr == 'gt' else '≥'} {getattr(m, attr):,}"
        for attr in ("lt", "le"):
            if getattr(m, attr, None) is not None:
                hi = f"{'<' if attr == 'lt' else '≤'} {getattr(m, attr):,}"
    ann = str(getattr(info, "annotation", ""))
    if lo is None and "PositiveInt" in ann:
        lo = "> 0"
    parts = [x for x in (lo, hi) if x]
    return f" (allowed: {' and '.join(parts)})" if parts else ""


def _field_index(
    cls: type[BaseModel], prefix: str = "", out: dict[str, list[str]] | None = None
) -> dict[str, list[str]]:
    out = {} if out is None else out
    for name, info in cls.model_fields.items():
        out.setdefault(name, []).append(prefix + name)
        sub = spec_class(info.annotation)
        if sub is not None and prefix.count(".") < 4:
            _field_index(sub, prefix + name + ".", out)
    return out


def _validation_problems(
    cls: type[BaseModel], err: ValidationError, source: str | None, lines: _Lines | None, prefix: str = ""
) -> list[SpecError]:
    out: list[SpecError] = []
    for e in err.errors():
        loc = tuple(p for p in e["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        cause = (e.get("ctx") or {}).get("error")
        if isinstance(cause, FieldError):  # a cross-field check names the key to change
            loc = (*loc, *cause.field.split("."))
        field = prefix + ".".join(str(p) for p in loc) if loc else (prefix.rstrip(".") or None)
        typ = e["type"]
        value = e.get("input")
        holder, info = _walk_field(cls, loc)
        if typ == "extra_forbidden":
            known = sorted(holder.model_fields) if holder is not None else []
            name = str(loc[-1]) if loc else ""
            elsewhere = [p for p in _field_index(cls).get(name, []) if p != ".".join(map(str, loc))]
            hint = f"; did you mean {' or '.join(prefix + p for p in elsewhere[:3])}?" if elsewhere else ""
            msg = f"unknown field{hint} Allowed here: {', '.join(known)} (`wanka schema`)"
        elif typ in _MESSAGES:
            ctx = {
                k: f"{v:,}" if isinstance(v, int | float) and not isinstance(v, bool) else v
                for k, v in (e.get("ctx") or {}).items()
            }
            try:
                msg = _MESSAGES[typ].format(**ctx)
            except (KeyError, IndexError):
                msg = _MESSAGES[typ]
            if typ not in ("missing",):
                msg += _allowed_range(info) if not typ.startswith(("greater", "less")) else ""
        else:
            msg = e["msg"]
            if msg.startswith("Value error, "):
                msg = msg[len("Value error, ") :]
        if typ not in ("extra_forbidden", "missing") and not isinstance(value, Mapping | list):
            text = "null" if value is None else repr(value)
            msg = f"= {text if len(text) <= 60 else text[:57] + '...'} — {msg}"
        line = lines.line(loc) if lines is not None and loc else None
        problem = SpecError(msg, field=field, source=source, line=line)
        problem.cross_field = isinstance(cause, FieldError)
        out.append(problem)
    return out


def _validate(cls: type[T], data: Any, source: str | None, lines: _Lines | None, prefix: str = "") -> T:
    if not isinstance(data, Mapping):
        raise SpecError(f"expected a mapping of fields, got {type(data).__name__}", field="(top level)", source=source)
    try:
        return cls.model_validate(dict(data))
    except ValidationError as e:
        raise SpecError.collect(_validation_problems(cls, e, source, lines, prefix)) from None


# ---------------------------------------------------------------- models
@lru_cache(maxsize=64)
def _model_preset(name: str) -> ModelSpec:
    path = _preset_dir() / "models" / f"{name}.yaml"
    data, lines = read_yaml(path)
    return _validate(ModelSpec, data, str(path), lines)


def _file_ref(ref: str, here: Path | None) -> Path:
    """A file named in a file: relative paths resolve against the naming file's folder first."""
    p = Path(ref)
    if not p.is_absolute() and here is not None and (here / p).exists():
        return here / p
    return p


def load_model(name_or_path: str | Path, *, here: Path | None = None) -> ModelSpec:
    """A model preset by name, or a model YAML/JSON file (relative to ``here`` when given)."""
    name = str(name_or_path)
    p = _file_ref(name, here)
    if p.suffix in (".yaml", ".yml", ".json"):
        data, lines = read_yaml(p, field="model")
        return _validate(ModelSpec, data, str(p), lines)
    if name in list_model_presets():
        return _model_preset(name)
    raise SpecError(
        f"= {name!r}: unknown model; known presets: {', '.join(list_model_presets())}, or a path to a .yaml file",
        field="model",
    )


def parse_model(data: Mapping[str, Any], source: str | None = None) -> ModelSpec:
    return _validate(ModelSpec, data, source, None)


# ---------------------------------------------------------------- quantities with units
def _unit_fields(out: dict[str, Any], source: str | None, lines: _Lines | None) -> list[SpecError]:
    """Replace quantities written with units (``tokens: 10T``, ``nic_gbps_per_gpu: 400Gb/s``) by numbers."""
    from wanka import units

    problems: list[SpecError] = []
    table = (
        (("training", "tokens"), units.parse_count),
        (("training", "batch_tokens"), units.parse_count),
        (("cluster", "fabric", "nic_gbps_per_gpu"), units.parse_gbps),
        (("cluster", "scale_up", "gbytes_per_s_per_direction"), units.parse_gbytes_per_s),
    )
    for path, parse in table:
        node: Any = out
        for k in path[:-1]:
            node = node.get(k) if isinstance(node, Mapping) else None
        if not isinstance(node, Mapping) or not isinstance(node.get(path[-1]), str):
            continue
        node = out  # copy the mappings along the path: the caller's data is never changed
        for k in path[:-1]:
            node[k] = dict(node[k])
            node = node[k]
        try:
            node[path[-1]] = parse(node[path[-1]])
        except ValueError as e:
            line = lines.line(path) if lines is not None else None
            problems.append(SpecError(str(e), field=".".join(path), source=source, line=line))
    return problems


def _batch_from_tokens(out: dict[str, Any], source: str | None, lines: _Lines | None) -> list[SpecError]:
    """``training.batch_tokens`` → ``global_batch_seqs``, rounded to a count that divides well (noted)."""
    from wanka.units import round_batch_seqs

    tr = out.get("training")
    if not isinstance(tr, dict) or "batch_tokens" not in tr:
        return []
    tr = dict(tr)
    out["training"] = tr
    bt = tr.pop("batch_tokens")
    line = lines.line(("training", "batch_tokens")) if lines is not None else None
    if "global_batch_seqs" in tr:
        return [
            SpecError(
                "give the batch once: batch_tokens or global_batch_seqs",
                field="training.batch_tokens",
                source=source,
                line=line,
            )
        ]
    if isinstance(bt, bool) or not isinstance(bt, int | float) or not 0 < bt <= 1e13:
        return [
            SpecError(
                f"= {bt!r} — must be a number of tokens (allowed: > 0 and ≤ 1e13)",
                field="training.batch_tokens",
                source=source,
                line=line,
            )
        ]
    seq = tr.get("seq_len")
    if seq is None and isinstance(out.get("model"), dict):
        seq = out["model"].get("seq_len")
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        return []  # the model's own validation reports the missing/bad seq_len
    seqs, note = round_batch_seqs(float(bt), seq)
    tr["global_batch_seqs"] = seqs
    out["assumptions"] = (
        [note, *(out.get("assumptions") or [])]
        if isinstance(out.get("assumptions", []), list)
        else (out.get("assumptions"))
    )
    return []


# ---------------------------------------------------------------- catalog names
_CATALOG_FIELDS = (
    (("cluster", "accelerator"), "accelerators"),
    (("cluster", "node"), "nodes"),
    (("cluster", "fabric", "nic"), "nics"),
    (("cluster", "fabric", "switch"), "switches"),
    (("cluster", "storage", "server"), "storage"),
)


def _catalog_problems(out: Mapping[str, Any], source: str | None, lines: _Lines | None) -> list[SpecError]:
    """Every catalog name in the scenario must name an entry (no silent default for a typo)."""
    from wanka.catalog import catalog

    cat = catalog()
    problems: list[SpecError] = []
    for path, kind in _CATALOG_FIELDS:
        node: Any = out
        for k in path:
            node = node.get(k) if isinstance(node, Mapping) else None
        if not isinstance(node, str):
            continue
        table = getattr(cat, kind)
        if node not in table:
            known = ", ".join(r.name for r in table)
            line = lines.line(path) if lines is not None else None
            problems.append(
                CatalogNameError(
                    f"= {node!r} — not in the catalog; known: {known} (`wanka catalog --kind {kind}`)",
                    field=".".join(path),
                    source=source,
                    line=line,
                )
            )
    return problems


# ---------------------------------------------------------------- scenarios
def _resolve(data: Mapping[str, Any], source: str | None, depth: int = 0, here: Path | None = None) -> dict[str, Any]:
    out = dict(data)
    base = out.pop("base", None)
    if base is not None:
        if depth > 8:
            raise SpecError("base chain is deeper than 8 (a cycle?)", field="base", source=source)
        if not isinstance(base, str):
            raise SpecError(f"= {base!r} — must be a preset name or file path", field="base", source=source)
        path = _scenario_path(base, here, field="base")
        base_data, _ = read_yaml(path, field="base")
        if not isinstance(base_data, Mapping):
            raise SpecError(
                f"expected a mapping of fields, got {type(base_data).__name__}", field="base", source=str(path)
            )
        out = deep_merge(_resolve(base_data, str(path), depth + 1, path.parent), out)
    model = out.get("model")
    if isinstance(model, str):
        out["model"] = load_model(model, here=here).model_dump(mode="python")
    elif isinstance(model, Mapping) and "base" in model:
        m = dict(model)
        base_model = load_model(str(m.pop("base")), here=here).model_dump(mode="python")
        out["model"] = deep_merge(base_model, m)
    return out


def _scenario_path(name_or_path: str | Path, here: Path | None = None, field: str = "scenario") -> Path:
    p = _file_ref(str(name_or_path), here)
    if p.suffix in (".yaml", ".yml", ".json"):
        fileio.check_input(p, field=field)
        return p
    preset = _preset_dir() / f"{name_or_path}.yaml"
    if preset.exists():
        return preset
    raise SpecError(
        f"unknown scenario {str(name_or_path)!r}; presets: {', '.join(list_presets())}, or a path to a .yaml file",
        field=field,
    )


def parse_scenario(
    data: Mapping[str, Any], source: str | None = None, lines: _Lines | None = None, *, here: Path | None = None
) -> Scenario:
    """Validate a scenario mapping (after resolving ``base`` and a named ``model``); every problem
    (fields, units, catalog names) is reported at once in one SpecError."""
    if not isinstance(data, Mapping):
        raise SpecError(f"expected a mapping of fields, got {type(data).__name__}", field="(top level)", source=source)
    out = _resolve(data, source, here=here)
    problems = _unit_fields(out, source, lines)
    problems += _batch_from_tokens(out, source, lines)
    problems += _catalog_problems(out, source, lines)
    try:
        sc = Scenario.model_validate(out)
    except ValidationError as e:
        problems += _validation_problems(Scenario, e, source, lines)
        sc = None
    if problems or sc is None:
        only_catalog = all(isinstance(p, CatalogNameError) for p in problems)
        raise (CatalogNameError if only_catalog and problems else SpecError).collect(problems)
    return sc


def load_scenario(name_or_path: str | Path) -> Scenario:
    """A preset by name, or a scenario YAML/JSON file."""
    path = _scenario_path(name_or_path)
    data, lines = read_yaml(path, field="scenario")
    source = str(name_or_path) if path.parent == _preset_dir() else str(path)
    return parse_scenario(data, source, lines, here=path.parent)


def dump_yaml(spec: BaseModel) -> str:
    """YAML text that loads back to an equal spec."""
    return yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=100)


def dump_json(spec: BaseModel) -> str:
    return json.dumps(spec.model_dump(mode="json"), ensure_ascii=False, indent=2)


def load_cluster(path: str | Path) -> ClusterSpec:
    """A bare cluster YAML/JSON file (the ``cluster:`` block of a scenario on its own)."""
    p = Path(path)
    data, lines = read_yaml(p, field="cluster")
    if isinstance(data, Mapping):
        wrapped: dict[str, Any] = {"cluster": dict(data)}
        problems = _unit_fields(wrapped, str(p), None) + _catalog_problems(wrapped, str(p), None)
        if problems:
            raise SpecError.collect(problems)
        data = wrapped["cluster"]
    return _validate(ClusterSpec, data, str(p), lines)
