"""A scenario's `assumptions:` entries are a string (English) or `{en: ..., zh: ...}`; every built-in
preset gives both, and each face shows the reader's language (English where no translation is given)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from wanka.errors import SpecError
from wanka.report.i18n import plain_words
from wanka.spec import list_presets, load_scenario
from wanka.spec.scenario import Scenario
from wanka.spec.text import Note, in_lang


def _cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


@pytest.mark.parametrize("name", list_presets())
def test_every_preset_assumption_has_chinese(name: str) -> None:
    s = load_scenario(name)
    assert s.assumptions, name
    for a in s.assumptions:
        assert isinstance(a, Note) and a.zh, (name, str(a)[:60])
        assert _cjk(a.zh), (name, a.zh[:60])
        assert a.in_lang("en") == str(a) and not _cjk(str(a).replace("万卡", ""))
        assert plain_words(a, "zh") == a.zh or _cjk(plain_words(a, "zh"))


def _write(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text("base: traditional-512-a100\nassumptions:\n" + body, encoding="utf-8")
    return p


def test_string_and_mapping_entries(tmp_path: Path) -> None:
    body = '  - plain English\n  - {en: "in English", zh: "中文说明"}\n  - {en: only en}\n'
    s = load_scenario(str(_write(tmp_path, body)))
    texts = [in_lang(a, "zh") for a in s.assumptions]
    assert "plain English" in texts and "中文说明" in texts and "only en" in texts  # fallback: never dropped
    assert [in_lang(a, "en") for a in s.assumptions][-3:] == ["plain English", "in English", "only en"]
    # JSON of the scenario keeps both texts and reads back to the same scenario
    dumped = s.model_dump(mode="json")
    assert {"en": "in English", "zh": "中文说明"} in dumped["assumptions"]
    again = Scenario.model_validate(json.loads(json.dumps(dumped)))
    assert [a.zh for a in again.assumptions] == [getattr(a, "zh", "") for a in s.assumptions]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("  - {zh: 只有中文}\n", "en required"),
        ("  - {en: x, fr: y}\n", "unknown keys: fr"),
        ("  - 3\n", "must be a string or a mapping"),
        ('  - {en: "x", zh: 5}\n', "zh must be a string"),
        ('  - ""\n', "must not be empty"),
    ],
)
def test_bad_entries_name_the_field(tmp_path: Path, body: str, why: str) -> None:
    with pytest.raises(SpecError) as e:
        load_scenario(str(_write(tmp_path, body)))
    assert "assumptions" in str(e.value) and why in str(e.value)


def test_schema_shows_both_forms() -> None:
    items = Scenario.model_json_schema()["properties"]["assumptions"]["items"]
    kinds = {alt.get("type") for alt in items["anyOf"]}
    assert kinds == {"string", "object"}
    obj = next(alt for alt in items["anyOf"] if alt.get("type") == "object")
    assert obj["required"] == ["en"] and set(obj["properties"]) == {"en", "zh"}


def test_report_and_terminal_show_the_readers_language() -> None:
    from rich.console import Console

    from wanka.report.compare import compare
    from wanka.report.html import render_compare_body
    from wanka.report.terminal import compare_renderable

    s = load_scenario("traditional-512-a100")
    zh_text, en_text = s.assumptions[0].zh, str(s.assumptions[0])
    cmp = compare([s], replicas=20)
    html_zh, html_en = render_compare_body(cmp, "zh"), render_compare_body(cmp, "en")
    assert zh_text in html_zh and "A representative cluster" not in html_zh
    assert "A representative cluster" in html_en and zh_text not in html_en
    for lang, want, not_want in (("zh", zh_text[:20], en_text[:25]), ("en", en_text[:25], zh_text[:20])):
        con = Console(width=400, record=True, file=io.StringIO())
        con.print(compare_renderable(cmp, lang))
        text = con.export_text()
        assert want in text and not_want not in text, lang
