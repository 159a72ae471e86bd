"""``wanka fabric`` and ``wanka collective`` through the CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wanka.cli import main


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:  # type: ignore[type-arg]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_fabric_presets_show_the_difference(capsys: pytest.CaptureFixture[str]) -> None:
    meta = _json(capsys, ["fabric", "meta-24k-h100-roce", "--json"])
    trad = _json(capsys, ["fabric", "traditional-512-a100", "--json"])
    for d in (meta, trad):
        assert {"switches", "optics", "bisection_bytes_per_s", "max_accelerators_for_tiers"} <= d.keys()
        assert d["switches"]["total"] == sum(v for k, v in d["switches"].items() if k != "total")
    assert meta["tiers"] == 3 and trad["tiers"] == 2 and "core" in meta["switches"]
    assert meta["switches"]["total"] > trad["switches"]["total"]
    assert meta["optics"]["total"] > trad["optics"]["total"]
    assert meta["network_power_w"] > trad["network_power_w"]
    assert main(["fabric", "traditional-512-a100"]) == 0
    out = capsys.readouterr().out
    assert "2-tier" in out and "QM8700" in out and "bisection" in out


def test_fabric_from_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(
        "cluster:\n  accelerator: H100-SXM5-80GB\n  nodes: 512\n  fabric:\n    tiers: 3\n    switch: QM9700\n",
        encoding="utf-8",
    )
    d = _json(capsys, ["fabric", str(f), "--json"])
    assert d["switches"]["leaf"] == 128 and d["max_accelerators_for_tiers"]["2"] == 2048
    f.write_text(
        "cluster:\n  accelerator: H100-SXM5-80GB\n  nodes: 512\n  fabric:\n    tiers: 2\n    switch: QM9700\n",
        encoding="utf-8",
    )
    assert main(["fabric", str(f)]) == 2
    assert "fabric.tiers" in capsys.readouterr().err


def test_collective_default_cluster_and_sweep(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, ["collective", "--op", "all_reduce", "--bytes", "8GiB", "--gpus", "8", "--json"])
    assert d["default_cluster"] and d["ranks"] == 8
    assert 300e9 < d["busbw_bytes_per_s"] < 400e9  # DGX H100 NVLink ring ~370 GB/s (nccl-tests#212)
    d = _json(capsys, ["collective", "--op", "all_gather", "--gpus", "64", "--sweep", "--json"])
    assert len(d["sweep"]["rows"]) == 31
    assert main(["collective", "--op", "all_reduce", "--gpus", "16"]) == 0
    assert "DGX-H100-like" in capsys.readouterr().out


def test_collective_flow_reports_both_routings(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(
        capsys,
        [
            "collective",
            "--op",
            "all_reduce",
            "--bytes",
            "256MiB",
            "--gpus",
            "1024",
            "--flow",
            "--placement",
            "random",
            "--json",
        ],
    )
    f = d["flow"]
    assert {"ecmp", "adaptive"} <= f.keys()
    assert f["adaptive"]["slowdown"] <= f["ecmp"]["slowdown"] * 1.02
    assert f["ecmp"]["time_with_contention_s"] >= d["time_s"] * (1 - 1e-9)
    d = _json(capsys, ["collective", "--op", "all_to_all", "--gpus", "64", "--flow", "--routing", "ecmp", "--json"])
    assert set(d["flow"]) >= {"ecmp"} and "adaptive" not in d["flow"]
    assert main(["collective", "--op", "all_to_all", "--gpus", "64", "--flow"]) == 0
    assert "hottest" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["collective", "--op", "allreduce"], "--op"),
        (["collective", "--bytes", "lots"], "--bytes"),
        (["collective", "--routing", "spray"], "--routing"),
        (["collective", "--gpus", "0"], "--gpus"),
    ],
)
def test_collective_errors(argv: list[str], field: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert field in capsys.readouterr().err
