"""Every face gets its answer from the one service (wanka.service.assess) and the one picker.

`plan`, `reliability`, `facility` and `storage` print what assess() returns for the same scenario;
`plan`, `reliability`, `facility`, `compare` and the HTTP API agree on the strategy and the ETTR.
The scenario gives no strategy, so each face must pick it (preset ``search``: its own GPU count).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wanka.cli import main
from wanka.planner.pick import pick_strategy, with_strategy
from wanka.planner.presets import search_preset
from wanka.service import assess
from wanka.spec import load_scenario

REPLICAS = 30
SEED = 3


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    f = tmp_path_factory.mktemp("faces") / "nostrategy.yaml"
    f.write_text("base: traditional-512-a100\nname: no-strategy\nparallel: null\n", encoding="utf-8")
    return f


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def _strategy(d: dict[str, Any]) -> tuple[int, ...]:
    return tuple(d[k] for k in ("tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "zero"))


def test_with_strategy_is_the_search_preset(scenario_file: Path) -> None:
    s = load_scenario(str(scenario_file))
    picked, chosen = with_strategy(s)
    best = search_preset(s, "search").top[0]
    assert chosen and picked.parallel == best.parallel_spec() and picked.gpus == best.gpus == s.gpus
    assert pick_strategy(s)[0] == picked  # one code path (and one cached search)


def test_plan_matches_the_service(scenario_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, "plan", str(scenario_file), "--json")
    a = assess(load_scenario(str(scenario_file)), ("engine", "storage"), preset="search")
    assert a.step is not None and a.checkpoint is not None and a.strategy is not None and a.strategy.searched
    assert d["step_time_s"] == a.step.step_time_s and d["mfu"] == a.step.mfu
    assert _strategy(d["strategy"]) == _strategy(a.step.strategy)
    assert d["checkpoint"]["size_bytes"] == a.checkpoint.size_bytes
    assert d["strategy_from"].startswith("wanka search")


def test_reliability_matches_the_service(scenario_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, "reliability", str(scenario_file), "--json", "--replicas", str(REPLICAS), "--seed", str(SEED))
    a = assess(load_scenario(str(scenario_file)), ("engine", "ops"), preset="search", seed=SEED, replicas=REPLICAS)
    assert a.campaign is not None and a.step is not None
    want = a.campaign.to_dict()
    assert d["ettr"] == want["ettr"] and d["wall_clock_s"] == want["wall_clock_s"]
    assert d["step_time_s"] == pytest.approx(a.step.step_time_s) and d["step_time_from"] == "engine"


def test_facility_matches_the_service(scenario_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, "facility", str(scenario_file), "--json")
    a = assess(load_scenario(str(scenario_file)), ("engine", "ops", "facility"), preset="search", replicas=200)
    assert a.facility is not None and a.campaign is not None and a.step is not None
    assert d["energy_j"] == a.facility.energy_j and d["utilization"] == pytest.approx(a.step.mfu)
    assert d["wall_clock_s"] == pytest.approx(float(a.campaign.wall_clock_s.mean))


def test_storage_matches_the_service(scenario_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, "storage", str(scenario_file), "--json")
    a = assess(load_scenario(str(scenario_file)), ("engine", "storage"), preset="search")
    assert a.data_read is not None and set(a.checkpoint_modes) == {"sync", "async", "in_memory"}
    assert d["checkpoint"] == {m: io.to_dict() for m, io in a.checkpoint_modes.items()}
    assert d["data_read"]["demand"] == a.data_read.to_dict()["demand"]


def test_every_face_agrees_on_strategy_and_ettr(scenario_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n = str(REPLICAS)
    plan = _json(capsys, "plan", str(scenario_file), "--json")
    rel = _json(capsys, "reliability", str(scenario_file), "--json", "--replicas", n, "--seed", "0")
    fac = _json(capsys, "facility", str(scenario_file), "--json")
    cmp = _json(capsys, "compare", str(scenario_file), "--json", "--replicas", n, "--seed", "0")
    (c,) = cmp["clusters"]
    strategy = _strategy(plan["strategy"])
    assert _strategy(c["job"]["strategy"]) == strategy and c["job"]["strategy_source"] == "picked"
    assert c["reliability"]["ettr"] == rel["ettr"]["mean"]
    assert c["efficiency"]["mfu"] == plan["mfu"] == pytest.approx(fac["utilization"])
    fastapi = pytest.importorskip("fastapi", reason="the web extra is not installed")
    from fastapi.testclient import TestClient

    from wanka.web import create_app

    del fastapi
    inline = {"base": "traditional-512-a100", "parallel": None}
    with TestClient(create_app(scenario_file.parent / "runs.db")) as client:
        r = client.post(
            "/api/reliability", json={"scenario": inline, "preset": "search", "replicas": REPLICAS, "seed": 0}
        )
        assert r.status_code == 200, r.text
        api = r.json()
    assert _strategy(api["engine"]["strategy"]) == strategy
    assert api["ops"]["ettr"]["mean"] == rel["ettr"]["mean"]


def test_terminal_compare_keeps_the_conclusion_without_what_ifs(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, "compare", "traditional-512-a100", "meta-24k-h100-roce", "--json", "--replicas", "10")
    st = d["story"]
    assert st["what_ifs"] is False and "superpod" not in st and "moe" not in st
    assert st["headline"]["to"]["ettr"] == d["clusters"][1]["reliability"]["ettr"]
    assert [x["name"] for x in st["storage"]] == [c["name"] for c in d["clusters"]]
    assert main(["compare", "traditional-512-a100", "meta-24k-h100-roce", "--replicas", "10"]) == 0
    assert "From traditional-512-a100 to meta-24k-h100-roce" in capsys.readouterr().out
