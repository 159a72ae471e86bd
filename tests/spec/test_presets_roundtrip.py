"""Every preset loads, round-trips YAML/JSON exactly and carries sources; bad input is a SpecError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from wanka.errors import SpecError
from wanka.spec import (
    Scenario,
    dump_json,
    dump_yaml,
    list_model_presets,
    list_presets,
    load_model,
    load_scenario,
    parse_model,
    parse_scenario,
)

REQUIRED_SCENARIOS = {
    "traditional-512-a100",
    "meta-24k-h100-roce",
    "meta-24k-h100-ib",
    "llama3-405b-16k-h100-54d",
    "xai-colossus-100k-h100",
    "huawei-ascend-16k",
    "china-mobile-wanka",
    "moore-threads-kuae-10k",
    "gpt4-25k-a100",
    "article-500b",
}
REQUIRED_MODELS = {
    "gpt3-175b",
    "llama3-8b",
    "llama3-70b",
    "llama3-405b",
    "mixtral-8x7b",
    "mixtral-8x22b",
    "deepseek-v2",
    "deepseek-v3",
    "gpt4-1.8t-moe",
    "dense-500b",
}


def test_required_presets_exist() -> None:
    assert set(list_presets()) >= REQUIRED_SCENARIOS
    assert set(list_model_presets()) >= REQUIRED_MODELS


@pytest.mark.parametrize("name", list_presets())
def test_scenario_roundtrip_yaml_and_json(name: str) -> None:
    s = load_scenario(name)
    again = parse_scenario(yaml.safe_load(dump_yaml(s)))
    assert again == s
    assert dump_yaml(again) == dump_yaml(s)
    assert Scenario.model_validate(json.loads(dump_json(s))) == s


@pytest.mark.parametrize("name", list_model_presets())
def test_model_roundtrip(name: str) -> None:
    m = load_model(name)
    assert m.name == name
    assert parse_model(yaml.safe_load(dump_yaml(m))) == m
    assert len(m.source) > 20


@pytest.mark.parametrize("name", list_presets())
def test_scenario_has_sources_assumptions_and_a_consistent_job(name: str) -> None:
    s = load_scenario(name)
    assert s.name == name
    assert s.description and s.sources and s.assumptions
    if s.parallel is not None:
        p, m = s.parallel, s.model
        assert m is not None
        assert p.tp <= s.cluster.scale_up.domain_size  # tp stays inside the scale-up domain
        assert m.n_heads % p.tp == 0 and m.n_kv_heads % p.tp == 0
        assert p.world_size <= s.cluster.accelerators
        if s.training is not None:
            assert s.training.global_batch_seqs % p.dp == 0  # whole sequences per replica
        if m.moe is not None:
            assert m.moe.n_experts % p.ep == 0


def test_published_llama3_405b_job() -> None:
    # Llama 3 paper Table 4: 16,384 GPUs, tp 8, cp 1, pp 16, dp 128, seq 8192, 16M tokens per batch
    s = load_scenario("meta-24k-h100-roce")
    assert s.cluster.accelerators == 24_576
    assert (s.parallel.tp, s.parallel.pp, s.parallel.dp, s.parallel.cp) == (8, 16, 128, 1)  # type: ignore[union-attr]
    assert s.gpus == 16_384
    assert s.training is not None and s.training.global_batch_seqs * s.seq_len == 16_777_216
    assert s.training.tokens == pytest.approx(15.6e12)


def test_base_variant_inherits_and_overrides() -> None:
    ib = load_scenario("meta-24k-h100-ib")
    roce = load_scenario("meta-24k-h100-roce")
    assert ib.cluster.fabric.kind == "infiniband" and roce.cluster.fabric.kind == "roce"
    assert ib.cluster.nodes == roce.cluster.nodes and ib.model == roce.model
    d54 = load_scenario("llama3-405b-16k-h100-54d")
    assert d54.campaign_days == 54
    assert d54.failures.planned_interruptions_per_day == pytest.approx(47 / 54, rel=1e-3)  # Table 5


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(text, encoding="utf-8")
    return p


BASE = "cluster:\n  accelerator: H100\n  nodes: 4\n"


def test_unknown_key_rejected_with_line(tmp_path: Path) -> None:
    p = _write(tmp_path, BASE + "  nodez: 3\n")
    with pytest.raises(SpecError) as e:
        load_scenario(p)
    assert e.value.field == "cluster.nodez" and e.value.line == 4
    assert "unknown field" in str(e.value)


def test_wrong_type_rejected(tmp_path: Path) -> None:
    p = _write(tmp_path, "cluster:\n  accelerator: H100\n  nodes: four\n")
    with pytest.raises(SpecError) as e:
        load_scenario(p)
    assert e.value.field == "cluster.nodes" and "'four'" in str(e.value) and e.value.line == 3


@pytest.mark.parametrize("value", ["0", "-3"])
def test_non_positive_count_rejected(tmp_path: Path, value: str) -> None:
    p = _write(tmp_path, f"cluster:\n  accelerator: H100\n  nodes: {value}\n")
    with pytest.raises(SpecError) as e:
        load_scenario(p)
    assert e.value.field == "cluster.nodes" and value in str(e.value)


def test_absurd_cluster_rejected(tmp_path: Path) -> None:
    p = _write(tmp_path, "cluster:\n  accelerator: H100\n  nodes: 125000000000\n")  # 10^12 GPUs
    with pytest.raises(SpecError) as e:
        load_scenario(p)
    assert e.value.field == "cluster.nodes"


def test_world_size_mismatch_rejected(tmp_path: Path) -> None:
    p = _write(tmp_path, "base: traditional-512-a100\njob_gpus: 512\nparallel:\n  tp: 2\n  dp: 128\n")
    with pytest.raises(SpecError) as e:
        load_scenario(p)
    assert "tp·pp·dp·cp" in str(e.value) and "256" in str(e.value)


def test_world_size_larger_than_cluster_rejected(tmp_path: Path) -> None:
    p = _write(tmp_path, "base: traditional-512-a100\nparallel:\n  tp: 8\n  dp: 128\n")
    with pytest.raises(SpecError) as e:
        load_scenario(p)
    assert "1024" in str(e.value) and "512" in str(e.value)


def test_malformed_yaml_has_line(tmp_path: Path) -> None:
    p = _write(tmp_path, "cluster:\n  accelerator: H100\n  nodes: [4\n  gpus_per_node: 8\n")
    with pytest.raises(SpecError) as e:
        load_scenario(p)
    assert "malformed YAML" in str(e.value) and e.value.line is not None and e.value.line >= 3


def test_unknown_preset_lists_presets() -> None:
    with pytest.raises(SpecError) as e:
        load_scenario("no-such-preset")
    assert "traditional-512-a100" in str(e.value)


def test_readme_variant_example_loads(tmp_path: Path) -> None:
    readme = Path(__file__).resolve().parents[2] / "src" / "wanka" / "scenarios" / "README.md"
    text = readme.read_text(encoding="utf-8")
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    s = load_scenario(_write(tmp_path, block))
    assert s.cluster.fabric.nic_gbps_per_gpu == 800 and s.cluster.fabric.kind == "roce"
    assert s.training is not None and s.training.precision == "fp8"
    assert s.model is not None and s.model.seq_len == 16384 and s.model.n_layers == 126
