"""Sweep files: parsing, the cartesian product, identity (hash), point scenarios, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from wanka.errors import SpecError
from wanka.planner import load_sweep, parse_sweep, point_key, point_scenario

from .helpers import small_dict, write

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sweeps"


def _base(tmp_path: Path, nodes: int = 4) -> Path:
    d = small_dict(nodes)
    d["parallel"] = {"tp": 2, "pp": 1, "dp": 16, "cp": 1}
    return write(tmp_path / "base.yaml", yaml.safe_dump(d))


def _sweep(tmp_path: Path, body: str) -> Path:
    _base(tmp_path)
    return write(tmp_path / "s.yaml", "base: base.yaml\n" + body)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_examples_parse(path: Path) -> None:
    s = load_sweep(path)
    n = 1
    for _, v in s.axes:
        n *= len(v)
    assert s.size == n == len(s.points()) == len({point_key(p) for p in s.points()})


def test_product_order_and_keys(tmp_path: Path) -> None:
    body = "axes:\n  cluster.fabric.nic_gbps_per_gpu: [200, 400]\n  training.tokens: [1.0e+10, 2.0e+10, 3.0e+10]\n"
    s = load_sweep(_sweep(tmp_path, body))
    pts = s.points()
    assert len(pts) == 6
    assert pts[0] == {"cluster.fabric.nic_gbps_per_gpu": 200, "training.tokens": 1e10}
    assert pts[1]["training.tokens"] == 2e10  # the last axis varies fastest
    assert point_key({"b": 1, "a": 2}) == point_key({"a": 2, "b": 1}) == '{"a":2,"b":1}'


def test_hash_follows_content_not_file_name(tmp_path: Path) -> None:
    body = "axes:\n  training.tokens: [1.0e+10, 2.0e+10]\n"
    a = load_sweep(_sweep(tmp_path, body))
    b = load_sweep(write(tmp_path / "copy.yaml", "base: base.yaml\n" + body))
    c = load_sweep(write(tmp_path / "other.yaml", "base: base.yaml\naxes:\n  training.tokens: [1.0e+10, 3.0e+10]\n"))
    assert a.hash == b.hash != c.hash


def test_point_scenarios(tmp_path: Path) -> None:
    s = load_sweep(_sweep(tmp_path, "axes:\n  cluster.nodes: [2, 8]\n  model: [llama3-8b, llama3-70b]\n"))
    sc, par = point_scenario(s.job, {"cluster.nodes": 8, "model": "llama3-70b"})
    assert sc.cluster.nodes == 8 and sc.gpus == 64  # a resized cluster runs the job on all of it
    assert sc.model is not None and sc.model.n_layers == 80  # Llama 3 70B has 80 layers
    assert par is not None and (par["tp"], par["pp"], par["dp"], par["cp"]) == (2, 1, 16, 1)  # inherited as is
    s2 = load_sweep(write(tmp_path / "nic.yaml", "base: base.yaml\naxes:\n  cluster.fabric.nic_gbps_per_gpu: [800]\n"))
    sc2, _ = point_scenario(s2.job, {"cluster.fabric.nic_gbps_per_gpu": 800})
    assert sc2.gpus == 32 and sc2.cluster.fabric.nic_gbps_per_gpu == 800


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ("axes:\n  cluster.fabric.nic_gbps: [200]\n", "axes.cluster.fabric.nic_gbps", "nic_gbps_per_gpu"),
        ("axes:\n  cluster.nodes: []\n", "axes.cluster.nodes", "non-empty"),
        ("axes:\n  cluster.nodes: 8\n", "axes.cluster.nodes", "list"),
        ("axes:\n  cluster.nodes: [-3]\n", "axes.cluster.nodes", "-3"),
        ("axes:\n  cluster.nodes: [2, 2]\n", "axes.cluster.nodes", "twice"),
        ("axes:\n  cluster.nodes.x: [2]\n", "axes.cluster.nodes.x", "value"),
        ("axes: {}\n", "axes", "at least one"),
        ("mode: simulate\naxes:\n  cluster.nodes: [2]\n", "mode", "plan, search, reliability"),
        ("parallel: best\naxes:\n  cluster.nodes: [2]\n", "parallel", "keep"),
        ("axes:\n  cluster.nodes: [2]\nworkers: 4\n", "workers", "allowed"),
        ("axes:\n  cluster.nodes: [2]\nsearch: {top: 0}\n", "search.top", "between"),
        ("axes:\n  cluster.nodes: [2]\nsearch: {objective: speed}\n", "search.objective", "time"),
        ("axes:\n  cluster.nodes: [2]\nset: {cluster.nodes: 4}\n", "set.cluster.nodes", "axis"),
    ],
)
def test_bad_sweeps_name_the_field(tmp_path: Path, body: str, field: str, words: str) -> None:
    with pytest.raises(SpecError) as e:
        load_sweep(_sweep(tmp_path, body))
    assert e.value.field == field
    assert words in str(e.value)
    assert e.value.source is not None and e.value.source.endswith("s.yaml")


def test_malformed_yaml_and_missing_pieces(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="malformed YAML") as e:
        load_sweep(write(tmp_path / "bad.yaml", "base: x\naxes: [unclosed\n"))
    assert e.value.line is not None
    with pytest.raises(SpecError) as e2:
        load_sweep(write(tmp_path / "nobase.yaml", "axes:\n  cluster.nodes: [2]\n"))
    assert e2.value.field == "base"
    with pytest.raises(SpecError, match="unknown scenario"):
        load_sweep(write(tmp_path / "nopreset.yaml", "base: no-such-preset\naxes:\n  cluster.nodes: [2]\n"))
    with pytest.raises(SpecError, match="no such sweep file"):
        load_sweep(tmp_path / "absent.yaml")
    with pytest.raises(SpecError, match="mapping"):
        parse_sweep(["not", "a", "mapping"])
