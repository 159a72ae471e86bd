"""Reading `wanka-validation/1` files and turning each case into a scenario and strategy batch."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from wanka import fileio, yamlio
from wanka.catalog import accelerator
from wanka.catalog.software import SWITCHES, SwitchFields
from wanka.errors import CatalogError, SpecError
from wanka.spec import Scenario, SoftwareSpec, parse_scenario
from wanka.spec.cluster import MAX_ACCELERATORS
from wanka.spec.training import CpCommType

__all__ = ["Case", "CaseRecord", "case_scenario", "load_cases", "software_overlap"]

SCHEMA = "wanka-validation/1"
_RECIPES = ("fp8_current_scaling", "fp8_delayed_scaling", "mxfp8", "fp8_blockwise", "fp8_unspecified")


# ---------------------------------------------------------------- the file's schema, as pydantic models
class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class CaseHardware(_Row):
    gpu: str
    count: int = Field(ge=1, le=MAX_ACCELERATORS)
    gpus_per_node: int | None = Field(None, ge=1, le=256)
    scale_up_domain: int | None = Field(None, ge=1, le=100_000)
    nic_gbps_per_gpu: float | None = Field(None, gt=0, le=100_000)
    power_limit_w: float | None = Field(None, gt=0, le=10_000)  # the source's accelerator power limit


class CaseParallelism(_Row):
    tp: int = Field(ge=1, le=100_000)
    pp: int = Field(ge=1, le=100_000)
    dp: int = Field(ge=1, le=MAX_ACCELERATORS)
    cp: int | None = Field(None, ge=1, le=100_000)
    ep: int | None = Field(None, ge=1, le=100_000)
    vpp: int | None = Field(None, ge=1, le=1_000)
    sequence_parallel: bool | None = None
    recompute: Literal["none", "selective", "full"] | None = None
    recompute_layers: int | None = Field(None, ge=0, le=100_000)  # full, block method: layers per model chunk
    zero: int | None = Field(None, ge=0, le=3)
    cp_comm_type: CpCommType | None = None  # the source's CP attention (default p2p)


class CaseBatch(_Row):
    global_batch_seqs: int = Field(ge=1, le=100_000_000)
    micro_batch: int | None = Field(None, ge=1, le=65_536)


class CaseTruth(_Row):
    tokens_per_s_per_gpu: float = Field(gt=0, le=1e9)
    iteration_time_s: float | None = Field(None, gt=0, le=1e6)
    mfu: float | None = Field(None, gt=0, le=1)
    derivation: str | None = None


class CaseSoftware(_Row, SwitchFields):
    """The run's framework release and the switches its own launch script or per-model preset sets
    where they differ from the software table (e.g. ModelLink's --use-mc2 / --overlap-grad-reduce,
    Megatron-Bridge's moe_a2a_overlap / cuda_graph_impl / moe_flex_dispatcher_backend, Composer's
    mixed_precision PURE = bf16 gradient reduction); None = what the table says. ``switches_source``
    says where they were read."""

    framework: str = ""
    release: str | int | float = ""
    cudnn_frontend: str | None = None
    switches_source: str | None = None


class CaseRecord(_Row):
    """One row of a ``wanka-validation/1`` file (see the schema README beside the shipped file).

    ``model`` is checked field by field when the case becomes a scenario (it is a ModelSpec with
    ``n_kv_heads: null`` meaning multi-head attention); everything else is checked here.
    """

    id: str = Field(min_length=1, max_length=200)
    source: str | None = None
    kind: Literal["steady_state", "campaign"]
    quality: str | None = None
    model: dict[str, Any]
    hardware: CaseHardware
    parallelism: CaseParallelism
    batch: CaseBatch
    precision: Literal["fp32", "tf32", "fp16", "bf16", "fp8", "fp4"]
    precision_recipe: str | None = None
    # the optimizer the run used (training.optimizer); None = adam, what most runs publish or imply
    optimizer: Literal["adam", "muon"] | None = None
    truth: CaseTruth
    notes: str | None = None
    software: CaseSoftware | None = None
    superseded_by: str | None = None
    # a row kept to check the model, never to build it (no fit or structure choice reads it)
    check_only: bool = False

    @model_validator(mode="after")
    def _world(self) -> CaseRecord:
        p = self.parallelism
        w = p.tp * p.pp * p.dp * (p.cp or 1)
        if w != self.hardware.count:
            raise ValueError(
                f"parallelism tp·pp·dp·cp = {p.tp}·{p.pp}·{p.dp}·{p.cp or 1} = {w} must equal hardware.count = "
                f"{self.hardware.count}"
            )
        return self


@dataclass(frozen=True)
class Case:
    """One published run: its record (as a mapping) and where it sits in the file."""

    id: str
    kind: str
    raw: dict[str, Any]
    superseded: bool = False

    @property
    def truth(self) -> float:
        t = self.raw.get("truth")
        v = t.get("tokens_per_s_per_gpu") if isinstance(t, dict) else None
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 < v < float("inf"):
            raise SpecError(f"= {v!r} — must be a positive number", field="truth.tokens_per_s_per_gpu", source=self.id)
        return float(v)


def _record(raw: Any, source: str | None, lines: Any = None, loc: tuple[Any, ...] = ()) -> CaseRecord:
    """Validate one case; every problem at once, with its line when the file is known."""
    from wanka.spec.io import _validation_problems

    if not isinstance(raw, dict):
        raise SpecError(f"expected a mapping of case fields, got {type(raw).__name__}", source=source)
    try:
        return CaseRecord.model_validate(raw)
    except ValidationError as e:
        probs = _validation_problems(CaseRecord, e, source, None)
        if lines is not None:
            for pr, err in zip(probs, e.errors(), strict=True):
                pr.line = lines.line((*loc, *err["loc"]))
                pr.field = ".".join(str(x) for x in loc) + "." + (pr.field or "")
                pr.args = (pr.one_line(),)
        raise SpecError.collect(probs) from None


def load_cases(path: str | Path | None = None) -> tuple[list[Case], list[Case]]:
    """Cases and superseded cases of a validation file (default: the public file shipped with wanka).

    The file goes through the door (:mod:`wanka.fileio`) and every case through :class:`CaseRecord`;
    all problems of the file are reported at once. An accelerator name the catalog does not know is
    that case's error, not the file's.
    """
    if path is None:
        text = (resources.files("wanka") / "data" / "validation" / "public_runs.yaml").read_text("utf-8")
        src = "public_runs.yaml (shipped)"
    else:
        text = fileio.read_text(path, field="validation file")
        src = str(path)
    data, root = yamlio.parse(text, src)
    from wanka.spec.io import _Lines

    lines = _Lines(root)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        got = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise SpecError(f"= {got!r} — must be {SCHEMA!r}", field="schema", source=src)
    extra = [k for k in data if k not in ("schema", "cases", "superseded_cases")]
    problems: list[SpecError] = [
        SpecError(
            "unknown field; allowed: schema, cases, superseded_cases", field=str(k), source=src, line=lines.line((k,))
        )
        for k in extra
    ]

    def cases(key: str, sup: bool) -> list[Case]:
        rows = data.get(key)
        if rows is None:
            return []
        if not isinstance(rows, list):
            problems.append(SpecError("must be a list of cases", field=key, source=src, line=lines.line((key,))))
            return []
        out = []
        for i, r in enumerate(rows):
            try:
                rec = _record(r, src, lines, (key, i))
            except SpecError as e:
                problems.extend(e.problems)
                continue
            try:
                from wanka.spec.io import parse_model

                parse_model(_model_block(dict(rec.model), rec.id))
            except SpecError as e:
                for pr in e.problems:
                    problems.append(
                        SpecError(
                            pr.detail,
                            field=f"{key}.{i}.model.{pr.field or ''}".rstrip("."),
                            source=src,
                            line=lines.line((key, i, "model", *(pr.field or "").split("."))),
                        )
                    )
                continue
            out.append(Case(rec.id, rec.kind, rec.model_dump(mode="python"), sup))
        return out

    main, sup = cases("cases", False), cases("superseded_cases", True)
    seen: set[str] = set()
    for c in main + sup:
        if c.id in seen:
            problems.append(SpecError(f"= {c.id!r} — is used by two cases", field="id", source=src))
        seen.add(c.id)
    if problems:
        raise SpecError.collect(problems)
    return main, sup


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
        # layer patterns and hybrid mixers (ModelSpec fields; issue 18)
        "layer_pattern",
        "sliding_window",
        "attention_chunk",
        "attention_sinks",
        "attention_output_gate",
        "ffn_act_clamp",
        "rope_attention_factor",
        "linear_attention",
        "ssm",
    )
    out: dict[str, Any] = {"name": cid}
    for k, v in m.items():
        if k in keys:
            if v is not None:
                out[k] = v
        elif k == "moe":
            if isinstance(v, dict):
                out["moe"] = {kk: vv for kk, vv in v.items() if vv is not None}
            elif v is not None:
                out["moe"] = v
        elif k == "attention":
            if v is not None:
                out["attention"] = dict(v) if isinstance(v, dict) else v
        else:
            raise SpecError(f"unknown model field {k!r}", field=f"model.{k}", source=cid)
    if "n_kv_heads" not in out and "n_heads" in out:
        out["n_kv_heads"] = out["n_heads"]  # not stated: multi-head attention
    return out


def case_scenario(case: Case) -> tuple[Scenario, dict[str, Any]]:
    """A scenario for ``case`` and the unknowns left open (vpp / micro_batch = None)."""
    rec = _record(case.raw, case.id)
    hw, par, batch = rec.hardware, rec.parallelism, rec.batch
    try:
        acc = accelerator(hw.gpu)
    except CatalogError as e:
        raise SpecError(str(e), field="hardware.gpu", source=case.id) from None
    gpn = hw.gpus_per_node or 8
    nodes = -(-hw.count // gpn)
    nic = hw.nic_gbps_per_gpu
    notes = []
    if nic is None:
        nic = 200.0 if acc.name.startswith("A100") else 400.0
        notes.append(f"NIC bandwidth not published: {nic:.0f} Gb/s per GPU assumed (typical for {acc.name})")
    sw = rec.software or CaseSoftware()
    try:
        software = SoftwareSpec(
            framework=str(sw.framework or ""),
            release=str(sw.release) if sw.release != "" else None,
            cudnn_frontend=sw.cudnn_frontend,
            **{k: getattr(sw, k) for k in SWITCHES},
        )
    except ValueError as e:
        raise SpecError(str(e).splitlines()[-2].strip(), field="software.release", source=case.id) from None
    # a published global batch that the layout cannot run (not a multiple of dp x micro-batch: papers
    # round, or quote a figure their own config contradicts) is completed with the nearest batch it can
    # run, and the output says so; per-GPU throughput is what is compared, so the step's size matters
    # only through its micro-batch count. Beyond 10% away it is no rounding but a wrong field, and the
    # layout's feasibility check reports it
    gbs, step = batch.global_batch_seqs, par.dp * (batch.micro_batch or 1)
    near = max(step, step * round(gbs / step))
    if gbs % step and abs(near - gbs) <= 0.1 * gbs:
        notes.append(
            f"global batch {gbs} is not a multiple of dp {par.dp}"
            + (f" x micro-batch {batch.micro_batch}" if batch.micro_batch else "")
            + f" (as published): predicted at {near}, the nearest batch the layout runs"
        )
        gbs = near
    recipe = rec.precision_recipe
    data = {
        "name": case.id,
        "cluster": {
            "accelerator": acc.name,
            "nodes": nodes,
            "gpus_per_node": gpn,
            "scale_up": {"domain_size": hw.scale_up_domain or gpn},
            "fabric": {"nic_gbps_per_gpu": float(nic)},
            **({"power_limit_w": hw.power_limit_w} if hw.power_limit_w else {}),
        },
        "model": _model_block(dict(rec.model), case.id),
        "training": {
            "global_batch_seqs": gbs,
            "micro_batch": batch.micro_batch or 1,
            "precision": rec.precision,
            # the recipe is reported, not modelled: one the spec does not know is dropped, not an error
            "precision_recipe": recipe if recipe in _RECIPES else None,
            "optimizer": rec.optimizer or "adam",
            "tokens": 1e12,
        },
        "parallel": {
            "tp": par.tp,
            "pp": par.pp,
            "dp": par.dp,
            "cp": par.cp or 1,
            "ep": par.ep or 1,
            "vpp": par.vpp or 1,
            "sp": par.sequence_parallel if par.sequence_parallel is not None else par.tp > 1,
            "zero": par.zero or 0,
            "recompute": par.recompute or "none",
            **({"recompute_layers": par.recompute_layers} if par.recompute_layers is not None else {}),
            **({"cp_comm_type": par.cp_comm_type} if par.cp_comm_type else {}),
        },
        "software": software,
        "assumptions": [
            *notes,
            f"overlap from software: {software.source}",
            *([f"MoE switches from {sw.switches_source}"] if sw.switches_source else []),
        ],
    }
    sc = parse_scenario(data, source=case.id)
    unknown = {"vpp": par.vpp is None, "micro_batch": batch.micro_batch is None, "recompute": par.recompute is None}
    return sc, unknown
