"""The run store: sweeps and their points in one SQLite file (stdlib ``sqlite3``, WAL journal).

Two tables. ``runs``: one row per sweep run (its id from the file, the sweep hash, when it was
created, its status). ``points``: one row per finished point, ``UNIQUE (run_id, point_key)``, where the
key is the canonical JSON of the point's overrides. Each point is committed in its own transaction
the moment its result reaches the parent process, so a run killed at any instant (``kill -9``
included) keeps every point it had recorded and, run again with the same sweep hash, skips them.

Durability: WAL with ``synchronous=NORMAL`` survives a crash of the process (the OS holds the
log); a power cut may lose the last commits, which a resumed run recomputes. One process writes;
readers (``wanka runs``) may read while a sweep runs.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wanka import fileio
from wanka.errors import SpecError, WankaError

__all__ = ["DEFAULT_DB", "PointRecord", "RunInfo", "RunStore", "StoreError"]

DEFAULT_DB = "wanka.db"
SCHEMA_VERSION = 1
RUN_STATUSES = ("running", "done", "interrupted", "failed")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sweep_id TEXT NOT NULL,
    sweep_hash TEXT NOT NULL,
    source TEXT,
    mode TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    total_points INTEGER NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    status TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_hash ON runs (sweep_hash, id);
CREATE TABLE IF NOT EXISTS points (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    point_key TEXT NOT NULL,
    idx INTEGER NOT NULL,
    status TEXT NOT NULL,
    result_json TEXT,
    error TEXT,
    started REAL,
    finished REAL,
    elapsed_s REAL,
    worker TEXT,
    UNIQUE (run_id, point_key)
);
"""


class StoreError(WankaError):
    """The run store cannot be opened or does not hold what was asked for."""


@dataclass(frozen=True)
class RunInfo:
    """One sweep run and how far it got."""

    id: int
    sweep_id: str
    sweep_hash: str
    source: str | None
    mode: str
    spec: dict[str, Any]
    total_points: int
    done_points: int
    error_points: int
    created: float
    updated: float
    status: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "sweep_id": self.sweep_id,
            "sweep_hash": self.sweep_hash,
            "source": self.source,
            "mode": self.mode,
            "total_points": self.total_points,
            "done_points": self.done_points,
            "error_points": self.error_points,
            "created": _iso(self.created),
            "updated": _iso(self.updated),
            "status": self.status,
            "spec": self.spec,
        }


@dataclass(frozen=True)
class PointRecord:
    """One finished point: its overrides, status, result (or error) and timings."""

    run_id: int
    key: str
    idx: int
    status: str  # "done" or "error"
    result: dict[str, Any] | None
    error: str | None
    started: float | None
    finished: float | None
    elapsed_s: float | None
    worker: str | None

    @property
    def overrides(self) -> dict[str, Any]:
        v = _loads(self.key, f"point {self.idx} of run {self.run_id}")
        return v if isinstance(v, dict) else {"point": v}

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "idx": self.idx,
            "point": self.overrides,
            "status": self.status,
            "result": self.result,
            "error": self.error,
            "started": self.started,
            "finished": self.finished,
            "elapsed_s": self.elapsed_s,
            "worker": self.worker,
        }


def _iso(t: float) -> str:
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))
    except (OverflowError, OSError, ValueError, TypeError):
        return "?"


def _loads(text: Any, what: str) -> Any:
    """A JSON column read back from the store: malformed or hostile text is a StoreError, not a crash."""
    if text is None:
        return None
    if not isinstance(text, str | bytes):
        raise StoreError(f"run store: {what} is not JSON text ({type(text).__name__})")
    try:
        return fileio.load_json(text if isinstance(text, str) else text.decode("utf-8", "replace"), what)
    except SpecError as e:
        raise StoreError(f"run store: {what} is damaged ({e.detail})") from None


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise StoreError(f"run store: {what} = {v!r} is not an integer (the store is damaged)")
    return v


def _num(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or v != v:
        raise StoreError(f"run store: {what} = {v!r} is not a number (the store is damaged)")
    return float(v)


class RunStore:
    """A SQLite run store (``RunStore("wanka.db")``); use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path = DEFAULT_DB, *, create: bool = True) -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_file():
            raise StoreError(f"--db {self.path}: not a regular file (a folder, pipe or device is not a run store)")
        if not create and not self.path.exists():
            raise StoreError(f"no run store at {self.path} (run `wanka sweep FILE --db {self.path}` first)")
        if self.path.parent and not self.path.parent.exists():
            raise StoreError(f"--db {self.path}: folder {self.path.parent} does not exist")
        try:
            self._db = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None)
            if self.path.exists() and self.path.stat().st_size > 0:
                # an existing file must already be a wanka run store: someone else's database is never changed
                tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if not {"meta", "runs", "points"} <= tables:
                    self._db.close()
                    raise StoreError(
                        f"--db {self.path} is a SQLite database but not a wanka run store; refusing to change it"
                    )
            self._db.execute("PRAGMA busy_timeout = 30000")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif str(row[0]) != str(SCHEMA_VERSION):
                raise StoreError(f"{self.path} has run-store schema {row[0]}; this wanka reads {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as e:
            raise StoreError(f"--db {self.path} is not a wanka run store ({e})") from None

    # ------------------------------------------------------------ lifecycle
    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ runs
    def latest_run(self, sweep_hash: str) -> RunInfo | None:
        row = self._db.execute(
            "SELECT id FROM runs WHERE sweep_hash = ? ORDER BY id DESC LIMIT 1", (sweep_hash,)
        ).fetchone()
        return self.run(int(row[0])) if row else None

    def create_run(
        self, *, sweep_id: str, sweep_hash: str, mode: str, spec: dict[str, Any], total: int, source: str | None
    ) -> RunInfo:
        now = time.time()
        with self._tx():
            cur = self._db.execute(
                "INSERT INTO runs (sweep_id, sweep_hash, source, mode, spec_json, total_points, created, updated,"
                " status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running')",
                (sweep_id, sweep_hash, source, mode, json.dumps(spec, ensure_ascii=False), total, now, now),
            )
        assert cur.lastrowid is not None
        return self.run(int(cur.lastrowid))

    def set_status(self, run_id: int, status: str) -> None:
        if status not in RUN_STATUSES:
            raise ValueError(status)
        with self._tx():
            self._db.execute("UPDATE runs SET status = ?, updated = ? WHERE id = ?", (status, time.time(), run_id))

    def runs(self) -> list[RunInfo]:
        ids = [int(r[0]) for r in self._db.execute("SELECT id FROM runs ORDER BY id")]
        return [self.run(i) for i in ids]

    def run(self, run_id: int) -> RunInfo:
        row = self._db.execute(
            "SELECT id, sweep_id, sweep_hash, source, mode, spec_json, total_points, created, updated, status "
            "FROM runs WHERE id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            raise StoreError(f"no run {run_id} in {self.path}; `wanka runs list --db {self.path}` shows the runs")
        counts = dict(
            self._db.execute("SELECT status, COUNT(*) FROM points WHERE run_id = ? GROUP BY status", (run_id,))
        )
        what = f"run {run_id}"
        spec = _loads(row[5], f"{what} spec")
        if not isinstance(spec, dict):
            raise StoreError(f"run store: {what} spec is not a mapping (the store is damaged)")
        return RunInfo(
            id=_int(row[0], f"{what} id"),
            sweep_id=str(row[1]),
            sweep_hash=str(row[2]),
            source=None if row[3] is None else str(row[3]),
            mode=str(row[4]),
            spec=spec,
            total_points=_int(row[6], f"{what} total_points"),
            done_points=int(counts.get("done", 0)),
            error_points=int(counts.get("error", 0)),
            created=_num(row[7], f"{what} created"),
            updated=_num(row[8], f"{what} updated"),
            status=str(row[9]),
        )

    # ------------------------------------------------------------ points
    def finished_keys(self, run_id: int, *, include_errors: bool = True) -> set[str]:
        q = "SELECT point_key FROM points WHERE run_id = ?" + ("" if include_errors else " AND status = 'done'")
        return {r[0] for r in self._db.execute(q, (run_id,))}

    def record_point(
        self,
        run_id: int,
        *,
        key: str,
        idx: int,
        status: str,
        result: dict[str, Any] | None = None,
        result_json: str | None = None,
        error: str | None = None,
        started: float | None = None,
        finished: float | None = None,
        elapsed_s: float | None = None,
        worker: str | None = None,
    ) -> None:
        """Commit one finished point (its own transaction; a later record of the same key replaces it).

        The result is given as a mapping or already serialised (``result_json``, as workers send it).
        """
        payload = result_json if result is None else json.dumps(result, ensure_ascii=False)
        with self._tx():
            self._db.execute(
                "INSERT INTO points (run_id, point_key, idx, status, result_json, error, started, finished,"
                " elapsed_s, worker) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (run_id, point_key) DO UPDATE SET status = excluded.status,"
                " result_json = excluded.result_json, error = excluded.error, started = excluded.started,"
                " finished = excluded.finished, elapsed_s = excluded.elapsed_s, worker = excluded.worker",
                (run_id, key, idx, status, payload, error, started, finished, elapsed_s, worker),
            )
            self._db.execute("UPDATE runs SET updated = ? WHERE id = ?", (time.time(), run_id))

    def points(self, run_id: int) -> list[PointRecord]:
        self.run(run_id)  # raises for an unknown run
        rows = self._db.execute(
            "SELECT run_id, point_key, idx, status, result_json, error, started, finished, elapsed_s, worker "
            "FROM points WHERE run_id = ? ORDER BY idx",
            (run_id,),
        )
        out = []
        for r in rows:
            what = f"point {r[2]} of run {run_id}"
            result = _loads(r[4], what) if r[4] else None
            if result is not None and not isinstance(result, dict):
                raise StoreError(f"run store: {what} result is not a mapping (the store is damaged)")
            _loads(r[1], f"{what} key")
            started, finished, elapsed = (None if x is None else _num(x, what) for x in r[6:9])
            out.append(
                PointRecord(
                    run_id=_int(r[0], what),
                    key=str(r[1]),
                    idx=_int(r[2], what),
                    status=str(r[3]),
                    result=result,
                    error=None if r[5] is None else str(r[5]),
                    started=started,
                    finished=finished,
                    elapsed_s=elapsed,
                    worker=None if r[9] is None else str(r[9]),
                )
            )
        return out

    # ------------------------------------------------------------ internals
    def _tx(self) -> _Tx:
        return _Tx(self._db)


class _Tx:
    """BEGIN IMMEDIATE … COMMIT (ROLLBACK on error) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.db.execute("ROLLBACK" if exc_type is not None else "COMMIT")
