"""A real Ray head on 127.0.0.1: a sweep on it gives exactly the local executor's results.

The head is started with ``ray start --head --block`` in its own session and torn down by
signalling that process (SIGTERM makes ``ray start --block`` stop everything it started; SIGKILL to
its process group if anything is left). ``ray stop`` is not used: it kills every Ray process on the
machine by name, including other people's.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from .helpers import small_dict, write

pytestmark = pytest.mark.ray

BIN = Path(sys.executable).parent
RAY = BIN / "ray"
WANKA = BIN / "wanka"
START_TIMEOUT_S = 90


# ports `ray start` pre-selects unless told otherwise: the dashboard (8265), the dashboard agent's HTTP
# server (52365) and the workers' range (10002-19999); a GCS port the OS hands out among them makes Ray
# refuse to start ("trying to use a port number 52365 that is used by other components")
_RAY_FIXED = frozenset({8265, 52365}) | frozenset(range(10002, 20000))


def _free_port(avoid: frozenset[int] = frozenset()) -> int:
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _RAY_FIXED and port not in avoid:
            return port


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    # Ray >= 2.5x turns on token authentication when a token file exists (~/.ray/auth_token, written by
    # any earlier `ray.init()`); head and driver must agree, so this private test cluster runs without
    env["RAY_AUTH_MODE"] = "disabled"
    return env


@pytest.fixture(scope="module")
def ray_head() -> Iterator[str]:
    pytest.importorskip("ray", reason="the ray package is not installed (pip install 'wanka[ray]')")
    if not RAY.exists():
        pytest.skip(f"no ray command next to {sys.executable}")
    port = _free_port()
    agent = _free_port(frozenset({port}))  # not 52365: another Ray on the machine may hold it
    tmp = tempfile.mkdtemp(prefix="wkray", dir="/tmp")  # short: Ray's socket paths must stay < 108 bytes
    log = open(Path(tmp) / "head.log", "w+b")  # noqa: SIM115 - closed in the teardown
    cmd = [
        str(RAY),
        "start",
        "--head",
        f"--port={port}",
        f"--dashboard-agent-listen-port={agent}",
        "--num-cpus=1",
        "--include-dashboard=false",
        "--node-ip-address=127.0.0.1",
        "--object-store-memory=100000000",
        f"--temp-dir={tmp}/r",
        "--block",
        "--disable-usage-stats",
    ]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=_env(), start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while b"Ray runtime started" not in Path(log.name).read_bytes():
            if proc.poll() is not None:
                pytest.fail("ray start exited:\n" + Path(log.name).read_text(errors="replace")[-3000:])
            if time.monotonic() > deadline:
                pytest.fail(f"the Ray head did not start within {START_TIMEOUT_S} s")
            time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # our own session: whatever is left of this head
        proc.wait(timeout=10)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _sweep(tmp_path: Path) -> Path:
    d = small_dict(4)
    d["parallel"] = {"tp": 2, "pp": 1, "dp": 16, "cp": 1}
    write(tmp_path / "base.yaml", yaml.safe_dump(d))
    return write(
        tmp_path / "sweep.yaml",
        "base: base.yaml\nmode: plan\naxes:\n  training.tokens: [1.0e+10, 2.0e+10]\n  cluster.nodes: [4, 8]\n",
    )


def _run(args: list[str]) -> dict[str, object]:
    p = subprocess.run(
        [str(WANKA), *args, "--json", "--no-progress"], capture_output=True, text=True, timeout=180, env=_env()
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)  # type: ignore[no-any-return]


def test_sweep_on_a_ray_head_matches_the_local_executor(ray_head: str, tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    on_ray = _run(["sweep", str(sweep), "--ray-address", ray_head, "--db", str(tmp_path / "ray.db")])
    local = _run(["sweep", str(sweep), "--executor", "local", "--workers", "1", "--db", str(tmp_path / "l.db")])
    assert str(on_ray["executor"]).startswith("ray at 127.0.0.1")
    assert on_ray["computed"] == local["computed"] == 4
    rows_ray = _rows(tmp_path / "ray.db")
    rows_local = _rows(tmp_path / "l.db")
    assert rows_ray.keys() == rows_local.keys() and len(rows_ray) == 4
    for k in rows_ray:
        assert rows_ray[k] == rows_local[k]  # the full stored result JSON, point by point
    workers = _workers(tmp_path / "ray.db")
    assert len(workers) == 4 and all(":" in w for w in workers)  # host:pid of the Ray worker


def _rows(db: Path) -> dict[str, str]:
    import sqlite3

    with sqlite3.connect(db) as c:
        return dict(c.execute("SELECT point_key, result_json FROM points WHERE status = 'done'"))


def _workers(db: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(db) as c:
        return [r[0] for r in c.execute("SELECT worker FROM points")]


def test_unreachable_ray_address_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="the ray package is not installed")
    sweep = _sweep(tmp_path)
    p = subprocess.run(
        [
            str(WANKA),
            "sweep",
            str(sweep),
            "--ray-address",
            f"127.0.0.1:{_free_port()}",
            "--db",
            str(tmp_path / "x.db"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
    )
    assert p.returncode == 2
    assert "cannot reach a Ray head" in p.stderr and "Traceback" not in p.stderr
