"""The published MFU envelope: the highest MFU among the published runs wanka validates against, per
accelerator, precision and scale, so that a prediction above every published run at its scale says so.

An engineer reads 63% MFU on 512 A100 against what published runs reached on A100 at that scale
(Korthikanti et al. 2022: 56.3% on 512 GPUs) and below it (MosaicML's MPT-7B: 64.2% on 8 GPUs). The
engine may well predict a layout above them: no published run may have combined the same choices (no
recompute, a near-zero bubble, context parallelism). Then the output should say that no published run
at that scale confirms it, which run is the highest there, and how far smaller runs went. The figures
come from the shipped table ``data/published_mfu.yaml``: every steady-state run with a published
``truth.mfu`` in the public validation file and in the extra runs wanka checks itself against (never
fitted), generated from those files by ``python -m benchmarks.published_mfu --write`` (a test keeps it
current); nothing is entered by hand. It is read once per process.

MFU is quoted against the dense peak of the training precision, as the engine quotes it
(``Context.mfu_peak``); 16-bit runs (BF16 and FP16 share one tensor-core peak on every accelerator in
the catalog) form one class, FP8 another. A run counts at a scale when it used at least that many GPUs.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any

from wanka import yamlio
from wanka.catalog import accelerator
from wanka.errors import CatalogError

SCHEMA = "wanka-published-mfu/1"
TABLE = "published_mfu.yaml"  # in wanka/data

# precisions whose MFU is quoted against the same dense peak
_CLASS = {"bf16": "16-bit", "fp16": "16-bit", "fp8": "FP8", "fp4": "FP4"}


@dataclass(frozen=True)
class Envelope:
    """The published run with the highest MFU on one accelerator at one precision class, among the runs
    with at least ``min_gpus`` GPUs (0: at any scale)."""

    accelerator: str  # the catalog name
    precision: str  # the precision class: 16-bit, FP8, FP4
    mfu: float
    case: str  # the case id in its validation file
    source: str  # the case's source line
    gpus: int  # the GPUs of that run
    runs: int  # published runs with an MFU on this accelerator and precision class at this scale
    min_gpus: int = 0  # the scale asked for; 0 = any
    largest: int = 0  # the most GPUs of any published run on this accelerator and precision class
    overall: Envelope | None = None  # the highest at any scale, where smaller runs went higher

    def above(self, mfu: float) -> str | None:
        """What an output says of a prediction ``mfu`` above this envelope; None at or below it."""
        if not mfu > self.mfu:
            return None
        where = f"{self.accelerator} at {self.precision} precision"
        best = f"the highest {self.mfu:.1%}, {self.case} on {self.gpus:,} GPUs: {self.source}"
        if self.min_gpus:
            most = " (the most any published run used)" if self.min_gpus == self.largest else ""
            text = (
                f"MFU {mfu:.1%} is above every published run wanka knows on {where} with at least "
                f"{self.min_gpus:,} GPUs{most} ({self.runs} with an MFU; {best})"
            )
            if self.overall is not None:
                text += f"; smaller runs reach {self.overall.mfu:.1%} ({self.overall.case}, {self.overall.gpus:,} GPUs)"
            scale = " at this scale"
        else:
            text = (
                f"MFU {mfu:.1%} is above every published run wanka knows on {where} ({self.runs} with an MFU, "
                f"up to {self.largest:,} GPUs; {best})"
            )
            scale = ""
        return (
            text
            + f"; no published run{scale} confirms a figure this high, it is the engine's prediction for this layout"
        )


def precision_class(precision: str) -> str | None:
    """The precision class whose dense peak an MFU is quoted against (None: not one wanka knows)."""
    return _CLASS.get(precision.lower())


def frontier(runs: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The runs that hold the highest MFU among the runs with at least their GPUs (``gpus``, ``mfu``,
    ``case`` keys), most GPUs first: the highest at each scale is one of them."""
    out: list[Mapping[str, Any]] = []
    for r in sorted(runs, key=lambda r: (-r["gpus"], -r["mfu"], r["case"])):
        if not out or r["mfu"] > out[-1]["mfu"]:
            out.append(r)
    return out


def by_key(runs: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Runs (``accelerator``, ``precision`` keys) grouped by (accelerator, precision class)."""
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in runs:
        out.setdefault((str(r["accelerator"]), str(r["precision"])), []).append(dict(r))
    return out


@functools.cache
def _table() -> tuple[dict[tuple[str, str], list[dict[str, Any]]], dict[str, str]]:
    text = (resources.files("wanka") / "data" / TABLE).read_text("utf-8")
    data, _ = yamlio.parse(text, f"{TABLE} (shipped)")
    return by_key(data.get("runs") or ()), {str(k): str(v) for k, v in (data.get("sources") or {}).items()}


def _best(runs: list[dict[str, Any]], sources: dict[str, str], key: tuple[str, str], min_gpus: int) -> Envelope:
    pool = [r for r in runs if r["gpus"] >= min_gpus]
    top = frontier(pool)[-1]  # the highest MFU (the most GPUs among ties)
    return Envelope(
        key[0],
        key[1],
        float(top["mfu"]),
        str(top["case"]),
        sources.get(str(top["case"]), ""),
        int(top["gpus"]),
        len(pool),
        min_gpus,
        max(int(r["gpus"]) for r in runs),
    )


def published_envelope(accelerator_name: str, precision: str, gpus: int | None = None) -> Envelope | None:
    """The highest published MFU on ``accelerator_name`` (any catalog name or alias) at ``precision``'s
    class among the runs with at least ``gpus`` GPUs (None: at any scale; more GPUs than any published
    run: the largest published runs), or None where no such run is known."""
    cls = precision_class(precision)
    if cls is None:
        return None
    try:
        name = accelerator(accelerator_name).name
    except CatalogError:
        return None
    table, sources = _table()
    runs = table.get((name, cls))
    if not runs:
        return None
    overall = _best(runs, sources, (name, cls), 0)
    if not gpus or gpus <= min(int(r["gpus"]) for r in runs):
        return overall
    # beyond every published run: compared with the largest ones
    env = _best(runs, sources, (name, cls), min(int(gpus), overall.largest))
    if overall.mfu > env.mfu:
        env = replace(env, overall=overall)
    return env


def envelope_note(accelerator_name: str, precision: str, mfu: float, gpus: int | None = None) -> str | None:
    """The note for a predicted ``mfu`` on ``gpus`` GPUs above the published envelope at that scale; None at
    or below it, or where no published run on that accelerator and precision is known."""
    env = published_envelope(accelerator_name, precision, gpus)
    return None if env is None else env.above(mfu)
