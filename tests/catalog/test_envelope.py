"""The published MFU envelope (wanka.catalog.envelope): the highest MFU among the published runs of the
public validation file, per accelerator and precision class, and the note every face prints when a
prediction lies above it."""

import json
from pathlib import Path

import pytest
import yaml

from wanka.catalog import accelerator
from wanka.catalog.envelope import envelope_note, precision_class, published_envelope
from wanka.cli import main
from wanka.planner import search
from wanka.report.compare import compare
from wanka.spec import load_scenario
from wanka.validate.cases import load_cases

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "zero3"


def test_consistency_envelope_is_the_maximum_of_the_public_file() -> None:
    """Consistency check: recomputed through the validated door (load_cases), every (accelerator,
    precision class) envelope is the published run with the highest truth.mfu, and counts them all."""
    cases, _ = load_cases()
    best: dict[tuple[str, str], tuple[float, str, int]] = {}
    for c in cases:
        mfu = c.raw["truth"].get("mfu")
        cls = precision_class(c.raw["precision"])
        if c.kind != "steady_state" or mfu is None or cls is None:
            continue
        key = (accelerator(c.raw["hardware"]["gpu"]).name, cls)
        m, cid, n = best.get(key, (-1.0, "", 0))
        best[key] = (mfu, c.id, n + 1) if mfu > m else (m, cid, n + 1)
    assert len(best) >= 4  # A100 and H100 at 16-bit, H100/B200/GB200 at FP8
    for (name, cls), (mfu, cid, n) in best.items():
        env = published_envelope(name, cls.lower() if cls != "16-bit" else "bf16")
        assert env is not None and (env.mfu, env.case, env.runs) == (mfu, cid, n)
        assert env.source  # each with the case's source line


def test_aliases_and_16_bit_class() -> None:
    a = published_envelope("A100-SXM4-80GB", "bf16")
    assert a is not None
    assert published_envelope("A100", "fp16") == a  # an alias; FP16 shares BF16's dense peak
    assert published_envelope("A100", "fp8") is None  # no FP8 on A100: no published FP8 run
    assert published_envelope("no-such-gpu", "bf16") is None
    assert published_envelope("A100", "int4") is None


def test_note_only_above_the_envelope() -> None:
    env = published_envelope("A100", "bf16")
    assert env is not None
    assert envelope_note("A100", "bf16", env.mfu) is None
    assert envelope_note("A100", "bf16", env.mfu - 0.05) is None
    note = envelope_note("A100", "bf16", env.mfu + 0.05)
    assert note is not None
    assert env.case in note and f"{env.mfu:.1%}" in note and f"{env.mfu + 0.05:.1%}" in note


def _a100_405b_best(tmp_path: Path) -> Path:
    """The search's best layout for Llama 3 405B on 512 A100 (issue 13's scenario) as a scenario file."""
    d = yaml.safe_load((EXAMPLES / "llama3-405b-zero3-512-a100.yaml").read_text(encoding="utf-8"))
    best = search(load_scenario(EXAMPLES / "llama3-405b-zero3-512-a100.yaml"), top=1).best
    d["parallel"] = {
        "tp": best.tp,
        "pp": best.pp,
        "dp": best.dp,
        "cp": best.cp,
        "vpp": best.vpp,
        "zero": best.zero,
        "recompute": best.recompute,
        "cp_comm_type": best.cp_comm_type,
    }
    d["training"]["micro_batch"] = best.micro_batch
    f = tmp_path / "best.yaml"
    f.write_text(yaml.safe_dump(d), encoding="utf-8")
    return f


def test_search_and_plan_say_when_the_best_a100_layout_is_above_every_published_run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    env = published_envelope("A100-SXM4-80GB", "bf16")
    assert env is not None
    res = search(load_scenario(EXAMPLES / "llama3-405b-zero3-512-a100.yaml"), top=1)
    above = res.best.mfu > env.mfu
    assert any(n.startswith("#1: ") and env.case in n for n in res.notes) == above
    f = _a100_405b_best(tmp_path)
    assert main(["plan", str(f), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["published_mfu"]["case"] == env.case
    assert d["published_mfu"]["above"] is above
    assert main(["plan", str(f)]) == 0
    assert (env.case in capsys.readouterr().out) == above


def test_plan_below_the_envelope_prints_no_note(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "traditional-512-a100", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    env = published_envelope("A100-SXM4-80GB", "bf16")
    assert env is not None and d["mfu"] <= env.mfu  # Llama 3 8B on its preset's tp 2 x dp 256
    assert d["published_mfu"]["above"] is False
    assert main(["plan", "traditional-512-a100"]) == 0
    assert env.case not in capsys.readouterr().out


def test_compare_marks_the_same_job_above_the_envelope() -> None:
    rep = compare(
        [load_scenario("traditional-512-a100"), load_scenario("meta-24k-h100-roce")], story=False, what_ifs=False
    )
    small = rep.clusters[0]
    sj = small.same_job
    assert sj is not None
    env = published_envelope("A100-SXM4-80GB", "bf16")
    assert env is not None
    assert (sj.above_published is not None) == (sj.mfu > env.mfu)
    if sj.above_published is not None:
        assert any(a.text.startswith("same job") and env.case in a.text for a in small.assumptions)
