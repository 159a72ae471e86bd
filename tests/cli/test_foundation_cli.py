"""`wanka catalog`, `show`, `presets`, `model import/show`: output, JSON and exit code 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wanka.cli import main
from wanka.spec import list_model_presets, list_presets

ROOT = Path(__file__).resolve().parents[2]
WANKA = ROOT / ".venv" / "bin" / "wanka"
HF = ROOT / "tests" / "data" / "hf_configs"


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> object:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_show_meta_roce_json(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, ["show", "meta-24k-h100-roce", "--json"])
    assert isinstance(d, dict)
    assert d["accelerators"] == 24576 and d["nodes"] == 3072
    assert d["peak_flops"]["bf16"] == pytest.approx(24576 * 989.4e12)
    assert d["hbm_bytes"] == pytest.approx(24576 * 80 * 1024**3)
    assert d["sources"]


@pytest.mark.parametrize("name", list_presets())
def test_every_preset_shows(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", name]) == 0
    out = capsys.readouterr().out
    assert name in out and "peak" in out


def test_catalog_json_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, ["catalog", "--json"])
    assert isinstance(d, dict) and set(d) == {
        "accelerators",
        "nodes",
        "nics",
        "switches",
        "optics",
        "storage",
        "scale_up_fabrics",
    }
    assert all(row["source"] for rows in d.values() for row in rows)
    d = _json(capsys, ["catalog", "--kind", "switches", "--json"])
    assert isinstance(d, dict) and list(d) == ["switches"]


def test_presets_lists_everything(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, ["presets", "--json"])
    assert isinstance(d, dict)
    assert {s["name"] for s in d["scenarios"]} == set(list_presets())
    assert {m["name"] for m in d["models"]} == set(list_model_presets())


def test_model_import_yaml_roundtrip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ds.yaml"
    assert main(["model", "import", str(HF / "DeepSeek-V3.json"), "--name", "ds", "--out", str(out)]) == 0
    capsys.readouterr()
    d = _json(capsys, ["model", "show", str(out), "--json"])
    assert isinstance(d, dict) and d["name"] == "ds" and d["moe"]["n_experts"] == 256


@pytest.mark.parametrize(
    ("name", "total", "active"),
    [
        ("llama3-8b", 8.03e9, 8.03e9),  # Meta model card: 8.03 B
        ("llama3-70b", 70.6e9, 70.6e9),  # Meta model card: 70.6 B
        ("llama3-405b", 405.9e9, 405.9e9),  # Meta model card: 405.9 B (reported as 405 B)
        ("mixtral-8x7b", 46.7e9, 12.9e9),  # Mixtral paper: 47 B total, 13 B active
        ("mixtral-8x22b", 141e9, 39e9),  # Mistral AI: 141 B total, 39 B active
        ("deepseek-v3", 671e9, 37e9),  # DeepSeek-V3 report: 671 B total, 37 B activated
        ("gpt3-175b", 175e9, 175e9),  # Brown et al. 2020
        ("grok-1-314b", 314e9, 86e9),  # xAI: 314 B, ~25 % active
    ],
)
def test_model_show_parameter_counts_match_published(
    name: str, total: float, active: float, capsys: pytest.CaptureFixture[str]
) -> None:
    d = _json(capsys, ["model", "show", name, "--json"])
    assert isinstance(d, dict)
    assert d["params_total"] == pytest.approx(total, rel=0.02)
    assert d["params_active"] == pytest.approx(active, rel=0.05)


def test_gpt4_rumour_arithmetic(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, ["model", "show", "gpt4-1.8t-moe", "--json"])
    assert isinstance(d, dict)
    assert d["params_total"] == pytest.approx(1.8e12, rel=0.03)  # SemiAnalysis: ~1.8 T
    assert d["params_active"] == pytest.approx(2 * 111e9 + 55e9, rel=0.05)  # 2 experts + shared attention


BAD = [
    (["show", "no-such-preset"], "unknown scenario"),
    (["show", "FILE:cluster:\n  accelerator: TPU-v9\n  nodes: 2\n"], "cluster.accelerator"),
    (["show", "FILE:cluster:\n  accelerator: H100\n  nodes: -3\n"], "cluster.nodes"),
    (["show", "FILE:cluster:\n  accelerator: H100\n  nodes: 2\n  nodez: 3\n"], "unknown field"),
    (["show", "FILE:cluster:\n  accelerator: H100\n  nodes: [3\n"], "malformed YAML"),
    (["show", "FILE:base: traditional-512-a100\njob_gpus: 512\nparallel: {tp: 2, dp: 128}\n"], "tp·pp·dp·cp"),
    (["catalog", "--kind", "gpus"], "--kind"),
    (["model", "import", 'JSON:{"hidden_size": 1,,}'], "malformed JSON"),
    (["model", "import", 'JSON:{"architectures": ["GPT2LMHeadModel"]}'], "unsupported"),
    (["model", "show", "no-such-model"], "unknown model"),
]


def _materialise(argv: list[str], tmp_path: Path) -> list[str]:
    out = []
    for a in argv:
        if a.startswith("FILE:"):
            p = tmp_path / "bad.yaml"
            p.write_text(a[5:], encoding="utf-8")
            a = str(p)
        elif a.startswith("JSON:"):
            p = tmp_path / "config.json"
            p.write_text(a[5:], encoding="utf-8")
            a = str(p)
        out.append(a)
    return out


@pytest.mark.parametrize(("argv", "needle"), BAD)
def test_bad_input_exit_2_one_line(
    argv: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_materialise(argv, tmp_path)) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and err.startswith("error:")


def test_usage_error_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show"]) == 2
    err = capsys.readouterr().err
    assert "Missing argument" in err and "Traceback" not in err


@pytest.mark.skipif(not WANKA.exists(), reason="console script not installed in .venv")
@pytest.mark.parametrize("argv", [BAD[1][0], BAD[7][0]])
def test_bad_input_subprocess(argv: list[str], tmp_path: Path) -> None:
    r = subprocess.run([str(WANKA), *_materialise(argv, tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.startswith("error:") and "Traceback" not in r.stderr


@pytest.mark.skipif(not WANKA.exists(), reason="console script not installed in .venv")
def test_show_json_subprocess() -> None:
    r = subprocess.run([str(WANKA), "show", "meta-24k-h100-roce", "--json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["accelerators"] == 24576


def test_module_entry_point_runs() -> None:
    r = subprocess.run(
        [sys.executable, "-c", "from wanka.cli import main; raise SystemExit(main(['presets']))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
