"""`--lang zh` on every command: the labels of the text output come out in Chinese (from the one label
table, `wanka.cli.lang.LABELS`), JSON is byte-identical to `--lang en`, and every built-in preset's
assumptions have a Chinese text that the CLI, the report and the pages show."""

from __future__ import annotations

import re

import pytest

from wanka.cli import main
from wanka.cli.app import console
from wanka.cli.lang import LABELS

P = "traditional-512-a100"

# argv (without --lang and --json), and the Chinese labels its text output must show
COMMANDS: list[tuple[list[str], list[str]]] = [
    (["plan", P], ["步时", "每卡显存", "训练时长", "前向+反向计算", "假设"]),
    (["search", P, "--top", "3"], ["并行布局", "重计算", "场景给定策略"]),
    (["reliability", P, "--replicas", "20"], ["墙钟时间", "中断次数", "解析解", "损失卡时"]),
    (["facility", P], ["机房总功率", "制冷与供配电损耗", "电价"]),
    (["storage", P], ["训练阻塞", "落盘到文件系统", "重启加载"]),
    (["fabric", P], ["层级", "收敛比", "对分带宽"]),
    (["collective", "--gpus", "16", "--bytes", "1M", "--flow"], ["耗时", "路由", "最热链路"]),
    (["validate"], ["预测", "实测", "稳态"]),
    (["schedule", "--cluster", P, "--synthetic", "acme-seren", "--jobs", "100"], ["完成", "排队时延 均值", "碎片率"]),
    (["show", P], ["加速卡", "超节点/机内互联", "参数面网络"]),
    (["presets"], ["场景预设", "模型预设", "名称"]),
    (["catalog", "--kind", "accelerators"], ["名称", "来源"]),
]

_SHORT = 6  # shorter table words ("of", "on", "load") are too common inside values to check
# English words that are values there, not labels: a case kind, a unit in a title, a wall-clock source,
# the optics' positions from the network layer
_VALUES = {
    # per-case notes in the table are the validation layer's own words ("no layout fits ...", "global batch
    # must be divisible ..."), which stay as the layer wrote them
    "validate": {"campaign", "tokens/s/GPU", "global batch", "layout"},
    "facility": {"campaign"},
    "fabric": {"switch"},
}
# lines of notes written by the layers (assumptions, planner reasons), which stay as the layers wrote them
_NOTE_LINE = re.compile(
    r"^(  · |  (note|注|source|来源): | (note|注)  |\s+#\d+\s| (assumptions|假设|operating|运维假设)\s|\s{16})"
)


# commands whose table cells are catalog or preset data (descriptions, sources): check the headers
_HEADERS_ONLY = {"presets", "catalog"}


def _labels_only(text: str, command: str) -> str:
    lines = text.splitlines()
    if command in _HEADERS_ONLY:
        return "\n".join(ln for ln in lines if "┃" in ln)
    return "\n".join(ln for ln in lines if not _NOTE_LINE.match(ln))


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 0, argv
    return capsys.readouterr().out


def _labels_in(text: str) -> set[str]:
    """The table's English labels (long enough to be unambiguous) that ``text`` shows as whole words."""
    return {
        en
        for en, zh in LABELS.items()
        if en != zh and len(en) >= _SHORT and re.search(r"(?<![\w.])" + re.escape(en) + r"(?![\w.])", text)
    }


@pytest.mark.parametrize(("argv", "zh_labels"), COMMANDS, ids=[c[0][0] for c in COMMANDS])
def test_lang_zh_labels_and_same_json(
    argv: list[str], zh_labels: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console, "_width", 250)  # wide enough that no table cell is cut
    en = _run(["--lang", "en", *argv], capsys)
    zh = _run(["--lang", "zh", *argv], capsys)
    for w in zh_labels:
        assert w in zh, (argv, w)
        assert w not in en, (argv, w)
    shown_en = _labels_in(_labels_only(en, argv[0])) - _VALUES.get(argv[0], set())
    assert shown_en, argv  # the English output uses the table
    left = _labels_in(_labels_only(zh, argv[0])) - _VALUES.get(argv[0], set())
    assert not left, (argv, sorted(left))  # no English label of the table remains in the Chinese output
    # JSON: byte-identical whatever the language
    j_en = _run(["--lang", "en", *argv, "--json"], capsys)
    j_zh = _run(["--lang", "zh", *argv, "--json"], capsys)
    if argv[0] == "search":  # the search's wall time is the one field that varies between runs
        j_en, j_zh = (re.sub(r'"elapsed_s": [\d.e-]+', "", j) for j in (j_en, j_zh))
    assert j_zh == j_en, argv


def test_wanka_lang_env_is_the_default(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WANKA_LANG", "zh")
    assert "步时" in _run(["plan", P], capsys)
    assert "step time" in _run(["--lang", "en", "plan", P], capsys)  # the flag wins over the variable


def test_claims_explanations_in_chinese(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    monkeypatch.setattr(console, "_width", 250)
    ids = ["exponential-efficiency", "five-principles"]
    zh = _run(["--lang", "zh", "claims", *ids], capsys)
    results = json.loads(_run(["--lang", "zh", "claims", *ids, "--json"], capsys))
    assert [r["id"] for r in results] == ids
    for r in results:
        assert r["explanation_zh"] and r["explanation_zh"] != r["explanation"]
        assert r["explanation_zh"][:30] in zh, r["id"]
        assert r["explanation"][:40] not in zh, r["id"]
