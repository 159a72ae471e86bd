"""kill -9 in the middle of a sweep, then the same sweep again: nothing lost, nothing twice."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from wanka.planner import load_sweep, run_point

BIN = Path(sys.executable).parent
POINTS = 14

SWEEP = """name: kill-test
base: llama3-405b-16k-h100-54d
mode: reliability
reliability: {replicas: 6000, seed: 3}
axes:
  failures.rate_scale: [0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0]
  checkpoint.mode: [async, in_memory]
"""


def _stored(db: Path) -> dict[str, tuple[str, float]]:
    if not db.exists():
        return {}
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
            rows = c.execute("SELECT point_key, result_json, finished FROM points WHERE status = 'done'").fetchall()
    except sqlite3.OperationalError:  # the tables are not there yet
        return {}
    return {k: (r, f) for k, r, f in rows}


def _start(sweep: Path, db: Path, log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as err:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [str(BIN / "wanka"), "sweep", str(sweep), "--db", str(db), "--workers", "1", "--no-progress"],
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )


def test_kill_minus_nine_then_resume(tmp_path: Path) -> None:
    sweep = tmp_path / "kill.yaml"
    sweep.write_text(SWEEP, encoding="utf-8")
    db = tmp_path / "runs.db"
    log = tmp_path / "first.log"
    proc = _start(sweep, db, log)
    deadline = time.monotonic() + 90
    try:
        while len(_stored(db)) < 3:
            assert proc.poll() is None, log.read_text(errors="replace")[-2000:]
            assert time.monotonic() < deadline, "the sweep stored no points in 90 s"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep, its forkserver and its worker: one session
        proc.wait(timeout=10)
    before = _stored(db)
    assert 3 <= len(before) < POINTS, "the sweep finished before it could be killed"
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert c.execute("SELECT status FROM runs").fetchall() == [("running",)]  # killed, never closed

    p = subprocess.run(
        [str(BIN / "wanka"), "sweep", str(sweep), "--db", str(db), "--workers", "1", "--no-progress", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout)
    assert out["resumed"] is True
    assert out["skipped"] >= len(before) and out["skipped"] + out["computed"] == POINTS

    after = _stored(db)
    with sqlite3.connect(db) as c:
        n, distinct = c.execute("SELECT COUNT(*), COUNT(DISTINCT point_key) FROM points").fetchone()
        runs = c.execute("SELECT id, status FROM runs").fetchall()
    assert n == distinct == POINTS == len(after)  # none lost, none twice
    assert runs == [(1, "done")]  # the same run was resumed, not a second one started
    for k, v in before.items():
        assert after[k] == v  # points stored before the kill were kept, not recomputed
    # a point computed after the resume is what a fresh, uninterrupted computation gives
    spec = load_sweep(sweep)
    idx, over = next(
        (i, o)
        for i, o in enumerate(spec.points())
        if json.dumps(o, sort_keys=True, separators=(",", ":")) not in before
    )
    fresh = run_point(spec.job, idx, over)
    assert json.loads(after[fresh.key][0]) == fresh.result
