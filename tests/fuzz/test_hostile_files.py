"""A table of hostile files and flags, for every command and file kind: each is refused with exit 2
and ``error:`` lines (no traceback, no hang, no NaN in JSON), and nothing the user saved changes."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HF = ROOT / "tests" / "data" / "hf_configs"
GOOD = "base: traditional-512-a100\n"
LAUGHS = (
    'a: &a ["x","x","x","x","x","x","x","x","x","x"]\n'
    + "".join(f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    + "cluster: *i\n"
)

# ---------------------------------------------------------------- scenario files
SCENARIOS: dict[str, str | bytes] = {
    "not utf-8": b"cluster:\n  accelerator: H\xff100\n  nodes: 4\n",
    "NUL bytes": b"cluster:\x00\n",
    "500 nested [": "cluster: " + "[" * 500 + "]" * 500 + "\n",
    "5,000-digit integer": "cluster:\n  accelerator: H100\n  nodes: " + "9" * 5000 + "\n",
    "alias bomb": LAUGHS,
    "inf in an unbounded float": GOOD + "cluster:\n  storage:\n    capacity_tb: .inf\n",
    "nan": GOOD + "facility:\n  hardware_usd_per_gpu: .nan\n",
    "unknown nic": GOOD + "cluster:\n  fabric:\n    nic: NoSuchNIC\n",
    "unknown switch": GOOD + "cluster:\n  fabric:\n    switch: NoSuchSwitch\n",
    "unknown storage server": GOOD + "cluster:\n  storage:\n    server: NoSuchBox\n",
    "unknown node": GOOD + "cluster:\n  node: NoSuchNode\n",
    "unknown accelerator": GOOD + "cluster:\n  accelerator: TPU-v9\n",
    "more heads than hidden": GOOD + "model:\n  base: llama3-8b\n  hidden: 16\n  n_heads: 32\n  n_kv_heads: 8\n",
    "hot spares 1e12": GOOD + "failures:\n  hot_spares: 1000000000000\n",
    "empty file": "",
    "a list": "- 1\n- 2\n",
    "a scalar": "42\n",
    "null count": GOOD + "cluster:\n  nodes: null\n",
    "float count": GOOD + "cluster:\n  nodes: 32.7\n",
    "bool count": GOOD + "parallel:\n  tp: true\n",
    "unknown field": GOOD + "parallel:\n  micro_batch: 2\n",
    "bad units": GOOD + "training:\n  tokens: 10 parsecs\n",
    "unhashable key": "? [a]\n: 1\n",
    "duplicate anchors and tags": "cluster: !!python/object:os.system {}\n",
    "missing base file": "base: nowhere.yaml\n",
    "duplicate key": GOOD + "cluster:\n  nodes: 4\n  nodes: 8\n",
}

COMMANDS = [
    ["show", "{f}", "--json"],
    ["plan", "{f}", "--json"],
    ["search", "{f}", "--top", "1"],
    ["fabric", "{f}", "--json"],
    ["facility", "{f}", "--json"],
    ["storage", "{f}", "--json"],
    ["reliability", "{f}", "--replicas", "5", "--json"],
]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_hostile_scenario_refused_by_show(name: str, cli: Any, write: Any) -> None:
    f = write("s.yaml", SCENARIOS[name])
    assert cli(["show", f, "--json"]).code == 2


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
@pytest.mark.parametrize(
    "name", ["unknown nic", "unknown switch", "unknown storage server", "unknown node", "not utf-8", "alias bomb"]
)
def test_every_command_refuses(name: str, argv: list[str], cli: Any, write: Any) -> None:
    f = write("s.yaml", SCENARIOS[name])
    o = cli([a.format(f=f) for a in argv])
    assert o.code == 2
    if name.startswith("unknown"):
        assert "not in the catalog" in o.err


@pytest.mark.parametrize("kind", ["fifo", "folder", "huge"])
def test_special_files_refused_without_blocking(kind: str, cli: Any, tmp_path: Path) -> None:
    p = tmp_path / "x.yaml"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "folder":
        p.mkdir()
    else:
        p.write_bytes(b"# " + b"x" * (5 * 1024**2) + b"\n")
    for argv in (["show", p], ["sweep", p, "--db", tmp_path / "w.db"], ["validate", p], ["model", "show", p]):
        assert cli(argv).code == 2
    assert cli(["schedule", "--cluster", p, "--synthetic", "acme-seren", "--jobs", "10"]).code == 2


def test_four_problems_four_lines(cli: Any, write: Any) -> None:
    f = write(
        "s.yaml",
        GOOD + "cluster:\n  nodes: -3\n  fabric:\n    nic: Nope\ntraining:\n  micro_batch: 0\nparallel:\n  tp: true\n",
    )
    o = cli(["plan", f])
    lines = o.err.strip().splitlines()
    assert o.code == 2 and len(lines) == 4, o.err
    assert all("line" in ln and "s.yaml" in ln for ln in lines), o.err
    assert any("cluster.nodes = -3" in ln and "> 0" in ln for ln in lines)


def test_base_cycle_refused(cli: Any, write: Any) -> None:
    write("a.yaml", "base: b.yaml\n")
    b = write("b.yaml", "base: a.yaml\n")
    assert cli(["show", b]).code == 2


def test_relative_base_resolves_against_the_file(cli: Any, write: Any, tmp_path: Path, monkeypatch: Any) -> None:
    write("sub/base.yaml", "base: traditional-512-a100\nname: from-base\n")
    f = write("sub/child.yaml", "base: base.yaml\ndescription: child\n")
    monkeypatch.chdir(tmp_path)  # the base is not in the working directory
    d = json.loads(cli(["show", f, "--json"]).out)
    assert d["scenario"] == "from-base" and d["description"] == "child"


# ---------------------------------------------------------------- validation files
def _case() -> dict[str, Any]:
    from wanka.validate import load_cases

    return copy.deepcopy(load_cases()[0][0].raw)


VALIDATION = {
    "global_batch_seqs null": ("batch", "global_batch_seqs", None),
    "count null": ("hardware", "count", None),
    "count 32.7": ("hardware", "count", 32.7),
    "truth empty": (None, "truth", {}),
    "truth zero": ("truth", "tokens_per_s_per_gpu", 0),
    "truth nan": ("truth", "tokens_per_s_per_gpu", float("nan")),
    "parallelism null": (None, "parallelism", None),
    "tp true": ("parallelism", "tp", True),
    "moe a list": ("model", "moe", [1]),
    "heads beyond hidden": ("model", "n_heads", 100_000),
    "kind unknown": (None, "kind", "weekly"),
}


@pytest.mark.parametrize("name", list(VALIDATION))
def test_hostile_validation_file(name: str, cli: Any, write: Any) -> None:
    block, key, value = VALIDATION[name]
    case = _case()
    (case[block] if block else case)[key] = value
    f = write("v.yaml", yaml.safe_dump({"schema": "wanka-validation/1", "cases": [case]}))
    o = cli(["validate", f, "--json"])
    assert o.code == 2 and key in o.err


@pytest.mark.parametrize(
    "text",
    [b"schema: wanka-validation/1\ncases: [\xff]\n", "schema: wanka-validation/1\ncases: 3\n", "[" * 400, ""],
    ids=["not utf-8", "cases a number", "deep", "empty"],
)
def test_malformed_validation_file(text: str | bytes, cli: Any, write: Any) -> None:
    assert cli(["validate", write("v.yaml", text)]).code == 2


# ---------------------------------------------------------------- config.json
def _llama() -> dict[str, Any]:
    d: dict[str, Any] = json.loads((HF / "Meta-Llama-3-8B.json").read_text(encoding="utf-8"))
    return d


@pytest.mark.parametrize(
    "mutate",
    [
        {"num_hidden_layers": 1e11},
        {"num_hidden_layers": 100_000_000_000},
        {"hidden_size": 8, "num_attention_heads": 32, "num_key_value_heads": 8},
        {"rope_scaling": [1, 2]},
        {"rope_scaling": {"original_max_position_embeddings": -1}},
        {"vocab_size": None},
        {"architectures": "Llama"},
    ],
    ids=lambda m: next(iter(m)),
)
def test_hostile_config_json(mutate: dict[str, Any], cli: Any, write: Any) -> None:
    f = write("config.json", json.dumps({**_llama(), **mutate}))
    assert cli(["model", "import", f]).code == 2


@pytest.mark.parametrize(
    "text",
    [
        b'{"hidden_size": 4096, "name": "\xff"}',
        '{"hidden_size": NaN}',
        '{"hidden_size": Infinity}',
        "[" * 5000 + "]" * 5000,
        '{"hidden_size": ' + "9" * 5000 + "}",
        "{not json",
    ],
    ids=["not utf-8", "NaN", "Infinity", "deep", "5000 digits", "malformed"],
)
def test_malformed_config_json(text: str | bytes, cli: Any, write: Any) -> None:
    assert cli(["model", "import", write("config.json", text)]).code == 2


def test_qwen_moe_layers_bounded(cli: Any, write: Any) -> None:
    d = json.loads((HF / "Qwen3-30B-A3B.json").read_text(encoding="utf-8"))
    d["num_hidden_layers"] = 10**11  # used to loop over every layer index
    assert cli(["model", "import", write("config.json", json.dumps(d))]).code == 2


# ---------------------------------------------------------------- sweep files
SWEEPS = {
    "negative seed": "base: traditional-512-a100\nmode: reliability\nreliability: {seed: -1}\n"
    "axes:\n  cluster.fabric.nic_gbps_per_gpu: [200]\n",
    "alias bomb in axes": LAUGHS.replace("cluster: *i", "base: traditional-512-a100\naxes:\n  cluster.nodes: *i"),
    "unknown base": "base: no-such-preset\naxes:\n  cluster.nodes: [1]\n",
    "unknown axis": "base: traditional-512-a100\naxes:\n  cluster.nodez: [1]\n",
    "not utf-8": b"base: traditional-512-a100\naxes:\n  cluster.nodes: [\xff]\n",
    "bad axis value": "base: traditional-512-a100\naxes:\n  cluster.fabric.nic: [Nope]\n",
    "bad set value": "base: traditional-512-a100\nset: {cluster.nodes: -1}\n"
    "axes:\n  cluster.fabric.nic_gbps_per_gpu: [200]\n",
}


@pytest.mark.parametrize("name", list(SWEEPS))
def test_hostile_sweep_file(name: str, cli: Any, write: Any, tmp_path: Path) -> None:
    f = write("sw.yaml", SWEEPS[name])
    db = tmp_path / "w.db"
    assert cli(["sweep", f, "--db", db, "--no-progress"]).code == 2
    assert not db.exists()  # refused before the store was created


# ---------------------------------------------------------------- traces and node lists
TRACES = {
    "duration 1e15": "submit_s,duration_s,gpus\n0,1e15,8\n",
    "nan": "submit_s,duration_s,gpus\n0,nan,8\n",
    "gpus 1e12": "submit_s,duration_s,gpus\n0,10,1000000000000\n",
    "not utf-8": b"submit_s,duration_s,gpus\n0,10,\xff\n",
    "NUL": b"submit_s,duration_s,gpus\n0,10,8\x00\n",
    "ragged": "submit_s,duration_s,gpus\n0,10\n",
    "unknown header": "a,b\n1,2\n",
    "header only": "submit_s,duration_s,gpus\n",
}


@pytest.mark.parametrize("name", list(TRACES))
def test_hostile_trace(name: str, cli: Any, write: Any) -> None:
    f = write("t.csv", TRACES[name])
    assert cli(["schedule", "--cluster", "traditional-512-a100", "--trace", f]).code == 2


@pytest.mark.parametrize(
    "text",
    ["sn,cpu_milli,memory_mib,gpu,model\nn1,1,1,1000000000000,A100\n", b"sn,gpu\nn\xff,8\n", "sn,gpu\nn1,-8\n"],
    ids=["gpus 1e12", "not utf-8", "negative"],
)
def test_hostile_node_list(text: str | bytes, cli: Any, write: Any) -> None:
    f = write("nodes.csv", text)
    assert cli(["schedule", "--cluster", f, "--synthetic", "acme-seren", "--jobs", "10"]).code == 2


# ---------------------------------------------------------------- flags
@pytest.mark.parametrize(
    "argv",
    [
        ["schedule", "--cluster", "traditional-512-a100", "--synthetic", "acme-seren", "--seed", "-1"],
        ["reliability", "traditional-512-a100", "--seed", "-1"],
        ["collective", "--seed", "-1"],
        ["compare", "traditional-512-a100", "traditional-512-a100", "--seed", "-1"],
        ["claims", "--seed", "-1"],
        ["schedule", "--cluster", "traditional-512-a100", "--synthetic", "acme-seren", "--jobs", "0"],
        ["schedule", "--cluster", "traditional-512-a100", "--synthetic", "acme-seren", "--load", "nan"],
        ["facility", "traditional-512-a100", "--days", "inf"],
        ["facility", "traditional-512-a100", "--days", "99999999999999999999"],
        ["collective", "--qps", "-1"],
        ["collective", "--bytes", "1e400"],
        ["facility", "traditional-512-a100", "--utilization", "nan"],
        ["reliability", "traditional-512-a100", "--step-time", "nan"],
        ["model", "import", str(HF / "Meta-Llama-3-8B.json"), "--seq-len", "0"],
        ["catalog", "--kind", "gpus"],
    ],
    ids=lambda a: " ".join(a[:1] + a[-2:]),
)
def test_hostile_flags(argv: list[str], cli: Any) -> None:
    assert cli(argv).code == 2


# ---------------------------------------------------------------- outputs and the run store
def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run store with one finished sweep (made through the API: no process pool)."""
    from wanka.planner import load_sweep, make_executor, run_sweep
    from wanka.store import RunStore

    d = tmp_path_factory.mktemp("store")
    f = d / "sw.yaml"
    f.write_text("base: traditional-512-a100\naxes:\n  cluster.fabric.nic_gbps_per_gpu: [200, 400]\n", "utf-8")
    db = d / "w.db"
    with RunStore(db) as s, make_executor("local", workers=1) as ex:
        run_sweep(load_sweep(f), s, ex)
    return db


@pytest.mark.parametrize(
    "target", ["{db}", "{db}-wal", "{db}-shm", "/", ".", "{dir}", "{dir}/missing/x.csv", "", "{dir}/"]
)
@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_runs_export_never_touches_the_store(target: str, fmt: str, store: Path, cli: Any) -> None:
    before = _digest(store)
    listing = sorted(os.listdir(store.parent))
    out = target.format(db=store, dir=store.parent)
    assert cli(["runs", "export", "1", "--db", store, "--out", out, "--format", fmt]).code == 2
    assert _digest(store) == before
    assert sorted(os.listdir(store.parent)) == listing  # no DIR.tmp or half-written file left


def test_runs_export_writes_atomically(store: Path, cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "x.json"
    assert cli(["runs", "export", "1", "--db", store, "--out", out, "--format", "json"]).code == 0
    d = json.loads(out.read_text(encoding="utf-8"))
    assert len(d["points"]) == 2 and sorted(os.listdir(tmp_path)) == ["x.json"]


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "traditional-512-a100", "--trace", "{db}"],
        ["model", "import", str(HF / "Meta-Llama-3-8B.json"), "--out", "{db}"],
    ],
    ids=["plan --trace", "model --out"],
)
def test_no_command_overwrites_a_store(argv: list[str], store: Path, cli: Any) -> None:
    before = _digest(store)
    assert cli([a.format(db=store) for a in argv]).code == 2
    assert _digest(store) == before


def test_damaged_store_rows_are_errors(tmp_path: Path, store: Path, cli: Any) -> None:
    import shutil
    import sqlite3

    db = tmp_path / "bad.db"
    shutil.copy(store, db)
    with sqlite3.connect(db) as c:
        c.execute("UPDATE points SET result_json = '{\"summary\": NaN' WHERE idx = 0")
        c.execute("UPDATE runs SET spec_json = '[[[' WHERE id = 1")
    for argv in (["runs", "list", "--db", db], ["runs", "show", "1", "--db", db], ["runs", "export", "1", "--db", db]):
        assert cli(argv).code == 2


@pytest.mark.parametrize("kind", ["text", "other sqlite db", "sqlite header only"])
@pytest.mark.parametrize("cmd", ["runs list", "sweep"])
def test_foreign_db_never_changed(kind: str, cmd: str, cli: Any, write: Any, tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "x.db"
    if kind == "text":
        db.write_bytes(b"not a database at all\n")
    elif kind == "sqlite header only":
        db.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    else:
        with sqlite3.connect(db) as c:
            c.execute("CREATE TABLE mine (x INTEGER)")
            c.execute("INSERT INTO mine VALUES (42)")
    before = _digest(db)
    if cmd == "sweep":
        sw = write("sw.yaml", "base: traditional-512-a100\naxes:\n  cluster.fabric.nic_gbps_per_gpu: [200]\n")
        argv = ["sweep", sw, "--db", db, "--no-progress"]
    else:
        argv = ["runs", "list", "--db", db]
    assert cli(argv).code == 2
    assert _digest(db) == before


def test_sweep_problems_all_at_once(cli: Any, write: Any, tmp_path: Path) -> None:
    f = write(
        "sw.yaml",
        "base: traditional-512-a100\nmode: fast\nreliability: {seed: -1}\naxes:\n  cluster.nodez: [1]\n",
    )
    o = cli(["sweep", f, "--db", tmp_path / "w.db", "--no-progress"])
    lines = o.err.strip().splitlines()
    assert o.code == 2 and len(lines) == 3, o.err
    assert {"mode", "reliability.seed", "axes.cluster.nodez"} == {ln.split()[1] for ln in lines}
