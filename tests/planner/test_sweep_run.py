"""Running sweeps on the local process pool into the run store: results, resume, errors, modes."""

from __future__ import annotations

from pathlib import Path

import yaml

from wanka.planner import LocalExecutor, load_sweep, make_executor, run_point, run_sweep
from wanka.store import RunStore

from .helpers import small_dict, write


def _files(tmp_path: Path, body: str) -> Path:
    d = small_dict(4)
    d["parallel"] = {"tp": 2, "pp": 1, "dp": 16, "cp": 1}
    write(tmp_path / "base.yaml", yaml.safe_dump(d))
    return write(tmp_path / "sweep.yaml", "base: base.yaml\n" + body)


PLAN = """name: plan-test
mode: plan
axes:
  training.tokens: [1.0e+10, 2.0e+10, 4.0e+10]
  cluster.nodes: [4, 8]
"""


def test_plan_sweep_matches_serial_points_and_resumes(tmp_path: Path, executor: LocalExecutor) -> None:
    spec = load_sweep(_files(tmp_path, PLAN))
    seen: list[int] = []
    with RunStore(tmp_path / "w.db") as store:
        res = run_sweep(spec, store, executor, on_point=lambda o, done, todo: seen.append(done))
        assert (res.computed, res.skipped, res.errors, res.resumed) == (6, 0, 0, False)
        assert seen == list(range(1, 7))
        pts = store.points(res.run.id)
        assert [p.idx for p in pts] == list(range(6)) and all(p.status == "done" for p in pts)
        for p in pts:  # the pool computes exactly what one process computes
            assert p.result == run_point(spec.job, p.idx, p.overrides).result
        s4 = {p.overrides["training.tokens"]: p.result["summary"] for p in pts if p.overrides["cluster.nodes"] == 4}
        # time to train is linear in tokens for a fixed strategy
        assert s4[2e10]["time_to_train_s"] / s4[1e10]["time_to_train_s"] == pytest_approx(2.0)
        assert all(s["strategy_source"] == "scenario" for s in s4.values())
        s8 = [p.result["summary"] for p in pts if p.overrides["cluster.nodes"] == 8]
        # the base TP2·DP16 layout spans 32 GPUs, the 8-node points have 64: searched instead
        assert all(s["strategy_source"] == "search" and s["gpus"] == 64 for s in s8)
        assert all(s["tp"] * s["pp"] * s["dp"] * s["cp"] == 64 for s in s8)
        again = run_sweep(spec, store, executor)
        assert (again.computed, again.skipped, again.resumed, again.run.id) == (0, 6, True, res.run.id)
        assert len(store.points(res.run.id)) == 6
        fresh = run_sweep(spec, store, executor, new_run=True)
        assert fresh.run.id != res.run.id and fresh.computed == 6


def pytest_approx(v: float) -> object:
    import pytest

    return pytest.approx(v, rel=1e-9)


def test_a_bad_combination_is_stored_as_an_error_and_the_sweep_goes_on(tmp_path: Path, executor: LocalExecutor) -> None:
    # domain 16 needs a multiple of gpus_per_node; with 8 GPUs per node both 8 and 16 are fine, but 12 is not
    body = "axes:\n  cluster.gpus_per_node: [8, 4]\n  cluster.scale_up.domain_size: [8, 12]\n"
    spec = load_sweep(_files(tmp_path, body))
    with RunStore(tmp_path / "w.db") as store:
        res = run_sweep(spec, store, executor)
        pts = {tuple(p.overrides.values()): p for p in store.points(res.run.id)}
        assert pts[(8, 8)].status == "done"
        assert pts[(8, 12)].status == "error" and "domain_size" in (pts[(8, 12)].error or "")
        assert res.errors == sum(p.status == "error" for p in pts.values()) >= 1
        assert store.run(res.run.id).status == "done"
        # errors are finished points: a resume skips them unless asked to retry
        assert run_sweep(spec, store, executor).computed == 0
        assert run_sweep(spec, store, executor, retry_errors=True).computed == res.errors
        assert len(store.points(res.run.id)) == 4


def test_search_and_reliability_modes(tmp_path: Path, executor: LocalExecutor) -> None:
    body = "mode: search\nsearch: {top: 2}\naxes:\n  model: [llama3-8b, llama3-70b]\n"
    spec = load_sweep(_files(tmp_path, body))
    with RunStore(tmp_path / "w.db") as store:
        res = run_sweep(spec, store, executor)
        for p in store.points(res.run.id):
            assert p.status == "done", p.error
            d = p.result["detail"]  # type: ignore[index]
            assert 1 <= len(d["strategies"]) <= 2 and p.result["summary"]["feasible"] > 0  # type: ignore[index]
    body = "mode: reliability\nreliability: {replicas: 40, seed: 1}\naxes:\n  failures.rate_scale: [0.5, 2.0]\n"
    spec = load_sweep(write(tmp_path / "rel.yaml", "base: base.yaml\n" + body))
    with RunStore(tmp_path / "w.db") as store:
        res = run_sweep(spec, store, executor)
        s = {p.overrides["failures.rate_scale"]: p.result["summary"] for p in store.points(res.run.id)}  # type: ignore[index]
        assert all(0 < v["ettr"] <= 1 for v in s.values())
        assert s[2.0]["interruptions"] > s[0.5]["interruptions"]  # four times the failure rate


def test_make_executor_errors() -> None:
    import pytest

    from wanka.errors import SpecError

    with pytest.raises(SpecError) as e:
        make_executor("dask")
    assert e.value.field == "--executor"
    with pytest.raises(SpecError):
        make_executor("local", workers=0)
    with pytest.raises(SpecError):
        make_executor("ray", ray_address="127.0.0.1:1", ray_local=True)
    assert make_executor("local", workers=1).workers == 1
