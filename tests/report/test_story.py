"""The story of the compare report: what-ifs from the service layer, the conclusion and the page's language."""

from __future__ import annotations

import re

import pytest

from wanka.report import Comparison
from wanka.report.html import render_compare_body
from wanka.report.i18n import definition, plain_words

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_story_numbers_come_from_the_reports(flagship: Comparison) -> None:
    st = flagship.story
    big = max(flagship.clusters, key=lambda c: c.scale["accelerators"])
    small = min(flagship.clusters, key=lambda c: c.scale["accelerators"])
    assert st["to"] == big.name and st["from"] == small.name
    assert st["headline"]["to"]["mfu"] == big.efficiency["mfu"]
    assert st["headline"]["from"]["ettr"] == small.reliability["ettr"]


def test_superpod_what_if_keeps_the_job_and_its_gpus(flagship: Comparison) -> None:
    rows = flagship.story["superpod"]["rows"]
    assert [r["label"] for r in rows] == ["8", "72", "384"]
    assert len({r["gpus"] for r in rows}) == 1
    for r in rows:
        assert r["strategy"]["tp"] <= int(r["label"])
        assert r["step_time_s"] * (1 - r["exposed_comm_share"]) > 0


def test_moe_dispatch_and_fp8_what_ifs(flagship: Comparison) -> None:
    moe = {r["label"]: r for r in flagship.story["moe"]["rows"]}
    assert moe["alltoall"]["strategy"] == moe["deepep"]["strategy"]
    # node-deduplicated dispatch sends each token once per node, never more than all-to-all does
    assert moe["deepep"]["ep_comm_s"] <= moe["alltoall"]["ep_comm_s"]
    # expert traffic exists exactly where experts are spread over ranks (ep > 1); the placement may
    # keep them tensor-parallel (ep 1, no all-to-all), but some what-if row dispatches tokens
    rows = [r for r in moe.values() if "strategy" in r]
    for r in rows:
        assert (r["ep_comm_s"] > 0) == (r["strategy"]["ep"] > 1), r
    assert any(r["strategy"]["ep"] > 1 for r in rows)
    fp8 = {r["label"]: r for r in flagship.story["fp8"]["rows"]}
    assert fp8["fp8"]["strategy"] == fp8["bf16"]["strategy"]
    assert fp8["fp8"]["step_time_s"] < fp8["bf16"]["step_time_s"]


def test_storage_and_energy_rows(flagship: Comparison) -> None:
    names = [c.name for c in flagship.clusters]
    assert [x["name"] for x in flagship.story["storage"]] == names
    for x, c in zip(flagship.story["energy"], flagship.clusters, strict=True):
        assert x["energy_j"] == pytest.approx(c.facility["energy_j"])
    for x in flagship.story["storage"]:
        d = x["data_read"]
        assert d["supply_bytes_per_s"] > 0 and d["ok"] == (d["demand_bytes_per_s"] <= d["supply_bytes_per_s"])


def test_zh_page_speaks_chinese(flagship: Comparison) -> None:
    page = render_compare_body(flagship, "zh")
    assert page.index('id="story"') < page.index('id="summary"')  # conclusion on top
    for term in ("结论", "四层一域", "超节点", "MoE 与 All2All", "FP8", "并行存储", "能耗", "高效训练", "长稳可靠"):
        assert term in page, term
    dts = re.findall(r"<dt>(.*?)</dt>", page)
    assert dts and all(CJK.search(t) and not re.search(r"[a-z]+_[a-z]+", t) for t in dts)
    en = render_compare_body(flagship, "en")
    assert "Conclusion" in en and "Supernode" in en


def test_assumptions_in_plain_words() -> None:
    t = plain_words("cannot be expressed by FabricSpec.oversubscription (one ratio)", "en")
    assert "FabricSpec" not in t and "cluster.fabric.oversubscription" in t
    z = plain_words("no spare nodes: every hardware failure waits failures.repair_s for a repaired node", "zh")
    assert CJK.search(z) and "failures.repair_s" in z
    title, text = definition("ettr", "x", "zh")
    assert CJK.search(title) and CJK.search(text)


def test_assumption_texts_arrive_whole(flagship: Comparison) -> None:
    """No assumption is cut off on its way to the page (the PUE note once ended in "(indust…)")."""
    import html as html_lib

    from wanka.facility import facts

    air = facts().cooling_type("air").source
    notes = [a.text for c in flagship.clusters for a in c.assumptions]
    pue = [t for t in notes if t.startswith("PUE ") and "typical for" in t]
    assert pue and all(not t.endswith("…)") and "…" not in t for t in pue)
    assert any(air in t for t in pue)  # the whole facility.yaml source, not its first 60 characters
    for lang in ("en", "zh"):
        page = html_lib.unescape(render_compare_body(flagship, lang))
        assert air in page, lang


def test_terminal_shows_the_what_ifs(flagship: Comparison) -> None:
    """`wanka compare --what-ifs` prints the story's what-ifs in the terminal too (it computed them and
    printed only the summary before): each what-if's rows, with the strategy and step of the data."""
    import io

    from rich.console import Console

    from wanka.report.terminal import compare_renderable

    con = Console(width=160, file=io.StringIO())
    con.print(compare_renderable(flagship, "en", assumptions=False))
    out = con.file.getvalue()  # type: ignore[attr-defined]
    assert "Supernode (超节点)" in out and "MoE and All2All" in out and "FP8 vs BF16" in out
    for part in ("superpod", "moe", "fp8"):
        for r in flagship.story[part]["rows"]:
            line = next(x for x in out.splitlines() if x.startswith(f"{r['label']} "))
            assert f"{r['step_time_s']:.2f} s" in line and f"TP{r['strategy']['tp']}·PP{r['strategy']['pp']}" in line
