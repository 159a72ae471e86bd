from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from wanka.cli import main

from .conftest import LLAMA3_MODEL


def _file(tmp_path: Path) -> str:
    import yaml

    p = tmp_path / "s.yaml"
    p.write_text(
        yaml.safe_dump(
            {
                "name": "t",
                "cluster": {"accelerator": "H100", "nodes": 64},
                "model": LLAMA3_MODEL | {"n_layers": 8},
                "campaign_days": 7.0,
                "failures": {"hot_spares": 2},
            }
        )
    )
    return str(p)


def test_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reliability", _file(tmp_path), "--step-time", "5", "--replicas", "50", "--seed", "1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    for k in ("mean", "p5", "p95"):
        assert d["interruptions"][k] >= 0 and 0 < d["ettr"][k] <= 1
    assert d["unexpected_interruptions"]["mean"] >= 0
    assert d["wall_clock_s"] == 7 * 86400
    assert d["optimal_checkpoint_interval_s"] > 0
    assert "faulty_gpu" in d["by_cause"] and "planned" in d["by_cause"]


def test_table_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reliability", _file(tmp_path), "--step-time", "5", "--replicas", "20"]) == 0
    assert "ETTR" in capsys.readouterr().out
    assert main(["reliability", _file(tmp_path), "--step-time", "-2"]) == 2
    assert "--step-time" in capsys.readouterr().err
    assert main(["reliability", _file(tmp_path), "--step-time", "5", "--replicas", "0"]) == 2
    assert main(["reliability", _file(tmp_path), "--step-time", "5", "--plot", "x.pdf"]) == 2


def test_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ettr.svg"
    rc = main(["reliability", _file(tmp_path), "--step-time", "5", "--replicas", "20", "--plot", str(out)])
    if importlib.util.find_spec("matplotlib") is None:
        assert rc == 2 and "wanka[report]" in capsys.readouterr().err
    else:
        assert rc == 0 and out.stat().st_size > 1000
