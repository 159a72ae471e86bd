"""Reading `wanka-validation/1` files and turning each case into a scenario and strategy batch."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from wanka import yamlio
from wanka.catalog import accelerator
from wanka.errors import CatalogError, SpecError, WankaError
from wanka.spec import Scenario, SoftwareSpec, parse_scenario

__all__ = ["Case", "case_scenario", "load_cases", "software_overlap"]

SCHEMA = "wanka-validation/1"
_REQUIRED = ("id", "kind", "model", "hardware", "parallelism", "batch", "precision", "truth")
_RECIPES = ("fp8_current_scaling", "fp8_delayed_scaling", "mxfp8", "fp8_blockwise", "fp8_unspecified")


@dataclass(frozen=True)
class Case:
    """One published run: its raw record and where it sits in the file."""

    id: str
    kind: str
    raw: dict[str, Any]
    superseded: bool = False

    @property
    def truth(self) -> float:
        return float(self.raw["truth"]["tokens_per_s_per_gpu"])


def load_cases(path: str | Path | None = None) -> tuple[list[Case], list[Case]]:
    """Cases and superseded cases of a validation file (default: the public file shipped with wanka)."""
    if path is None:
        text = (resources.files("wanka") / "data" / "validation" / "public_runs.yaml").read_text("utf-8")
        src = "public_runs.yaml (shipped)"
    else:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as e:
            raise SpecError(f"cannot read validation file: {e.strerror}", source=str(p)) from None
        src = str(p)
    try:
        data = yamlio.load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise SpecError("malformed YAML", source=src, line=mark.line + 1 if mark else None) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        got = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise SpecError(f"= {got!r}: must be {SCHEMA!r}", field="schema", source=src)

    def cases(key: str, sup: bool) -> list[Case]:
        rows = data.get(key) or []
        if not isinstance(rows, list):
            raise SpecError("must be a list of cases", field=key, source=src)
        out = []
        for i, r in enumerate(rows):
            cid = str(r.get("id", f"{key}[{i}]")) if isinstance(r, dict) else f"{key}[{i}]"
            out.append(
                Case(
                    cid,
                    str(r.get("kind", "?")) if isinstance(r, dict) else "?",
                    r if isinstance(r, dict) else {},
                    sup,
                )
            )
        return out

    return cases("cases", False), cases("superseded_cases", True)


def software_overlap(framework: str, release: str | None) -> dict[str, Any]:
    """Execution switches a framework release had (the catalog's software table), with its ``source``."""
    sw = SoftwareSpec(framework=framework, release=release or None)
    return {**sw.switches(), "source": sw.source}


def _model_block(m: dict[str, Any], cid: str) -> dict[str, Any]:
    keys = (
        "type",
        "n_layers",
        "hidden",
        "n_heads",
        "n_kv_heads",
        "head_dim",
        "ffn_hidden",
        "ffn_act",
        "vocab",
        "seq_len",
        "tied_embeddings",
        "mtp_layers",
    )
    out: dict[str, Any] = {"name": cid}
    for k, v in m.items():
        if k in keys:
            if v is not None:
                out[k] = v
        elif k == "moe":
            if v is not None:
                out["moe"] = {kk: vv for kk, vv in v.items() if vv is not None}
        elif k == "attention":
            if v is not None:
                out["attention"] = dict(v)
        else:
            raise SpecError(f"unknown model field {k!r}", field=f"model.{k}", source=cid)
    if "n_kv_heads" not in out and "n_heads" in out:
        out["n_kv_heads"] = out["n_heads"]  # not stated: multi-head attention
    return out


def case_scenario(case: Case) -> tuple[Scenario, dict[str, Any]]:
    """A scenario for ``case`` and the unknowns left open (vpp / micro_batch = None)."""
    r = case.raw
    missing = [k for k in _REQUIRED if k not in r]
    if missing:
        raise SpecError(f"missing field(s) {', '.join(missing)}", source=case.id)
    hw, par, batch = r["hardware"], r["parallelism"], r["batch"]
    gpu = hw.get("gpu")
    try:
        acc = accelerator(str(gpu))
    except CatalogError as e:
        raise SpecError(str(e), field="hardware.gpu", source=case.id) from None
    count = int(hw["count"])
    gpn = int(hw.get("gpus_per_node") or 8)
    nodes = -(-count // gpn)
    nic = hw.get("nic_gbps_per_gpu")
    notes = []
    if nic is None:
        nic = 200.0 if acc.name.startswith("A100") else 400.0
        notes.append(f"NIC bandwidth not published: {nic:.0f} Gb/s per GPU assumed (typical for {acc.name})")
    sw = r.get("software") or {}
    release = sw.get("release")
    try:
        software = SoftwareSpec(
            framework=str(sw.get("framework") or ""), release=None if release is None else str(release)
        )
    except ValueError as e:
        raise SpecError(str(e).splitlines()[-2].strip(), field="software.release", source=case.id) from None
    recipe = r.get("precision_recipe")
    data = {
        "name": case.id,
        "cluster": {
            "accelerator": acc.name,
            "nodes": nodes,
            "gpus_per_node": gpn,
            "scale_up": {"domain_size": int(hw.get("scale_up_domain") or gpn)},
            "fabric": {"nic_gbps_per_gpu": float(nic)},
        },
        "model": _model_block(dict(r["model"]), case.id),
        "training": {
            "global_batch_seqs": int(batch["global_batch_seqs"]),
            "micro_batch": int(batch.get("micro_batch") or 1),
            "precision": str(r["precision"]),
            # the recipe is reported, not modelled: one the spec does not know is dropped, not an error
            "precision_recipe": recipe if recipe in _RECIPES else None,
            "tokens": 1e12,
        },
        "parallel": {
            "tp": int(par["tp"]),
            "pp": int(par["pp"]),
            "dp": int(par["dp"]),
            "cp": int(par.get("cp") or 1),
            "ep": int(par.get("ep") or 1),
            "vpp": int(par.get("vpp") or 1),
            "sp": bool(par.get("sequence_parallel", par["tp"] > 1)),
            "zero": int(par.get("zero") or 0),
            "recompute": str(par.get("recompute") or "none"),
        },
        "software": software,
        "assumptions": [*notes, f"overlap from software: {software.source}"],
    }
    try:
        sc = parse_scenario(data, source=case.id)
    except WankaError:
        raise
    unknown = {
        "vpp": par.get("vpp") is None,
        "micro_batch": batch.get("micro_batch") is None,
        "recompute": par.get("recompute") is None,
    }
    return sc, unknown
