"""The HTTP API through the test client: same numbers and same validation as the CLI."""

from __future__ import annotations

import json
from typing import Any

import pytest

from wanka.cli import main
from wanka.engine import estimate_step
from wanka.spec import load_scenario


def _loc(r: Any) -> list[Any]:
    return r.json()["detail"][0]["loc"]


def test_plan_matches_the_engine(client: Any) -> None:
    r = client.post("/api/plan", json={"scenario": "meta-24k-h100-roce"})
    assert r.status_code == 200
    d = r.json()
    ref = estimate_step(load_scenario("meta-24k-h100-roce"))
    assert d["engine"]["step_time_s"] == pytest.approx(ref.step_time_s)
    assert d["engine"]["mfu"] == pytest.approx(ref.mfu)
    assert d["storage"]["checkpoint"]["size_bytes"] > 0
    assert any(a["origin"] == "preset" for a in d["assumptions"])


def test_plan_same_as_cli_json(client: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "traditional-512-a100", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    d = client.post("/api/plan", json={"scenario": "traditional-512-a100"}).json()
    assert d["engine"]["step_time_s"] == pytest.approx(cli["step_time_s"])
    assert d["engine"]["strategy"] == cli["strategy"]


def test_override_knob_changes_the_result(client: Any) -> None:
    base = client.post("/api/plan", json={"scenario": "traditional-512-a100"}).json()
    slow = client.post(
        "/api/plan", json={"scenario": "traditional-512-a100", "set": {"cluster.fabric.nic_gbps_per_gpu": 25}}
    ).json()
    assert slow["engine"]["breakdown_s"]["dp_comm"] > base["engine"]["breakdown_s"]["dp_comm"]
    assert slow["scenario_spec"]["cluster"]["fabric"]["nic_gbps_per_gpu"] == 25


def test_a_bad_field_is_a_422_naming_it(client: Any, capsys: pytest.CaptureFixture[str]) -> None:
    r = client.post("/api/plan", json={"scenario": "traditional-512-a100", "set": {"cluster.nodes": -4}})
    assert r.status_code == 422
    assert _loc(r)[-2:] == ["cluster", "nodes"] and "cluster.nodes" in r.json()["detail"][0]["msg"]
    r = client.post("/api/plan", json={"scenario": {"cluster": {"accelerator": "H100", "nodes": 2, "colour": 1}}})
    assert r.status_code == 422 and "colour" in json.dumps(r.json())
    r = client.post("/api/plan", json={"scenario": "traditional-512-a100", "nonsense": 1})
    assert r.status_code == 422 and _loc(r)[-1] == "nonsense"
    r = client.post("/api/plan", json={"scenario": 5})
    assert r.status_code == 422


def test_no_endpoint_reads_a_client_named_path(client: Any, tmp_path: Any) -> None:
    secret = tmp_path / "s.yaml"
    secret.write_text("cluster: {accelerator: H100, nodes: 1}\n")
    for body in (
        {"scenario": str(secret)},
        {"scenario": {"base": str(secret)}},
        {"scenario": "traditional-512-a100", "set": {"model": str(secret)}},
        {"scenario": {"base": "traditional-512-a100", "model": {"base": "../../etc/passwd"}}},
    ):
        r = client.post("/api/plan", json=body)
        assert r.status_code == 422, body
        assert "paths are not read" in r.json()["detail"][0]["msg"]
    r = client.post("/api/compare", json={"scenarios": ["traditional-512-a100"], "job": str(secret)})
    assert r.status_code == 422 and _loc(r)[-1] == "job"


def test_search_reliability_facility_storage_fabric(client: Any) -> None:
    s = {"scenario": "traditional-512-a100"}
    r = client.post("/api/search", json={**s, "top": 3, "preset": "search"})
    assert r.status_code == 200 and len(r.json()["strategies"]) == 3
    assert r.json()["strategies"][0]["rank"] == 1
    r = client.post("/api/reliability", json={**s, "replicas": 20})
    d = r.json()
    assert r.status_code == 200 and 0 < d["ops"]["ettr"]["mean"] <= 1
    r = client.post("/api/facility", json={**s, "replicas": 20})
    assert r.status_code == 200 and r.json()["facility"]["facility_power_w"] > r.json()["facility"]["it_power_w"]
    r = client.post("/api/storage", json=s)
    assert r.status_code == 200 and set(r.json()["storage"]["modes"]) == {"sync", "async", "in_memory"}
    r = client.post("/api/fabric", json=s)
    assert r.status_code == 200 and r.json()["network"]["switches"]["total"] > 0
    r = client.post("/api/search", json={**s, "gpus": [1024]})
    assert r.status_code == 422 and _loc(r)[-1] == "0"


def test_collective(client: Any) -> None:
    r = client.post("/api/collective", json={"op": "all_reduce", "bytes": 2**30, "gpus": 64})
    assert r.status_code == 200
    d = r.json()
    # nccl-tests convention: busbw = algbw * 2 (n-1) / n for all-reduce
    assert d["busbw_bytes_per_s"] == pytest.approx(d["algbw_bytes_per_s"] * 2 * 63 / 64, rel=1e-9)
    assert client.post("/api/collective", json={"op": "gossip", "gpus": 8}).status_code == 422
    assert client.post("/api/collective", json={"bytes": 1e30}).status_code == 422
    # a forced algorithm (NCCL_ALGO): by wanka's or NCCL's name; one the group cannot run is a 4xx naming it
    ring = client.post("/api/collective", json={"gpus": 64, "algorithm": "Ring"})
    tree = client.post("/api/collective", json={"gpus": 64, "algorithm": "tree"})
    assert ring.status_code == tree.status_code == 200
    assert (ring.json()["algorithm"], tree.json()["algorithm"]) == ("ring", "tree")
    assert ring.json()["time_s"] != tree.json()["time_s"]
    for bad in ({"gpus": 64, "algorithm": "CollNetChain"}, {"gpus": 8, "algorithm": "tree"}, {"algorithm": "bruck"}):
        r = client.post("/api/collective", json=bad)
        assert r.status_code == 422 and "algorithm" in r.text, bad


def test_presets_catalog_model_import(client: Any) -> None:
    p = client.get("/api/presets").json()
    assert "meta-24k-h100-roce" in p["scenarios"] and "llama3-70b" in p["models"]
    assert {x["name"] for x in p["search"]} == {"search", "place", "quick"}
    assert client.get("/api/presets/traditional-512-a100").json()["cluster"]["nodes"] == 64
    assert client.get("/api/presets/..%2F..%2Fetc").status_code in (404, 422)
    c = client.get("/api/catalog", params={"kind": "accelerators"}).json()
    assert all(e.get("source") for e in c["accelerators"])
    assert client.get("/api/catalog", params={"kind": "cheese"}).status_code == 422
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "max_position_embeddings": 8192,
    }
    r = client.post("/api/model/import?name=my-8b", content=json.dumps(cfg))
    assert r.status_code == 200, r.text
    assert r.json()["model"]["name"] == "my-8b" and 7.5e9 < r.json()["params"] < 8.5e9
    r = client.post("/api/model/import", content=json.dumps({**cfg, "hidden_size": "big"}))
    assert r.status_code == 422 and "hidden_size" in r.json()["detail"][0]["msg"]
    assert client.post("/api/model/import", content=b"{not json").status_code == 422


def test_run_store_endpoints(client: Any) -> None:
    before = client.get("/api/runs").json()
    r = client.post("/api/runs", json={"scenario": "traditional-512-a100"})
    assert r.status_code == 200
    rid = r.json()["id"]
    runs = client.get("/api/runs").json()
    assert len(runs) == len(before) + 1
    one = client.get(f"/api/runs/{rid}").json()
    assert one["run"]["mode"] == "plan" and one["points"][0]["result"]["mfu"] > 0
    assert client.get("/api/runs/999999").status_code == 404
    assert client.get("/api/runs/abc").status_code == 422


def test_compare_and_claims(client: Any) -> None:
    r = client.post("/api/compare", json={"scenarios": ["traditional-512-a100"], "replicas": 10})
    assert r.status_code == 200 and r.json()["clusters"][0]["efficiency"]["mfu"] > 0
    assert client.post("/api/compare", json={"scenarios": ["traditional-512-a100"] * 5}).status_code == 422
    r = client.get("/api/claims", params={"ids": "meta-24k"})
    assert r.status_code == 200 and r.json()[0]["verdict"] == "consistent"
    r = client.get("/api/claims", params={"ids": "no-such-claim"})
    assert r.status_code == 422


def test_openapi_and_docs_are_local(client: Any) -> None:
    spec = client.get("/openapi.json").json()
    for path in (
        "/api/plan",
        "/api/search",
        "/api/reliability",
        "/api/facility",
        "/api/storage",
        "/api/fabric",
        "/api/collective",
        "/api/compare",
        "/api/claims",
        "/api/presets",
        "/api/catalog",
        "/api/model/import",
        "/api/runs",
    ):
        assert path in spec["paths"], path
    html = client.get("/docs").text
    assert "/docs-assets/swagger-ui-bundle.js" in html and "cdn" not in html.lower()
    assert client.get("/docs-assets/swagger-ui-bundle.js").status_code == 200


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["serve", "--port", "0"], "--port"),
        (["serve", "--port", "70000"], "--port"),
        (["serve", "--db", "/no/such/folder/runs.db"], "--db"),
    ],
)
def test_serve_bad_options_exit_2(argv: list[str], field: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and field in err and "Traceback" not in err


def test_planner_page_resizing_the_cluster_searches_a_strategy(client: Any) -> None:
    r = client.get("/planner?preset=traditional-512-a100&cluster.nodes=32&strategy=scenario")
    assert r.status_code == 200 and 'id="h-mfu"' in r.text
    assert "256 GPU" in r.text  # the job fits the smaller cluster
    r = client.get("/planner?preset=traditional-512-a100&cluster.nodes=abc")
    assert r.status_code == 422 and "cluster.nodes" in r.text


def test_long_work_hits_the_time_limit_not_the_event_loop() -> None:
    import threading
    import time

    import anyio
    from fastapi import HTTPException

    from wanka.web.runtime import offload

    release = threading.Event()

    async def main() -> tuple[int, float, bool]:
        t0 = time.perf_counter()
        ticks = 0

        async def ticker() -> None:  # the event loop keeps running while the work blocks a thread
            nonlocal ticks
            while ticks < 1000:
                ticks += 1
                await anyio.sleep(0.01)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            try:
                await offload(lambda: release.wait(5.0), limit_s=0.3)
            except HTTPException as e:
                code = e.status_code
            tg.cancel_scope.cancel()
        release.set()
        return code, time.perf_counter() - t0, ticks > 5

    code, dt, loop_alive = anyio.run(main)
    assert code == 504 and dt < 2.0 and loop_alive
