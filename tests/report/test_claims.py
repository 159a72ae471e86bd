"""The claims' arithmetic, recomputed by hand from the scenario inputs and the article's figures."""

from __future__ import annotations

import json
import math

import pytest
import yaml

from wanka.catalog import accelerator
from wanka.cli import main
from wanka.report import evaluate_claims, judge, load_claims
from wanka.report.claims import OPTIMISTIC_LIMIT

DAY = 86_400.0


@pytest.fixture(scope="module")
def results() -> dict[str, object]:
    return {r.id: r for r in evaluate_claims()}


def test_judge_rules_by_hand() -> None:
    assert judge(100, 120).verdict == "consistent"
    assert judge((90, 100), 95).factor == 1.0
    v = judge(100, 200)
    assert (v.verdict, v.factor, v.direction) == ("optimistic", 2.0, "article-favourable")
    v = judge(100, 100 * OPTIMISTIC_LIMIT * 1.01)
    assert v.verdict == "inconsistent" and v.direction == "article-favourable"
    v = judge(1095.75, 306.0)
    assert v.verdict == "inconsistent" and v.direction == "article-conservative"
    assert v.factor == pytest.approx(1095.75 / 306.0)
    assert judge((14, 30), 14 / 1.49).verdict == "consistent"
    assert judge(1, math.inf).verdict == "inconsistent"


def test_claims_file_has_what_each_claim_needs() -> None:
    ids = [c["id"] for c in load_claims()]
    assert len(ids) == len(set(ids))
    for must in (
        "article-500b-1000p",
        "article-500b-10000p",
        "gpt4-25k-a100",
        "gpt4-1000-h100",
        "meta-24k",
        "xai-100k",
        "huawei-16k",
        "china-mobile-wanka",
        "moore-threads-kuae",
        "five-principles",
        "four-layers-one-domain",
    ):
        assert must in ids


def test_quotes_are_verbatim_from_the_article(article: str | None) -> None:
    if article is None:
        pytest.skip("the seed article (shared/seed/wanka-cluster-article.zh.txt) is not on this machine")
    for c in load_claims():
        for part in c["quote"].split(" / "):
            assert part.strip() in article, (c["id"], part)


def test_500b_on_1000p_arithmetic(results: dict) -> None:
    r = results["article-500b-1000p"]
    v = r.values
    tokens = 15e12 / 4  # 15 TB at 4 bytes per token (the stated assumption)
    assert v["tokens"] == tokens
    assert v["flops_6nd"] == pytest.approx(6 * 5e11 * tokens) == pytest.approx(1.125e25)
    assert v["days"] == pytest.approx(v["flops"] / (1e18 * v["mfu"]) / DAY)
    # three years at 1,000 PFLOPS implies this MFU; with 6ND alone it is 1.125e25 / (1e18 * 3 * 365.25 * 86400)
    assert v["implied_mfu"] == pytest.approx(v["flops"] / (1e18 * 1095.75 * DAY))
    assert 0.118 <= v["implied_mfu"] < 0.14
    assert "4 B per token" in r.arithmetic[0]
    assert r.verdict == judge(1095.75, v["days"]).verdict


def test_10000p_deadline_arithmetic(results: dict) -> None:
    r = results["article-500b-10000p"]
    v = r.values
    for d in (14, 30):
        assert v["peak_needed_flops"][str(float(d))] == pytest.approx(v["flops"] / (v["mfu"] * d * DAY))
    assert v["days"] == pytest.approx(v["flops"] / (1e19 * v["mfu"]) / DAY)
    assert "110 days" in r.explanation  # 3 years x 1,000 P / 10,000 P = 109.6 days: the article's own figures


def test_gpt4_on_1000_h100_is_inconsistent(results: dict) -> None:
    r = results["gpt4-1000-h100"]
    v = r.values
    assert v["cards_needed"] == pytest.approx(v["gpus_used"] * v["days_on_claimed_cards"] / 100)
    assert r.verdict == "inconsistent" and r.factor == pytest.approx(v["cards_needed"] / 1000)
    # 24,960 A100 -> 1,000 H100 in the same time needs a ~25x per-card speed-up; the engine's is far less,
    # and at most a few times the dense-peak ratio (3.2x BF16)
    needed = 24_960 / 1000
    peak_ratio = accelerator("H100-SXM5-80GB").peak("bf16") / accelerator("A100-SXM4-80GB").peak("bf16")
    assert peak_ratio == pytest.approx(3.17, abs=0.01)
    assert v["per_gpu_speedup"] < needed / 2


def test_gpt4_25k_days_follow_from_the_engine(results: dict) -> None:
    v = results["gpt4-25k-a100"].values
    assert v["days_wall"] >= v["days_steady"]
    assert v["days_wall"] == pytest.approx(v["days_steady"] / v["ettr"], rel=0.05)


@pytest.mark.parametrize(
    ("cid", "preset", "published"),
    [
        ("meta-24k", "meta-24k-h100-roce", 24_576),
        ("xai-100k", "xai-colossus-100k-h100", 100_000),
        ("huawei-16k", "huawei-ascend-16k", 16_000),
    ],
)
def test_scale_points_match_the_published_counts(results: dict, cid: str, preset: str, published: int) -> None:
    from importlib import resources

    raw = yaml.safe_load((resources.files("wanka") / "scenarios" / f"{preset}.yaml").read_text(encoding="utf-8"))
    n = raw["cluster"]["nodes"] * raw["cluster"].get("gpus_per_node", 8)
    r = results[cid]
    assert r.values["accelerators"] == n == published
    assert r.verdict == "consistent"


def test_principles_silent_and_layers_mapped(results: dict) -> None:
    p = results["five-principles"]
    assert p.verdict == "unverifiable" and "lists none" in p.explanation
    m = results["four-layers-one-domain"]
    assert m.verdict == "mapped"
    for layer in ("机房配套层", "基础设施层", "智算平台层", "应用使能层", "智算运营和运维域"):
        assert any(line.startswith(layer) for line in m.arithmetic)


def test_speedup_is_linear_not_exponential(results: dict) -> None:
    v = results["exponential-efficiency"].values
    assert v["speedup"] == pytest.approx(v["gpu_ratio"] * v["peak_ratio"] * v["efficiency"])
    assert v["efficiency"] <= 1.05


def test_claims_json_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["claims", "meta-24k", "five-principles", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in data] == ["meta-24k", "five-principles"]
    for d in data:
        assert {"id", "statement", "computed", "verdict", "explanation"} <= set(d)


def test_claims_zh_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["claims", "huawei-16k", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "华为昇腾" in out and "一致" in out
    assert main(["claims", "no-such-claim"]) == 2
    assert main(["claims", "--lang", "fr"]) == 2


def test_every_claim_is_explained_in_chinese(results: dict) -> None:  # type: ignore[type-arg]
    import re

    for cid, r in results.items():
        assert re.search(r"[\u4e00-\u9fff]", r.explanation_zh), cid
        assert r.computed_zh and "days" not in r.computed_zh, cid
    # the same numbers as the English explanation
    r = results["article-500b-1000p"]
    assert f"{r.values['days']:,.1f}" in r.explanation_zh and f"{r.values['days']:,.1f}" in r.explanation
