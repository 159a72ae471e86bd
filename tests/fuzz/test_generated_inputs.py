"""Hypothesis: generated hostile values in every field of a scenario, a validation case, a config.json and a
trace; random bytes and text as files. Every run keeps the CLI invariants (``conftest.cli``), and a value of
the wrong type is never accepted. The C and the pure-Python YAML loaders agree."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wanka import yamlio
from wanka.errors import SpecError
from wanka.spec import load_scenario

ROOT = Path(__file__).resolve().parents[2]
# derandomize: the same examples on every run (CI stays deterministic); raise max_examples to hunt locally
FUZZ = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    database=None,
    derandomize=True,
)

HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**31, 10**12, 10**18]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 32.7, 1e308, -0.0, 1e-300]),
    st.text(max_size=12),
    st.sampled_from(["10T", "16Mi", "400Gb/s", "H100", "", "null", "1e999"]),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def _leaves(d: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(d, dict):
        return [p for k, v in d.items() for p in _leaves(v, (*prefix, k))] or [prefix]
    return [prefix]


def _set(d: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(d))
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return out


def _get(d: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        d = d[k]
    return d


def _wrong_type(old: Any, new: Any) -> bool:
    """A value no strict int/float/bool/str field accepts in place of ``old``."""
    if isinstance(old, bool):
        return not isinstance(new, bool)
    if isinstance(old, int):
        return isinstance(new, bool | float | list | dict)  # strict: 4.0 is not an integer either
    if isinstance(old, float):
        return isinstance(new, bool | list | dict) or (isinstance(new, float) and not math.isfinite(new))
    return False


SCENARIO = load_scenario("traditional-512-a100").model_dump(mode="json")
PATHS = _leaves(SCENARIO)


@FUZZ
@given(path=st.sampled_from(PATHS), value=HOSTILE)
def test_scenario_field_fuzz(path: tuple[Any, ...], value: Any, cli: Any, tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump(_set(SCENARIO, path, value)), encoding="utf-8")
    o = cli(["show", f, "--json"])
    if _wrong_type(_get(SCENARIO, path), value):
        assert o.code == 2, f"{'.'.join(map(str, path))} = {value!r} was accepted"
    if o.code == 0:
        cli(["plan", f, "--json"])


@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes_as_scenario(data: bytes, cli: Any, tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_bytes(data)
    cli(["show", f, "--json"])


@FUZZ
@given(text=st.text(alphabet=st.sampled_from(list("[]{}:-,&*!|>'\"#\n ?abc019.")), max_size=200))
def test_yaml_punctuation_soup(text: str, cli: Any, tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(text, encoding="utf-8")
    cli(["show", f, "--json"])


LLAMA = json.loads((ROOT / "tests" / "data" / "hf_configs" / "Meta-Llama-3-8B.json").read_text(encoding="utf-8"))


@FUZZ
@given(key=st.sampled_from([*sorted(LLAMA), "rope_scaling"]), value=HOSTILE)
def test_config_json_fuzz(key: str, value: Any, cli: Any, tmp_path: Path) -> None:
    f = tmp_path / "config.json"
    f.write_text(json.dumps({**LLAMA, key: value}), encoding="utf-8")
    o = cli(["model", "import", f, "--json"])
    if o.code == 0:
        assert isinstance(json.loads(o.out)["n_layers"], int)


def _case() -> dict[str, Any]:
    from wanka.validate import load_cases

    return dict(load_cases()[0][0].raw)


CASE = _case()
CASE_PATHS = [p for p in _leaves(CASE) if p[0] not in ("notes", "source", "derivation")]
REQUIRED = {
    ("hardware", "gpu"),
    ("hardware", "count"),
    ("parallelism", "tp"),
    ("parallelism", "pp"),
    ("parallelism", "dp"),
    ("batch", "global_batch_seqs"),
    ("truth", "tokens_per_s_per_gpu"),
    *(("model", k) for k in ("n_layers", "hidden", "n_heads", "ffn_hidden", "vocab", "seq_len")),
    ("kind",),
    ("precision",),
    ("id",),
}


@settings(FUZZ, max_examples=15)
@given(path=st.sampled_from(CASE_PATHS), value=HOSTILE)
def test_validation_case_fuzz(path: tuple[Any, ...], value: Any, cli: Any, tmp_path: Path) -> None:
    f = tmp_path / "v.yaml"
    f.write_text(yaml.safe_dump({"schema": "wanka-validation/1", "cases": [_set(CASE, path, value)]}), "utf-8")
    o = cli(["validate", f, "--json"])
    old = _get(CASE, path)
    if (value is not None and _wrong_type(old, value)) or (value is None and path in REQUIRED):
        assert o.code == 2, f"{'.'.join(map(str, path))} = {value!r} was accepted"


CELL = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.text(alphabet='0123456789.-e,"x ', max_size=8),
)


@FUZZ
@given(rows=st.lists(st.tuples(CELL, CELL, CELL), min_size=1, max_size=5))
def test_trace_csv_fuzz(rows: list[tuple[str, str, str]], cli: Any, tmp_path: Path) -> None:
    f = tmp_path / "t.csv"
    f.write_text("submit_s,duration_s,gpus\n" + "".join(",".join(r) + "\n" for r in rows), encoding="utf-8")
    cli(["schedule", "--cluster", "traditional-512-a100", "--trace", f, "--no-failures", "--json"])


# ---------------------------------------------------------------- the C loader gives identical results
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=10),
    st.sampled_from(["1e3", "15.6e12", "0x10", "0o17", "on", "yes", "~", ".inf", "-.5", "1_000", "2023-01-01"]),
)
DOCS = st.recursive(
    SCALARS, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5), c, max_size=4), max_leaves=20
)


@settings(FUZZ, max_examples=100)
@given(doc=DOCS, flow=st.booleans())
def test_c_and_python_loaders_agree(doc: Any, flow: bool) -> None:
    text = yaml.safe_dump(doc, default_flow_style=flow, allow_unicode=True)
    assert yamlio.parse(text)[0] == yamlio.parse(text, loader=yamlio.SafeLoader12)[0]
    bare = text.replace("'", "")  # unquoted scalars exercise the implicit resolvers (1e3, 0x10, on, ~ ...)
    try:
        slow = yamlio.parse(bare, loader=yamlio.SafeLoader12)[0]
        fast = yamlio.parse(bare)[0]
    except SpecError:
        return  # libyaml and PyYAML differ on some malformed text; valid YAML must agree
    assert fast == slow


@pytest.mark.parametrize("path", sorted((ROOT / "src" / "wanka").rglob("*.yaml")), ids=lambda p: p.name)
def test_c_loader_identical_on_shipped_files(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert yamlio.parse(text)[0] == yamlio.parse(text, loader=yamlio.SafeLoader12)[0]
    assert yamlio.FastLoader is not yamlio.SafeLoader12 or not yaml.__with_libyaml__


SWEEP_PATHS = ["cluster.nodes", "cluster.fabric.nic_gbps_per_gpu", "training.micro_batch", "failures.hot_spares", "x.y"]


@settings(FUZZ, max_examples=40)
@given(
    path=st.sampled_from(SWEEP_PATHS),
    values=st.one_of(HOSTILE, st.lists(HOSTILE, max_size=3)),
    extra=st.dictionaries(st.sampled_from(["mode", "parallel", "search", "reliability", "set", "name"]), HOSTILE),
)
def test_sweep_spec_fuzz(path: str, values: Any, extra: dict[str, Any]) -> None:
    """A sweep mapping with hostile axes and options: a valid sweep or a SpecError, nothing else."""
    from wanka.planner import parse_sweep

    data = {"base": "traditional-512-a100", "axes": {path: values}, **extra}
    try:
        spec = parse_sweep(data, source="fuzz.yaml")
    except SpecError:
        return
    assert spec.size >= 1 and isinstance(values, list)
