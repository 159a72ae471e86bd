"""The published MFU envelope: the highest MFU among the published runs wanka validates against, per
accelerator and precision, so that a prediction above every published run says so.

An engineer reads 63% MFU on A100 against what published runs reached on A100 (Korthikanti et al.
2022: 56.3%, Llama 3 405B's 38-43% on H100, ...). The engine may well predict a layout above them: no
published run may have combined the same choices (no recompute, a near-zero bubble, context
parallelism). Then the output should say that no published run confirms it, and which run is the
highest one it knows. The figures come from the shipped public validation file (``truth.mfu`` of its
steady-state cases, each with its source), read here once per process; nothing is entered by hand.

MFU is quoted against the dense peak of the training precision, as the engine quotes it
(``Context.mfu_peak``); 16-bit runs (BF16 and FP16 share one tensor-core peak on every accelerator in
the catalog) form one class, FP8 another.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

from wanka import yamlio
from wanka.catalog import accelerator
from wanka.errors import CatalogError

# precisions whose MFU is quoted against the same dense peak
_CLASS = {"bf16": "16-bit", "fp16": "16-bit", "fp8": "FP8", "fp4": "FP4"}


@dataclass(frozen=True)
class Envelope:
    """The published run with the highest MFU on one accelerator at one precision class."""

    accelerator: str  # the catalog name
    precision: str  # the precision class: 16-bit, FP8, FP4
    mfu: float
    case: str  # the public file's case id
    source: str  # the case's source line
    runs: int  # published runs with an MFU on this accelerator and precision class

    def above(self, mfu: float) -> str | None:
        """What an output says of a prediction ``mfu`` above this envelope; None at or below it."""
        if not mfu > self.mfu:
            return None
        return (
            f"MFU {mfu:.1%} is above every published run wanka validates against on {self.accelerator} at "
            f"{self.precision} precision ({self.runs} with an MFU; the highest {self.mfu:.1%}, {self.case}: "
            f"{self.source}); no published run confirms a figure this high, it is the engine's prediction "
            "for this layout"
        )


def precision_class(precision: str) -> str | None:
    """The precision class whose dense peak an MFU is quoted against (None: not one wanka knows)."""
    return _CLASS.get(precision.lower())


@functools.cache
def _table() -> dict[tuple[str, str], Envelope]:
    text = (resources.files("wanka") / "data" / "validation" / "public_runs.yaml").read_text("utf-8")
    data, _ = yamlio.parse(text, "public_runs.yaml (shipped)")
    runs: dict[tuple[str, str], list[tuple[float, str, str]]] = {}
    for c in data.get("cases") or ():
        truth = c.get("truth") or {}
        mfu = truth.get("mfu")
        cls = precision_class(str(c.get("precision", "")))
        if c.get("kind") != "steady_state" or not isinstance(mfu, (int, float)) or cls is None:
            continue
        try:
            name = accelerator(str(c["hardware"]["gpu"])).name
        except CatalogError:
            continue
        source = " ".join(str(c.get("source", "")).split())
        runs.setdefault((name, cls), []).append((float(mfu), str(c["id"]), source))
    out: dict[tuple[str, str], Envelope] = {}
    for (name, cls), v in runs.items():
        mfu, case, source = max(v, key=lambda r: r[0])  # the first run of the highest MFU
        out[(name, cls)] = Envelope(name, cls, mfu, case, source, len(v))
    return out


def published_envelope(accelerator_name: str, precision: str) -> Envelope | None:
    """The highest published MFU on ``accelerator_name`` (any catalog name or alias) at ``precision``'s
    class, or None where the public file holds no such run."""
    cls = precision_class(precision)
    if cls is None:
        return None
    try:
        name = accelerator(accelerator_name).name
    except CatalogError:
        return None
    return _table().get((name, cls))


def envelope_note(accelerator_name: str, precision: str, mfu: float) -> str | None:
    """The note for a predicted ``mfu`` above the published envelope; None at or below it, or where no
    published run on that accelerator and precision is known."""
    env = published_envelope(accelerator_name, precision)
    return None if env is None else env.above(mfu)
