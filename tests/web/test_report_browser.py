"""The HTML report in a real headless chromium: no console errors, every plot decoded and shown,
no fetch beyond the file itself, a screenshot that is not blank, and a printable PDF.

Chromium is Debian's (`apt-get install -y chromium`); the test skips, saying so, only when it is missing.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cdp import Browser, PageReport, find_chromium

from wanka.cli import main

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
PLOTS = {"breakdown", "ettr", "failures", "power"}


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack("!II", png[16:24])
    return w, h


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    assert CHROMIUM is not None
    b = Browser(CHROMIUM, width=1280, height=1600)
    yield b
    b.close()


@pytest.fixture(scope="module")
def report_zh(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> PageReport:
    out = tmp_path_factory.mktemp("html") / "compare.html"
    assert (
        main(
            [
                "compare",
                "traditional-512-a100",
                "meta-24k-h100-roce",
                "--lang",
                "zh",
                "--replicas",
                "30",
                "--html",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    rep = browser.load(out)
    shot = tmp_path_factory.getbasetemp() / "compare-zh.png"
    shot.write_bytes(rep.screenshot_png)
    return rep


def test_no_console_errors_and_no_fetches(report_zh: PageReport) -> None:
    assert report_zh.errors == []
    assert report_zh.requests and report_zh.requests[0].startswith("file://")
    assert all(u.startswith(("file://", "data:")) for u in report_zh.requests)


def test_every_plot_is_decoded_and_shown(report_zh: PageReport) -> None:
    shown = {i["plot"] for i in report_zh.images if i["complete"] and i["width"] > 100 and i["shownHeight"] > 100}
    assert shown == PLOTS


def test_text_is_chinese_with_the_articles_terms(report_zh: PageReport) -> None:
    for term in ("高效训练", "长稳可靠", "有效训练时长", "线性加速比", "四层一域", "traditional-512-a100"):
        assert term in report_zh.text


def test_screenshot_and_print(report_zh: PageReport) -> None:
    w, h = _png_size(report_zh.screenshot_png)
    assert w >= 1000 and h > 2000  # the whole page, plots included
    assert len(report_zh.screenshot_png) > 100_000  # not a blank page
    assert report_zh.pdf.startswith(b"%PDF")
    assert report_zh.pdf.count(b"/Type /Page") + report_zh.pdf.count(b"/Type/Page") >= 3


def test_the_harness_sees_errors(tmp_path: Path, browser: Browser) -> None:
    """Negative control: a page with a console error, an exception and a missing image must be caught."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><body><img src="missing.png" data-plot="x">'
        '<script>console.error("boom"); throw new Error("kaput");</script></body></html>',
        encoding="utf-8",
    )
    rep = browser.load(bad, screenshot=False, pdf=False)
    assert any("boom" in e for e in rep.console_errors)
    assert any("kaput" in e for e in rep.exceptions)
    assert rep.failed_requests or rep.log_errors
    assert [i["width"] for i in rep.images] == [0]
