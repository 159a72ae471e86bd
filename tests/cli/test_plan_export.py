"""`wanka plan --export megatron|nemo`, the shared strategy pick, batch given in tokens, rope_scaling context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wanka.cli import main
from wanka.spec import load_scenario

ROOT = Path(__file__).resolve().parents[2]


def _args(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[str]:
    assert main(argv) == 0
    return list(json.loads(capsys.readouterr().out)["args"])


def test_megatron_export_names_the_strategy(capsys: pytest.CaptureFixture[str]) -> None:
    sc = load_scenario("llama3-405b-16k-h100-54d")
    assert sc.parallel is not None and sc.model is not None and sc.training is not None
    args = _args(capsys, ["plan", "llama3-405b-16k-h100-54d", "--export", "megatron", "--json"])
    assert f"--tensor-model-parallel-size {sc.parallel.tp}" in args
    assert f"--pipeline-model-parallel-size {sc.parallel.pp}" in args
    assert f"--global-batch-size {sc.training.global_batch_seqs}" in args
    assert f"--num-query-groups {sc.model.n_kv_heads}" in args
    assert ("--use-distributed-optimizer" in args) == (sc.parallel.zero >= 1)
    if sc.parallel.vpp > 1:
        assert any(a.startswith("--num-layers-per-virtual-pipeline-stage ") for a in args)


def test_nemo_export_and_moe(capsys: pytest.CaptureFixture[str]) -> None:
    sc = load_scenario("article-500b")
    assert sc.parallel is not None
    args = _args(capsys, ["plan", "article-500b", "--export", "nemo", "--json"])
    assert f"trainer.strategy.tensor_model_parallel_size={sc.parallel.tp}" in args
    assert f"trainer.strategy.context_parallel_size={sc.parallel.cp}" in args
    moe = [n for n in ("gpt4-25k-a100", "xai-colossus-100k-h100") if (s := load_scenario(n)).model and s.model.moe]
    if moe:
        margs = _args(capsys, ["plan", moe[0], "--export", "megatron", "--json"])
        assert any(a.startswith("--num-experts ") for a in margs)


def test_commands_pick_the_strategy_the_same_way(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text("base: traditional-512-a100\nparallel: null\njob_gpus: 512\n", encoding="utf-8")
    assert main(["plan", str(f), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["strategy_from"].startswith("wanka search")
    assert main(["reliability", str(f), "--replicas", "10", "--json"]) == 0  # used to refuse: no parallel block
    rel = json.loads(capsys.readouterr().out)
    assert rel["step_time_from"] == "engine"
    assert main(["facility", str(f), "--json"]) == 0
    fac = json.loads(capsys.readouterr().out)
    assert fac["utilization"] == pytest.approx(plan["mfu"], rel=1e-6)  # not the 40% fallback


def test_batch_tokens_rounded_and_printed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(
        "base: traditional-512-a100\ntraining:\n  tokens: 10T\n  batch_tokens: 16M\n  global_batch_seqs: null\n",
        encoding="utf-8",
    )
    assert main(["plan", str(f)]) == 2  # the batch given twice
    assert "give the batch once" in capsys.readouterr().err
    f.write_text(
        "cluster: {accelerator: H100, nodes: 64}\nmodel: llama3-8b\ntraining:\n  tokens: 10T\n  batch_tokens: 16M\n",
        encoding="utf-8",
    )
    sc = load_scenario(f)
    assert sc.training is not None and sc.training.tokens == 10e12
    exact = 16e6 / sc.seq_len
    assert sc.training.global_batch_seqs != exact and abs(sc.training.global_batch_seqs / exact - 1) < 0.07
    assert sc.training.global_batch_seqs % 64 == 0
    assert main(["plan", str(f)]) == 0
    assert "rounded to" in capsys.readouterr().out


def test_rope_scaling_context(tmp_path: Path) -> None:
    from wanka.spec.hf_import import model_from_hf_config

    base = json.loads((ROOT / "tests" / "data" / "hf_configs" / "Meta-Llama-3-8B.json").read_text("utf-8"))
    llama31 = {
        **base,
        "max_position_embeddings": 131072,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192},
    }
    m = model_from_hf_config(llama31, name="x")
    assert m.seq_len == 8192 and "pre-training context" in m.notes
    linear = {**base, "max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 4.0}}
    m = model_from_hf_config(linear, name="x")
    assert m.seq_len == 4096 and "extends" in m.notes


@pytest.mark.parametrize("schedule", ["zero_bubble", "dualpipe"])
def test_a_schedule_megatron_does_not_run_is_not_exported(
    schedule: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(
        "base: traditional-512-a100\n"
        f"parallel: {{tp: 8, pp: 4, dp: 16, vpp: 1, zero: 1, recompute: selective, pp_schedule: {schedule}}}\n",
        encoding="utf-8",
    )
    assert main(["plan", str(f), "--json"]) == 0  # the engine runs the schedule
    capsys.readouterr()
    for fmt in ("megatron", "nemo"):
        assert main(["plan", str(f), "--export", fmt]) == 2
        err = capsys.readouterr().err
        assert "parallel.pp_schedule" in err and "1f1b" in err and "Traceback" not in err
