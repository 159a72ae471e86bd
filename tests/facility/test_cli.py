from __future__ import annotations

import json
from pathlib import Path

import pytest

from wanka.cli import main

BLOOM = str(Path(__file__).parent / "data" / "bloom-176b.yaml")


def test_facility_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["facility", BLOOM, "--json", "--utilization", "0.5", "--days", "118"]) == 0
    d = json.loads(capsys.readouterr().out)
    for k in (
        "it_power_w",
        "facility_power_w",
        "pue",
        "racks",
        "rack_power_w",
        "energy_j",
        "energy_cost",
        "co2_kg",
    ):
        assert d[k] is not None and d[k] > 0
    assert d["wall_clock_s"] == 118 * 86400
    assert abs(d["accelerator_energy_j"] - 433_196 * 3.6e6) / (433_196 * 3.6e6) < 0.25


def test_facility_table_and_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["facility", BLOOM]) == 0
    assert "racks" in capsys.readouterr().out
    assert main(["facility", BLOOM, "--utilization", "2"]) == 2
    assert "utilization" in capsys.readouterr().err
    assert main(["facility", BLOOM, "--days", "-1"]) == 2


def test_storage_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["storage", BLOOM, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    sync, asy = d["checkpoint"]["sync"], d["checkpoint"]["async"]
    assert sync["size_bytes"] == asy["size_bytes"] > 2e12
    assert sync["blocking_s"] >= asy["blocking_s"]
    assert d["data_read"]["ok"] is True


def test_facility_energy_counts_time_lost_to_failures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "meta-24k-h100-roce", "--json"]) == 0
    steady = json.loads(capsys.readouterr().out)["time_to_train_s"]
    assert main(["facility", "meta-24k-h100-roce", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert "wanka.ops" in d["wall_clock_from"]
    # failures, restarts and checkpoints make the campaign longer than the steady-state time
    assert steady < d["wall_clock_s"] < 1.5 * steady
