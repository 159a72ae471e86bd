"""compare: JSON keys, the 线性加速比 reference, the job rule, languages, errors."""

from __future__ import annotations

import json

import pytest

from wanka.cli import main
from wanka.engine import BREAKDOWN_KEYS, estimate_step
from wanka.report import Comparison, compare
from wanka.report.compare import CHINCHILLA_TOKENS_PER_PARAM
from wanka.spec import load_model, load_scenario
from wanka.workload import parameter_count

SECTIONS = {
    "name",
    "description",
    "scale",
    "peak_flops",
    "job",
    "efficiency",
    "reliability",
    "network",
    "facility",
    "series",
    "same_job",
    "assumptions",
    "sources",
    "errors",
    "scenario_spec",
}


def test_json_keys(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "traditional-512-a100", "meta-24k-h100-roce", "--json", "--replicas", "20"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["job_mode"] == "own" and "scaling_efficiency" in d["definitions"]
    assert [c["name"] for c in d["clusters"]] == ["traditional-512-a100", "meta-24k-h100-roce"]
    for c in d["clusters"]:
        assert set(c) == SECTIONS
        assert set(c["efficiency"]["breakdown_s"]) == set(BREAKDOWN_KEYS)
        assert {"mfu", "exposed_comm_share", "scaling", "time_to_train_s"} <= set(c["efficiency"])
        assert {"failures_per_day", "job_mtbf_s", "checkpoint_save_s", "ettr", "wall_clock_s"} <= set(c["reliability"])
        assert {"tiers", "switches", "optics"} <= set(c["network"])
        assert {"it_power_w", "facility_power_w", "racks", "energy_j", "energy_cost_usd", "power_stack_w"} <= set(
            c["facility"]
        )
        assert c["series"]["ettr_vs_interval"] and c["series"]["failures_vs_size"]
        assert all({"origin", "text"} == set(a) for a in c["assumptions"])
        assert any(a["origin"] == "preset" for a in c["assumptions"])


def test_breakdown_and_shares_add_up(flagship: Comparison) -> None:
    for c in flagship.clusters:
        e = c.efficiency
        assert sum(e["breakdown_s"].values()) == pytest.approx(e["step_time_s"])
        comm = sum(e["breakdown_s"][k] for k in ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm"))
        assert e["exposed_comm_share"] == pytest.approx(comm / e["step_time_s"])
        stack = c.facility["power_stack_w"]
        assert sum(stack.values()) == pytest.approx(c.facility["facility_power_w"])


def test_scaling_reference_slice_by_hand(flagship: Comparison) -> None:
    trad, meta = flagship.clusters
    # traditional: tp 2 x pp 1, scale-up domain 8 -> dp_ref 4 -> 8 GPUs; Meta: tp 8 x pp 16 = 128 >= 8 -> dp_ref 1
    assert (trad.efficiency["scaling"]["reference_gpus"], trad.efficiency["scaling"]["reference_dp"]) == (8, 4)
    assert (meta.efficiency["scaling"]["reference_gpus"], meta.efficiency["scaling"]["reference_dp"]) == (128, 1)
    for c in flagship.clusters:
        sc = c.efficiency["scaling"]
        assert sc["efficiency"] == pytest.approx(sc["tokens_per_s_per_gpu"] / sc["reference_tokens_per_s_per_gpu"])
        assert 0.5 < sc["efficiency"] <= 1.0 + 1e-9


def test_same_job_block_uses_the_largest_clusters_job(flagship: Comparison) -> None:
    trad, meta = flagship.clusters
    assert meta.same_job is None  # it is the source
    sj = trad.same_job
    assert sj is not None and sj.source == "meta-24k-h100-roce" and sj.model == "llama3-405b"
    assert sj.gpus <= 512
    # the same 405B job on 512 A100 is years, on the 万卡 cluster months (the article's point)
    assert sj.time_to_train_s > 10 * meta.efficiency["time_to_train_s"]


def test_job_flag_puts_one_model_on_every_cluster() -> None:
    cmp = compare(
        [load_scenario("traditional-512-a100"), load_scenario("moore-threads-kuae-10k")], job="llama3-70b", replicas=20
    )
    tokens = CHINCHILLA_TOKENS_PER_PARAM * parameter_count(load_model("llama3-70b")).total
    assert cmp.job_mode == "same"
    for c in cmp.clusters:
        assert c.job["model"] == "llama3-70b" and c.job["tokens"] == pytest.approx(tokens)
        assert c.job["strategy_source"] == "picked"
        assert c.scale["job_gpus"] <= c.scale["accelerators"]
        assert any(a.origin == "service" and "wanka search" in a.text for a in c.assumptions)


def test_shared_search_returns_a_runnable_fitting_strategy() -> None:
    from wanka.service import choose_strategy

    s = load_scenario("article-500b")
    picked, choice = choose_strategy(s)
    r = estimate_step(picked)  # raises if infeasible or not fitting
    assert r.memory.fits and 0 < choice.feasible <= choice.evaluated
    st = r.strategy
    assert st["tp"] <= s.cluster.scale_up.domain_size
    assert s.training is not None and s.training.global_batch_seqs % (st["dp"] * st["micro_batch"]) == 0
    assert r.gpus in choice.gpus_tried and r.gpus <= s.cluster.accelerators


def test_compare_job_gives_the_strategy_wanka_search_gives(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """`compare A --job M` and `wanka search` on that job (same cluster, model, batch and GPU count) agree."""
    from wanka.spec import dump_yaml

    assert main(["compare", "xai-colossus-100k-h100", "--job", "llama3-70b", "--replicas", "10", "--json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    c = cmp["clusters"][0]
    spec = c["job"]["strategy_search"]
    assert spec is not None and c["job"]["strategy_source"] == "picked"
    st = c["job"]["strategy"]
    # the job as compare ran it, without its strategy, at the GPU count compare chose
    from wanka.spec import parse_scenario

    data = c["scenario_spec"]
    data["parallel"] = None
    data["job_gpus"] = c["scale"]["job_gpus"]
    path = tmp_path / "job.yaml"
    path.write_text(dump_yaml(parse_scenario(data)), encoding="utf-8")
    assert main(["search", str(path), "--top", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    best = out["strategies"][0] if isinstance(out, dict) else out[0]
    for k in ("tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "zero", "recompute"):
        assert best[k] == st[k], k
    # and the regression: not a bubble-bound layout (the old picker gave 9.9% MFU, 66% bubble)
    e = c["efficiency"]
    assert e["mfu"] > 0.2 and e["breakdown_s"]["pp_bubble"] / e["step_time_s"] < 0.3


def test_lang_zh_uses_the_articles_terms(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "traditional-512-a100", "meta-24k-h100-roce", "--lang", "zh", "--replicas", "20"]) == 0
    out = capsys.readouterr().out
    for term in ("高效训练", "长稳可靠", "有效训练时长", "线性加速比", "机房配套层"):
        assert term in out


def test_html_zh_has_terms_and_plots(tmp_path, flagship: Comparison) -> None:  # type: ignore[no-untyped-def]
    from wanka.report.html import render_compare_html

    page = render_compare_html(flagship, "zh")
    assert page.startswith("<!DOCTYPE html>") and 'lang="zh-CN"' in page
    for term in ("高效训练", "长稳可靠", "有效训练时长", "线性加速比", "四层一域"):
        assert term in page
    assert page.count('<img src="data:image/png;base64,') == 4
    assert "http://" not in page and "https://" not in page  # nothing to fetch


def test_plots_fall_back_to_english_without_a_cjk_font(monkeypatch: pytest.MonkeyPatch, flagship: Comparison) -> None:
    from wanka.report import plots

    monkeypatch.setattr(plots, "cjk_font", lambda: None)
    ps = plots.compare_plots(flagship, "zh")
    assert [p.id for p in ps] == ["breakdown", "ettr", "failures", "power"]
    assert all(p.lang == "en" for p in ps)


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "traditional-512-a100", "--lang", "fr"],
        ["compare", "no-such-preset"],
        ["compare", "traditional-512-a100", "--html", "out.txt"],
        ["compare", "traditional-512-a100", "--job", "no-such-model"],
        ["compare", "traditional-512-a100", "--job", "llama3-8b", "--tokens", "lots"],
    ],
)
def test_user_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "error:" in capsys.readouterr().err
