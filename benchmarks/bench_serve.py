"""Load on `wanka serve` (loopback only, bounded): C concurrent clients × R plan requests each.

Starts `wanka serve` on 127.0.0.1 (a free port, a temporary run store), warms it with one request per
scenario, then runs the clients as threads with one keep-alive HTTP connection each, and prints the
latency p50/p99, throughput and errors; also the single-client (unloaded) latency of a warm plan.

    python -m benchmarks.bench_serve [--clients 50] [--requests 20]

Bounded: at most 200 clients × 200 requests, every request has a 60 s timeout.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SCENARIOS = ("traditional-512-a100", "meta-24k-h100-roce", "gpt4-25k-a100", "huawei-ascend-16k")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(port: int, db: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "wanka", "serve", "--port", str(port), "--db", str(db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(300):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/api/presets")
            if c.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("wanka serve did not start")


def _plan(conn: http.client.HTTPConnection, body: bytes) -> tuple[float, int]:
    t0 = time.perf_counter()
    conn.request("POST", "/api/plan", body=body, headers={"content-type": "application/json"})
    r = conn.getresponse()
    r.read()
    return time.perf_counter() - t0, r.status


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def main(clients: int = 50, requests: int = 20) -> dict[str, float]:
    clients, requests = min(clients, 200), min(requests, 200)
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        proc = _start(port, Path(tmp) / "runs.db")
        try:
            bodies = [json.dumps({"scenario": s}).encode() for s in SCENARIOS]
            warm = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            for b in bodies:
                _plan(warm, b)
            single = [_plan(warm, bodies[i % len(bodies)])[0] for i in range(40)]
            # uncached: a different NIC speed each time, so every request runs the engine
            fresh = [
                _plan(
                    warm,
                    json.dumps(
                        {"scenario": SCENARIOS[1], "set": {"cluster.fabric.nic_gbps_per_gpu": 100.0 + i}}
                    ).encode(),
                )[0]
                for i in range(20)
            ]
            lat: list[float] = []
            errors = 0
            lock = threading.Lock()

            def client(k: int) -> None:
                nonlocal errors
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                mine, bad = [], 0
                for i in range(requests):
                    try:
                        dt, status = _plan(conn, bodies[(k + i) % len(bodies)])
                    except OSError:
                        bad += 1
                        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                        continue
                    mine.append(dt)
                    bad += status != 200
                with lock:
                    lat.extend(mine)
                    errors += bad

            t0 = time.perf_counter()
            threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - t0
        finally:
            proc.terminate()
            proc.wait(10)
    out = {
        "single_p50_ms": 1e3 * statistics.median(single),
        "single_uncached_p50_ms": 1e3 * statistics.median(fresh),
        "load_p50_ms": 1e3 * _pct(lat, 0.50),
        "load_p99_ms": 1e3 * _pct(lat, 0.99),
        "requests": float(len(lat)),
        "errors": float(errors),
        "throughput_rps": len(lat) / wall,
    }
    print(
        f"plan, warm server, one client: p50 {out['single_p50_ms']:.1f} ms (cached scenario), "
        f"{out['single_uncached_p50_ms']:.1f} ms (new scenario each time)"
    )
    print(
        f"{clients} clients x {requests} plan requests: p50 {out['load_p50_ms']:.0f} ms, "
        f"p99 {out['load_p99_ms']:.0f} ms, "
        f"{out['throughput_rps']:.0f} req/s, {int(out['errors'])} errors of {int(out['requests'])}"
    )
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--requests", type=int, default=20)
    a = ap.parse_args()
    main(a.clients, a.requests)
