"""The SQLite run store: schema, one row per point, upsert, resume keys, readers during writes, export."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest

from wanka.store import RunStore, StoreError, export_run, flat_rows


def _run(store: RunStore, h: str = "abc", total: int = 3) -> int:
    spec = {"axes": {"cluster.nodes": [1, 2, 3]}}
    return store.create_run(sweep_id="t", sweep_hash=h, mode="plan", spec=spec, total=total, source="t.yaml").id


def test_points_are_unique_per_run_and_upserted(tmp_path: Path) -> None:
    with RunStore(tmp_path / "r.db") as s:
        rid = _run(s)
        s.record_point(rid, key='{"cluster.nodes":1}', idx=0, status="error", error="boom")
        s.record_point(rid, key='{"cluster.nodes":1}', idx=0, status="done", result={"summary": {"x": 1.5}})
        s.record_point(rid, key='{"cluster.nodes":2}', idx=1, status="done", result={"summary": {"x": 2.5}})
        pts = s.points(rid)
        assert [(p.key, p.status, p.error) for p in pts] == [
            ('{"cluster.nodes":1}', "done", None),
            ('{"cluster.nodes":2}', "done", None),
        ]
        assert pts[0].overrides == {"cluster.nodes": 1} and pts[0].result == {"summary": {"x": 1.5}}
        info = s.run(rid)
        assert (info.done_points, info.error_points, info.total_points, info.status) == (2, 0, 3, "running")
        s.set_status(rid, "done")
        assert s.run(rid).status == "done"
    with sqlite3.connect(tmp_path / "r.db") as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        with pytest.raises(sqlite3.IntegrityError):
            c.execute(
                "INSERT INTO points (run_id, point_key, idx, status) VALUES (?, ?, 0, 'done')",
                (rid, '{"cluster.nodes":1}'),
            )


def test_finished_keys_and_latest_run(tmp_path: Path) -> None:
    with RunStore(tmp_path / "r.db") as s:
        a = _run(s, "h1")
        b = _run(s, "h1")
        _run(s, "h2")
        s.record_point(b, key="k1", idx=0, status="done", result={})
        s.record_point(b, key="k2", idx=1, status="error", error="no")
        assert s.latest_run("h1").id == b != a  # type: ignore[union-attr]
        assert s.latest_run("nope") is None
        assert s.finished_keys(b) == {"k1", "k2"}
        assert s.finished_keys(b, include_errors=False) == {"k1"}
        assert [r.id for r in s.runs()] == [1, 2, 3]


def test_a_reader_sees_commits_while_the_writer_is_open(tmp_path: Path) -> None:
    with RunStore(tmp_path / "r.db") as w:
        rid = _run(w)
        w.record_point(rid, key="k1", idx=0, status="done", result={"summary": {}})
        with RunStore(tmp_path / "r.db", create=False) as r:
            assert r.run(rid).done_points == 1
            w.record_point(rid, key="k2", idx=1, status="done", result={"summary": {}})
            assert r.run(rid).done_points == 2  # each point is its own committed transaction


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no run store"):
        RunStore(tmp_path / "absent.db", create=False)
    with pytest.raises(StoreError, match="does not exist"):
        RunStore(tmp_path / "no" / "such" / "dir.db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all " * 100)
    with pytest.raises(StoreError, match="not a wanka run store"):
        RunStore(junk)
    with RunStore(tmp_path / "r.db") as s, pytest.raises(StoreError, match="no run 7"):
        s.run(7)


def test_export_formats(tmp_path: Path) -> None:
    with RunStore(tmp_path / "r.db") as s:
        rid = _run(s)
        s.record_point(
            rid,
            key='{"cluster.nodes":1}',
            idx=0,
            status="done",
            result={"summary": {"step_time_s": 2.0, "tp": 8, "nested": {"a": 1}}, "detail": {"x": 1}},
        )
        s.record_point(rid, key='{"cluster.nodes":2}', idx=1, status="error", error="bad combination")
        run, pts = s.run(rid), s.points(rid)
    rows = flat_rows(pts)
    assert rows[0]["cluster.nodes"] == 1 and rows[0]["step_time_s"] == 2.0 and "nested" not in rows[0]
    text = export_run(run, pts, "csv", None)
    assert text is not None
    got = list(csv.DictReader(io.StringIO(text)))
    assert [g["status"] for g in got] == ["done", "error"] and got[1]["error"] == "bad combination"
    out = tmp_path / "e.json"
    assert export_run(run, pts, "json", out) is None
    data = json.loads(out.read_text())
    assert data["run"]["id"] == rid and data["points"][0]["result"]["detail"] == {"x": 1}
    with pytest.raises(StoreError, match="must be one of"):
        export_run(run, pts, "xml", None)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(StoreError, match="pip install pyarrow"):
            export_run(run, pts, "parquet", tmp_path / "e.parquet")
    else:
        with pytest.raises(StoreError, match="--out"):
            export_run(run, pts, "parquet", None)
