"""Export a run's points as CSV, JSON or Parquet (Parquet needs the optional ``pyarrow``).

CSV and Parquet get one flat row per point: the point's axis values, its status, and the scalar
fields of its result ``summary`` (``step_time_s``, ``mfu``, ``tp`` … as the mode produced them).
JSON gets the full records (summary and detail).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from wanka import fileio
from wanka.store.db import PointRecord, RunInfo, StoreError

__all__ = ["FORMATS", "export_run", "flat_rows"]

FORMATS = ("csv", "json", "parquet")


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, str | int | float | bool)


def flat_rows(points: list[PointRecord]) -> list[dict[str, Any]]:
    """One flat dict per point: axis values, status, error, elapsed and the summary's scalars."""
    rows = []
    for p in points:
        row: dict[str, Any] = {}
        for k, v in p.overrides.items():
            row[k] = v if _scalar(v) else json.dumps(v, sort_keys=True)
        row["status"] = p.status
        row["error"] = p.error
        row["elapsed_s"] = p.elapsed_s
        summary = (p.result or {}).get("summary", {})
        for k, v in summary.items():
            if _scalar(v):
                row.setdefault(k, v)
        rows.append(row)
    return rows


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    cols: dict[str, None] = {}
    for r in rows:
        cols.update(dict.fromkeys(r))
    return list(cols)


def export_run(
    run: RunInfo, points: list[PointRecord], fmt: str, out: Path | None, *, protect: tuple[Path, ...] = ()
) -> str | None:
    """Write the run's points in ``fmt`` to ``out``; with no ``out``, return the text (csv/json).

    ``out`` is checked (:func:`wanka.fileio.check_output`: never a folder, a SQLite file or a path in
    ``protect``, such as the store it was read from) and written atomically.
    """
    if out is not None:
        fileio.check_output(out, field="--out", protect=protect)
    if fmt not in FORMATS:
        raise StoreError(f"--format = {fmt!r}: must be one of {', '.join(FORMATS)}")
    if fmt == "json":
        doc = fileio.json_safe({"run": run.to_dict(), "points": [p.to_dict() for p in points]})
        text = json.dumps(doc, ensure_ascii=False, indent=2, allow_nan=False)
        return _write_text(text + "\n", out, protect)
    rows = fileio.json_safe(flat_rows(points))
    cols = _columns(rows)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return _write_text(buf.getvalue(), out, protect)
    try:
        import pyarrow as pa  # type: ignore[import-not-found, unused-ignore]
        import pyarrow.parquet as pq  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise StoreError("--format parquet needs pyarrow: `pip install pyarrow` (or use --format csv)") from None
    if out is None:
        raise StoreError("--format parquet writes a binary file: give --out FILE.parquet")
    table = pa.Table.from_pylist([{c: r.get(c) for c in cols} for r in rows])
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    fileio.write_atomic(out, buf.getvalue().to_pybytes(), field="--out", protect=protect)
    return None


def _write_text(text: str, out: Path | None, protect: tuple[Path, ...] = ()) -> str | None:
    if out is None:
        return text
    fileio.write_atomic(out, text, field="--out", protect=protect)  # a crash never leaves a half-written export
    return None
