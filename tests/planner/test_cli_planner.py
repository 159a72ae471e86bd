"""`wanka search`, `wanka sweep` and `wanka runs`: JSON contracts, text output, exit code 2 on bad input."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
from pathlib import Path

import pytest
import yaml

from wanka.cli import main

from .helpers import small_dict, write


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> object:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _fails(capsys: pytest.CaptureFixture[str], argv: list[str], *words: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for w in words:
        assert w in err, err


def test_search_json_is_a_list_of_strategies(capsys: pytest.CaptureFixture[str]) -> None:
    out = _json(capsys, ["search", "llama3-405b-16k-h100-54d", "--top", "3", "--json"])
    assert isinstance(out, list) and len(out) == 3
    for row in out:
        for k in (
            "tp",
            "pp",
            "dp",
            "cp",
            "ep",
            "vpp",
            "micro_batch",
            "recompute",
            "zero",
            "step_time_s",
            "mfu",
            "memory_bytes",
            "time_to_train_s",
            "reason",
        ):
            assert k in row
        assert row["tp"] * row["pp"] * row["dp"] * row["cp"] == 16384
    assert [r["rank"] for r in out] == [1, 2, 3]


def test_search_details_and_text(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = write(tmp_path / "s.yaml", yaml.safe_dump(small_dict(4)))
    d = _json(capsys, ["search", str(f), "--top", "2", "--gpus", "16", "--gpus", "32", "--json", "--details"])
    assert isinstance(d, dict) and d["gpus"] == [16, 32] and d["pareto_axes"] == ["gpus", "time_to_train_s"]
    assert main(["search", str(f), "--top", "2"]) == 0
    text = capsys.readouterr().out
    assert "searched" in text and "#1" in text and "best by time" in text


def test_search_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    _fails(capsys, ["search", "llama3-405b-16k-h100-54d", "--objective", "speed"], "objective", "time, cost, energy")
    _fails(capsys, ["search", "no-such-preset"], "unknown scenario")
    _fails(capsys, ["search", "llama3-405b-16k-h100-54d", "--gpus", "999999"], "gpus")


@pytest.fixture
def sweep_file(tmp_path: Path) -> Path:
    d = small_dict(4)
    d["parallel"] = {"tp": 2, "pp": 1, "dp": 16, "cp": 1}
    write(tmp_path / "base.yaml", yaml.safe_dump(d))
    body = "name: cli\nbase: base.yaml\naxes:\n  training.tokens: [1.0e+10, 2.0e+10, 3.0e+10]\n"
    return write(tmp_path / "sw.yaml", body)


def test_sweep_then_runs_list_show_export(capsys: pytest.CaptureFixture[str], sweep_file: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    out = _json(capsys, ["sweep", str(sweep_file), "--workers", "1", "--db", db, "--json", "--no-progress"])
    assert isinstance(out, dict) and out["computed"] == 3 and len(out["points"]) == 3
    assert main(["sweep", str(sweep_file), "--workers", "1", "--db", db, "--no-progress"]) == 0
    cap = capsys.readouterr()
    assert "(resumed)" in cap.out and "3 already stored" in cap.out
    runs = _json(capsys, ["runs", "list", "--db", db, "--json"])
    assert isinstance(runs, list) and len(runs) == 1 and runs[0]["status"] == "done" and runs[0]["done_points"] == 3
    shown = _json(capsys, ["runs", "show", "1", "--db", db, "--json"])
    assert isinstance(shown, dict) and len(shown["points"]) == 3
    assert main(["runs", "show", "1", "--db", db]) == 0 and "run 1" in capsys.readouterr().out
    assert main(["runs", "export", "1", "--db", db, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 3 and {"training.tokens", "status", "step_time_s", "tp"} <= set(rows[0])
    t = [float(r["time_to_train_s"]) for r in rows]
    assert t[1] / t[0] == pytest.approx(2.0) and t[2] / t[0] == pytest.approx(3.0)  # linear in tokens
    exported = _json(capsys, ["runs", "export", "1", "--db", db, "--json"])
    assert isinstance(exported, dict) and len(exported["points"]) == 3
    js = tmp_path / "out.json"
    assert main(["runs", "export", "1", "--db", db, "--format", "json", "--out", str(js)]) == 0
    assert len(json.loads(js.read_text())["points"]) == 3
    pq = tmp_path / "out.parquet"
    if importlib.util.find_spec("pyarrow") is None:
        argv = ["runs", "export", "1", "--db", db, "--format", "parquet", "--out", str(pq)]
        _fails(capsys, argv, "pip install pyarrow")
    else:
        assert main(["runs", "export", "1", "--db", db, "--format", "parquet", "--out", str(pq)]) == 0
        assert pq.stat().st_size > 0
    _fails(capsys, ["runs", "export", "1", "--db", db, "--format", "xlsx"], "--format", "csv, json, parquet")
    _fails(capsys, ["runs", "show", "99", "--db", db], "no run 99")


def test_sweep_and_runs_bad_input(capsys: pytest.CaptureFixture[str], sweep_file: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    _fails(capsys, ["sweep", str(sweep_file), "--executor", "dask", "--db", db], "--executor", "local, ray")
    _fails(capsys, ["sweep", str(sweep_file), "--workers", "0", "--db", db], "--workers")
    bad = write(tmp_path / "bad.yaml", "base: base.yaml\naxes:\n  cluster.fabric.nic_gbps: [200]\n")
    _fails(capsys, ["sweep", str(bad), "--db", db], "axes.cluster.fabric.nic_gbps", "nic_gbps_per_gpu", "line 3")
    empty = write(tmp_path / "empty.yaml", "base: base.yaml\naxes:\n  cluster.nodes: []\n")
    _fails(capsys, ["sweep", str(empty), "--db", db], "axes.cluster.nodes", "non-empty")
    _fails(capsys, ["sweep", str(tmp_path / "absent.yaml"), "--db", db], "no such sweep file")
    _fails(capsys, ["runs", "list", "--db", str(tmp_path / "missing.db")], "no run store")
    junk = write(tmp_path / "junk.db", "this is not sqlite, just text that is long enough to be a header" * 20)
    _fails(capsys, ["runs", "list", "--db", str(junk)], "not a wanka run store")
