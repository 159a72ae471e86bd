"""Lazy start-up: the static command table matches the commands, `--help` imports no heavy module,
global `--lang`, and `wanka schema` (whose JSON is kept in docs/scenario.schema.json)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wanka.cli import COMMANDS, _load_commands, main

ROOT = Path(__file__).resolve().parents[2]


def test_command_table_matches_the_modules() -> None:
    import typer.main

    from wanka.cli.app import app

    _load_commands()
    group = typer.main.get_command(app)
    real = {name: cmd.get_short_help_str(limit=300) for name, cmd in group.commands.items()}  # type: ignore[attr-defined]
    assert set(real) == set(COMMANDS)
    for name, (module, text) in COMMANDS.items():
        assert real[name] == text, name
        assert (ROOT / "src" / "wanka" / "cli" / f"{module}.py").exists()


def test_help_lists_every_command_without_heavy_imports() -> None:
    code = (
        "import sys; from wanka.cli import main; rc = main(['--help']); "
        "heavy = [m for m in ('typer', 'rich', 'numpy', 'pydantic', 'yaml') if m in sys.modules]; "
        "print('HEAVY', heavy); sys.exit(rc)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert "HEAVY []" in r.stdout
    for name in COMMANDS:
        assert f"  {name} " in r.stdout


def test_a_command_loads_only_its_module() -> None:
    code = (
        "import sys; from wanka.cli import main; rc = main(['catalog', '--kind', 'nics', '--json']); "
        "sys.stderr.write(repr(sorted(m for m in sys.modules if m.startswith('wanka.cli.cmd_')))); sys.exit(rc)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert r.returncode == 0 and json.loads(r.stdout)["nics"]
    assert r.stderr.strip() == "['wanka.cli.cmd_catalog']"


def test_global_lang(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["--lang", "zh", "show", "/no/such/file.yaml"]) == 2
    assert "文件不存在" in capsys.readouterr().err
    assert main(["--lang=en", "show", "/no/such/file.yaml"]) == 2
    assert "no such file" in capsys.readouterr().err
    monkeypatch.setenv("WANKA_LANG", "zh")
    assert main(["show", "/no/such/file.yaml"]) == 2
    assert "文件不存在" in capsys.readouterr().err
    assert main(["--lang", "fr", "show", "x"]) == 2
    assert "must be one of en, zh" in capsys.readouterr().err


def test_schema_json_is_in_sync_with_docs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--json"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["properties"]["base"]["type"] == "string"
    assert "batch_tokens" in schema["$defs"]["TrainingSpec"]["properties"]
    assert schema["$defs"]["ClusterSpec"]["properties"]["nodes"]["maximum"] == 2_000_000
    shipped = json.loads((ROOT / "docs" / "scenario.schema.json").read_text(encoding="utf-8"))
    assert shipped == schema, "regenerate: wanka schema --json > docs/scenario.schema.json"


def test_schema_text_names_fields_and_ranges(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    out = capsys.readouterr().out
    assert "nodes: integer (> 0 and ≤ 2,000,000, required)" in out
    assert "micro_batch" in out and "batch_tokens" in out


def test_lang_zh_text_output_json_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--lang", "zh", "show", "traditional-512-a100"]) == 0
    zh = capsys.readouterr().out
    assert "加速卡" in zh and "accelerators " not in zh
    assert main(["--lang", "zh", "show", "traditional-512-a100", "--json"]) == 0
    d_zh = json.loads(capsys.readouterr().out)
    assert main(["--lang", "en", "show", "traditional-512-a100", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == d_zh  # JSON keys and values stay English
    assert main(["--lang", "en", "show", "traditional-512-a100"]) == 0
    assert "accelerators" in capsys.readouterr().out


def test_a_command_leaves_the_collector_as_it_found_it(capsys: pytest.CaptureFixture[str]) -> None:
    """`main` freezes the import-time objects while the command runs (fewer collections) and unfreezes
    them after, so an in-process caller (tests, the web server) keeps collecting its garbage."""
    import gc

    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert main(["catalog", "--kind", "nics", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nics"]
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert main(["show", "/no/such/file.yaml"]) == 2
    assert gc.isenabled() and gc.get_freeze_count() == 0
