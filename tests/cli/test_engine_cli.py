"""`wanka plan` and `wanka validate` from the command line."""

import json
import subprocess
import sys
from pathlib import Path

from wanka.cli import main

WANKA = [sys.executable, "-m", "wanka"]


def test_plan_json_carries_the_breakdown(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["plan", "meta-24k-h100-roce", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["gpus"] == 16384
    assert abs(sum(d["breakdown_s"].values()) - d["step_time_s"]) < 1e-9 * d["step_time_s"]
    assert d["memory_bytes"]["fits"] is True
    assert d["checkpoint"]["save_s"] > 0


def test_plan_trace_is_valid_chrome_trace(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "t.json"
    assert main(["plan", "gpt4-25k-a100", "--trace", str(out)]) == 0
    d = json.loads(out.read_text())
    ev = d["traceEvents"]
    stages = {e["pid"] for e in ev if e["ph"] == "X"}
    assert len(stages) == 15  # one track per pipeline stage
    assert {e["tid"] for e in ev if e["ph"] == "X"} == {0, 1}  # compute and communication rows
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in ev if e["ph"] == "X")
    printed = capsys.readouterr().out
    assert "pp 15" in printed and str(out) in printed  # the plan names the strategy and the trace file
    assert d["otherData"]["engine_step_time_s"] > 0


def test_plan_infeasible_exits_2_without_traceback(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text("base: traditional-512-a100\nparallel: {tp: 64, pp: 1, dp: 8}\n", encoding="utf-8")
    p = subprocess.run([*WANKA, "plan", str(f)], capture_output=True, text=True)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert "tp must divide n_heads" in p.stderr


def test_validate_json_schema(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["validate", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert {"cases", "mape", "max_abs_error"} <= set(d)
    c = d["cases"][0]
    assert {"id", "kind", "predicted", "truth", "rel_error"} <= set(c)
    camp = [c for c in d["cases"] if c["kind"] == "campaign"]
    assert camp


def test_validate_missing_file_exits_2(tmp_path: Path) -> None:
    p = subprocess.run([*WANKA, "validate", str(tmp_path / "nope.yaml")], capture_output=True, text=True)
    assert p.returncode == 2 and "error:" in p.stderr and "Traceback" not in p.stderr


def test_plan_without_a_strategy_uses_the_fastest_search_result(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "s.yaml"
    f.write_text(
        "cluster: {accelerator: H100, nodes: 8}\nmodel: llama3-8b\ntraining: {global_batch_seqs: 128, seq_len: 4096}\n",
        encoding="utf-8",
    )
    assert main(["plan", str(f), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    s = d["strategy"]
    assert d["strategy_from"].startswith("wanka search")
    assert s["tp"] * s["pp"] * s["dp"] * s["cp"] == 64 and d["memory_bytes"]["fits"]


def test_validate_names_each_case_it_does_not_predict_and_why(capsys) -> None:  # type: ignore[no-untyped-def]
    # one public case needs more HBM than any of its layouts has: named with its reason; another's published
    # batch (1538 sequences) does not divide by its dp 12: predicted at 1536, and the line says so
    assert main(["validate"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "no layout fits in HBM" in out and "megatron2021_t2_zero3_529B_640gpu" in out
    assert "gpt_neox_20b: infeasible" not in out
    assert "published global batch 1538 is no multiple of dp × micro-batch: predicted at 1536" in out


def test_validate_never_shortens_a_case_id(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A case is found by its id: a narrow terminal gets a line per case, a wide one the table, and in
    neither is an id or a figure cut short with an ellipsis."""
    from wanka.cli.app import console
    from wanka.validate import run_validation

    ids = [c.id for c in run_validation().cases]
    for width in (60, 100, 220):
        monkeypatch.setattr(console, "width", width)
        assert main(["validate"]) == 0
        out = capsys.readouterr().out
        assert "…" not in out, width
        rows = [line.strip("│ ").split(" ")[0] for line in out.splitlines()]
        assert set(ids) <= set(rows), (width, sorted(set(ids) - set(rows))[:3])


def test_print_table_keeps_figures_whole_and_folds_text(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """The CLI's tables: on a terminal narrower than their figures a figure is never cut to "…": the
    figure columns keep their widest cell, text wraps or folds, and the table grows past the terminal
    only when the figures alone need it."""
    from rich.table import Table

    from wanka.cli.app import console, print_table

    monkeypatch.setattr(console, "width", 40)
    t = Table()
    t.add_column("what", no_wrap=False)
    t.add_column("value", justify="right")
    t.add_row("a label long enough to need two lines or more", "1,234,567.89 GiB")
    print_table(t)
    out = capsys.readouterr().out
    assert "…" not in out and "1,234,567.89 GiB" in out and max(len(s) for s in out.splitlines()) <= 40
    wide = Table()
    for c in "abcdef":
        wide.add_column(c, justify="right")
    wide.add_row(*["123,456,789"] * 6)
    print_table(wide)
    out = capsys.readouterr().out
    assert "…" not in out and out.count("123,456,789") == 6
