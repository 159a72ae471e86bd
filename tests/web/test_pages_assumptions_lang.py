"""The planner page shows a preset's assumptions in the page's language (English where none is given)."""

from __future__ import annotations

import html
from typing import Any

from wanka.spec import load_scenario

P = "traditional-512-a100"


def _assumptions(page: str) -> str:
    """The page's assumptions section (the YAML section shows the scenario as written, both texts)."""
    part = page.split('<section id="assumptions">', 1)[1].split("</section>", 1)[0]
    return html.unescape(part)


def test_planner_assumptions_follow_the_page_language(client: Any) -> None:
    first = load_scenario(P).assumptions[0]
    zh = _assumptions(client.get(f"/planner?preset={P}&lang=zh").text)
    en = _assumptions(client.get(f"/planner?preset={P}").text)
    assert first.zh in zh and str(first) not in zh
    assert str(first) in en and first.zh not in en
