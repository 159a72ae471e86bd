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

from wanka.errors import WankaError

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
        v = json.loads(self.key)
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
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))


class RunStore:
    """A SQLite run store (``RunStore("wanka.db")``); use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path = DEFAULT_DB, *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.exists():
            raise StoreError(f"no run store at {self.path} (run `wanka sweep FILE --db {self.path}` first)")
        if self.path.parent and not self.path.parent.exists():
            raise StoreError(f"--db {self.path}: folder {self.path.parent} does not exist")
        try:
            self._db = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None)
            self._db.execute("PRAGMA busy_timeout = 30000")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) != SCHEMA_VERSION:
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
        return RunInfo(
            id=row[0],
            sweep_id=row[1],
            sweep_hash=row[2],
            source=row[3],
            mode=row[4],
            spec=json.loads(row[5]),
            total_points=row[6],
            done_points=int(counts.get("done", 0)),
            error_points=int(counts.get("error", 0)),
            created=row[7],
            updated=row[8],
            status=row[9],
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
        return [PointRecord(r[0], r[1], r[2], r[3], json.loads(r[4]) if r[4] else None, *r[5:]) for r in rows]

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
