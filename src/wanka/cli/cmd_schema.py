"""``wanka schema [--json]``: the scenario file's fields, types, defaults and allowed ranges.

The JSON form is a JSON Schema (draft 2020-12) built from the pydantic models, with what the file
reader adds on top: ``base:`` (a preset or a file, relative to the file naming it), ``model:`` as a
preset name, ``training.batch_tokens`` and quantities with units. Editors that speak JSON Schema
(VS Code's YAML extension: ``# yaml-language-server: $schema=wanka.schema.json``) complete and check
scenario files with it.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from wanka.cli.app import app, console

__all__ = ["scenario_schema"]

_UNIT_FIELDS = {
    ("training", "tokens"): "count with an optional unit: 15.6T, 2e12 (k, M, G/B, T, P = 10^3..; Ki, Mi, Gi = 2^10..)",
    ("cluster", "fabric", "nic_gbps_per_gpu"): "Gbit/s, or a speed with a unit: 400G, 400Gb/s, 0.8Tb/s",
    ("cluster", "scale_up", "gbytes_per_s_per_direction"): "GB/s, or a bandwidth with a unit: 900GB/s, 1.8TB/s",
}


def _defs(schema: dict[str, Any], ref: str) -> dict[str, Any]:
    name = ref.rsplit("/", 1)[-1]
    d: dict[str, Any] = schema["$defs"][name]
    return d


def _prop(schema: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    node: dict[str, Any] = schema
    for i, key in enumerate(path):
        props = node.get("properties", {})
        if key not in props:
            return None
        node = props[key]
        if i < len(path) - 1:
            refs = [node, *node.get("anyOf", [])]
            target = next((r for r in refs if "$ref" in r), None)
            if target is None:
                return None
            node = _defs(schema, target["$ref"])
    return node


def scenario_schema() -> dict[str, Any]:
    """The scenario JSON Schema (see the module docstring)."""
    from wanka.spec import Scenario, list_model_presets, list_presets

    schema: dict[str, Any] = Scenario.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "wanka scenario"
    schema["required"] = []  # `base:` may bring the cluster
    props = schema["properties"]
    props["base"] = {
        "type": "string",
        "description": "a preset (" + ", ".join(list_presets()) + ") or a scenario file, relative to this file; "
        "this file's fields are merged over it",
    }
    model = props["model"]
    props["model"] = {
        "anyOf": [
            {"type": "string", "enum": list_model_presets(), "description": "a model preset"},
            {"type": "string", "pattern": r"\.(ya?ml|json)$", "description": "a model file"},
            *model.get("anyOf", [model]),
        ],
        "description": "a model preset name, a model file, or the model inline (`base:` a preset and override)",
    }
    for path, text in _UNIT_FIELDS.items():
        node = _prop(schema, path)
        if node is not None:
            alt = {k: v for k, v in node.items() if k not in ("description", "title", "default")}
            node.clear()
            node.update({"anyOf": [alt, {"type": "string"}], "description": text})
    training = _defs(schema, "#/$defs/TrainingSpec")
    training["properties"]["batch_tokens"] = {
        "anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "string"}],
        "description": "global batch in tokens (16M or 16Mi); rounded to a sequence count that divides well "
        "(the rounding is printed); give this or global_batch_seqs",
    }
    training["required"] = [r for r in training.get("required", []) if r != "global_batch_seqs"]
    return schema


def _type(node: dict[str, Any], schema: dict[str, Any]) -> str:
    if "$ref" in node:
        return node["$ref"].rsplit("/", 1)[-1]
    if "enum" in node:
        return " | ".join(map(str, node["enum"]))
    if "const" in node:
        return str(node["const"])
    if "anyOf" in node:
        return " | ".join(dict.fromkeys(_type(a, schema) for a in node["anyOf"]))
    t = node.get("type", "any")
    if t == "array":
        return f"list of {_type(node.get('items', {}), schema)}"
    return str(t)


def _range(node: dict[str, Any]) -> str:
    nodes = [node, *node.get("anyOf", [])]
    parts = []
    for n in nodes:
        for key, sym in (("exclusiveMinimum", ">"), ("minimum", "≥"), ("exclusiveMaximum", "<"), ("maximum", "≤")):
            if key in n:
                parts.append(f"{sym} {n[key]:,}")
    return " and ".join(parts)


def _lines(schema: dict[str, Any], node: dict[str, Any], indent: int, seen: set[str]) -> list[str]:
    out = []
    required = set(node.get("required", []))
    for name, p in node.get("properties", {}).items():
        kind = _type(p, schema)
        extras = []
        if "default" in p and p["default"] is not None and not isinstance(p["default"], dict):
            extras.append(f"default {p['default']}")
        rng = _range(p)
        if rng:
            extras.append(rng)
        if name in required:
            extras.append("required")
        desc = p.get("description", "")
        meta = f" ({', '.join(extras)})" if extras else ""
        out.append(f"{'  ' * indent}{name}: {kind}{meta}" + (f" — {desc}" if desc else ""))
        refs = [r["$ref"] for r in [p, *p.get("anyOf", [])] if "$ref" in r]
        for ref in refs:
            name_ = ref.rsplit("/", 1)[-1]
            if name_ not in seen:
                out += _lines(schema, _defs(schema, ref), indent + 1, seen | {name_})
    return out


@app.command("schema")
def schema_cmd(
    json_out: Annotated[bool, typer.Option("--json", help="print the JSON Schema (for editors and scripts)")] = False,
) -> None:
    """The scenario file's fields: types, defaults, allowed ranges (JSON Schema with --json)."""
    s = scenario_schema()
    if json_out:
        import sys

        sys.stdout.write(json.dumps(s, ensure_ascii=False, indent=2) + "\n")
        return
    console.print("scenario file (YAML or JSON); `wanka schema --json` for the JSON Schema", markup=False)
    for line in _lines(s, s, 0, set()):
        console.print(line, markup=False, highlight=False)
