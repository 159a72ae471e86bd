"""The pages in a real browser: Playwright for Python driving Debian's chromium (headless) against a
`wanka serve` this test starts on 127.0.0.1. Load a preset, change a knob, see the result change,
switch language, use the keyboard, take screenshots.

Chromium is Debian's (`apt-get install chromium`); Playwright never downloads a browser here. The test
skips, saying so, only when chromium or the playwright package is missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pw = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
CHROMIUM = next((p for p in (shutil.which("chromium"), "/usr/bin/chromium") if p and Path(p).exists()), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    db = tmp_path_factory.mktemp("serve") / "runs.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "wanka", "serve", "--host", "127.0.0.1", "--port", str(port), "--db", str(db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                with urllib.request.urlopen(url + "/api/presets", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
            if proc.poll() is not None:
                raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "wanka serve exited")
        else:
            raise RuntimeError("wanka serve did not answer in 20 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.fixture(scope="module")
def page(server: str) -> Iterator[Any]:
    with pw.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        pg = ctx.new_page()
        pg.set_default_timeout(60_000)
        external: list[str] = []
        errors: list[str] = []
        pg.on("request", lambda r: external.append(r.url) if not r.url.startswith((server, "data:")) else None)
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.external = external  # type: ignore[attr-defined]
        pg.errors = errors  # type: ignore[attr-defined]
        yield pg
        browser.close()


def _shot(page: Any, name: str) -> Path:
    out = Path(os.environ.get("WANKA_SCREENSHOTS", "") or (Path(__file__).parent / ".screenshots"))
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.png"
    png = page.screenshot(path=str(path), full_page=True)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000  # not blank
    return path


def test_load_preset_change_knob_switch_language(page: Any, server: str) -> None:
    page.goto(server + "/planner?lang=en")
    page.select_option("#preset", "traditional-512-a100")
    page.click("#load")
    page.wait_for_selector("#h-mfu")
    assert page.input_value("#k-nodes") == "64"
    mfu_before = page.inner_text("#h-mfu dd")
    dp_before = page.inner_text("#h-step dd")
    assert "traditional-512-a100" in page.inner_text("#results-h")
    for chart in ("breakdown", "memory", "timeline", "ettr", "ettr_size", "power"):
        assert page.locator(f"#chart-{chart} svg").count() == 1, chart
    assert "%" in page.text_content("#chart-ettr svg")  # ETTR axis in percent
    _shot(page, "planner-en")
    # change a knob: a 25 Gb/s NIC per GPU makes data-parallel communication exposed
    page.fill("#k-nic", "25")
    page.click("#run")
    page.wait_for_selector("#h-mfu")
    assert page.input_value("#k-nic") == "25"
    assert page.inner_text("#h-step dd") != dp_before
    assert float(page.inner_text("#h-mfu dd").rstrip("%")) < float(mfu_before.rstrip("%"))
    assert "nic_gbps_per_gpu: 25" in page.inner_text("#yaml")
    share = page.input_value("#share-url")
    assert "cluster.fabric.nic_gbps_per_gpu=25" in share
    # switch language: same state, Chinese labels
    page.click("#lang-switch")
    page.wait_for_selector("#h-mfu")
    assert page.get_attribute("html", "lang") == "zh-CN"
    assert "模型算力利用率" in page.inner_text("#h-mfu dt") and page.input_value("#k-nic") == "25"
    assert "有效训练时长" in page.inner_text("#results")
    _shot(page, "planner-zh")
    # the shared URL reproduces the result in a fresh page
    page.goto(share)
    assert page.input_value("#k-nic") == "25"
    assert not page.external, page.external  # nothing fetched from outside the server
    assert not page.errors, page.errors


def test_keyboard_only(page: Any, server: str) -> None:
    page.goto(server + "/planner?lang=en&preset=traditional-512-a100&load=1")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    # tab to the precision select and the Plan button, submit with the keyboard
    page.focus("#k-ckpt")
    before = page.input_value("#k-ckpt")
    page.keyboard.press("ArrowUp" if before == "in_memory" else "ArrowDown")
    after = page.input_value("#k-ckpt")
    assert after != before
    for _ in range(3):
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "run"
    page.keyboard.press("Enter")
    page.wait_for_selector("#h-mfu")
    assert page.input_value("#k-ckpt") == after


def test_bad_input_shows_the_field(page: Any, server: str) -> None:
    page.goto(server + "/planner?lang=en&preset=traditional-512-a100&cluster.nodes=0")
    assert "cluster.nodes" in page.inner_text("#error")


def test_compare_claims_runs_pages(page: Any, server: str) -> None:
    page.goto(server + "/compare?lang=zh&a=traditional-512-a100&b=meta-24k-h100-roce")
    page.wait_for_selector("#summary")
    text = page.inner_text("main")
    for term in ("高效训练", "长稳可靠", "有效训练时长", "超节点"):
        assert term in text, term
    assert page.locator("#story").count() == 1
    imgs = page.locator("#plots img")
    assert imgs.count() >= 4
    for i in range(imgs.count()):
        assert page.evaluate("(el) => el.naturalWidth", imgs.nth(i).element_handle()) > 100
    _shot(page, "compare-zh")
    page.click("#lang-switch")
    page.wait_for_selector("#summary")
    assert page.get_attribute("html", "lang") == "en"
    page.goto(server + "/claims?lang=zh")
    assert page.locator("tr[id^=claim-]").count() >= 10
    assert "一致" in page.inner_text("main")
    _shot(page, "claims-zh")
    page.goto(server + "/planner?lang=en&preset=traditional-512-a100&load=1")
    page.click("#save")
    page.wait_for_selector("#runs")
    assert "traditional-512-a100" in page.inner_text("#runs")
    _shot(page, "runs-en")
    assert not page.external, page.external
