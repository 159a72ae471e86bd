"""Parameter counts against the published sizes of real models."""

import pytest

from wanka.spec import load_model
from wanka.workload import model_flops_per_token, parameter_count


@pytest.mark.parametrize(
    ("name", "total_b", "active_b"),
    [
        ("llama3-8b", 8.03, 8.03),  # Meta Llama 3 model card: 8.03B
        ("llama3-70b", 70.6, 70.6),  # 70.55B (HF safetensors metadata)
        ("llama3-405b", 405.9, 405.9),  # Llama 3 paper: 405B
        ("gpt3-175b", 175.0, 175.0),  # Brown et al. 2020: 175B
        ("mixtral-8x7b", 46.7, 12.9),  # Mistral AI: 46.7B total, 12.9B active
        ("deepseek-v3", 671.0, 37.5),  # DeepSeek-V3 report: 671B total (+14B MTP), 37B active
        ("deepseek-v2", 236.0, 21.0),  # DeepSeek-V2 report: 236B total, 21B active
    ],
)
def test_parameter_counts_match_published(name: str, total_b: float, active_b: float) -> None:
    model = load_model(name)
    # DeepSeek-V3's 671B / 37B exclude its multi-token-prediction module; the preset includes it
    p = parameter_count(model.model_copy(update={"mtp_layers": 0}))
    assert p.total / 1e9 == pytest.approx(total_b, rel=0.02)
    assert p.active / 1e9 == pytest.approx(active_b, rel=0.03)


def test_active_never_exceeds_total_and_dense_is_equal() -> None:
    for name in ("llama3-8b", "mixtral-8x22b", "deepseek-v3", "gpt4-1.8t-moe"):
        p = parameter_count(load_model(name))
        assert 0 < p.active <= p.total
        if load_model(name).moe is None:
            assert p.active == p.total


def test_model_flops_follow_palm_formula_for_dense() -> None:
    m = load_model("gpt3-175b")
    p = parameter_count(m)
    s = m.seq_len
    expected = 6 * p.non_embedding + 12 * m.n_layers * m.hidden * s  # PaLM App. B
    assert model_flops_per_token(m, s) == pytest.approx(expected, rel=1e-9)
