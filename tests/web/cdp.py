"""A minimal Chrome DevTools Protocol client (stdlib only) for the headless-chromium report tests.

Why not Playwright: it is not a project dependency and its Python package wants to download its own
browser; Debian's chromium plus ~150 lines of websocket code gives the same checks (console errors,
exceptions, failed or external requests, image decoding, a screenshot, print to PDF) with nothing new
to install from PyPI.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--mute-audio",
)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        p = shutil.which(name)
        if p:
            return p
    return None


class _WebSocket:
    """Just enough RFC 6455 for CDP: client text frames (masked), server frames of any size."""

    def __init__(self, url: str, timeout: float) -> None:
        m = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        assert m, url
        host, port, path = m.group(1), int(m.group(2)), m.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        req = (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            head += chunk
        status, _, rest = head.partition(b"\r\n\r\n")
        if b" 101 " not in status.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"websocket handshake failed: {status[:80]!r}")
        self.buf = rest

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, text: str) -> None:
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            head = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 1 << 16:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(head + mask + masked)

    def recv(self) -> str:
        parts: list[bytes] = []
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack("!H", self._read(2))
            elif n == 127:
                (n,) = struct.unpack("!Q", self._read(8))
            payload = self._read(n)
            op = b0 & 0x0F
            if op == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if op in (0x9, 0xA):  # ping/pong: ignore
                continue
            parts.append(payload)
            if b0 & 0x80:
                return b"".join(parts).decode()

    def close(self) -> None:
        self.sock.close()


@dataclass
class PageReport:
    """What the browser saw while loading one page."""

    console_errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    log_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every URL the page asked for
    failed_requests: list[str] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
    screenshot_png: bytes = b""
    pdf: bytes = b""

    @property
    def errors(self) -> list[str]:
        return self.console_errors + self.exceptions + self.log_errors + self.failed_requests


class Browser:
    """A headless chromium with the remote-debugging port open, driven over CDP."""

    def __init__(self, exe: str, *, width: int = 1280, height: int = 2000, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="wanka-chromium-")
        self.proc = subprocess.Popen(
            [
                exe,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={self.profile}",
                "--remote-debugging-port=0",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.ws: _WebSocket | None = None
        self._id = 0
        self.events: list[dict[str, Any]] = []
        try:
            port = self._port()
            deadline = time.time() + timeout
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                        targets = json.load(r)
                    page = next(t for t in targets if t.get("type") == "page")
                    break
                except (OSError, StopIteration):
                    if time.time() > deadline:
                        raise
                    time.sleep(0.1)
            self.ws = _WebSocket(page["webSocketDebuggerUrl"], timeout)
        except Exception:
            self.close()
            raise

    def _port(self) -> int:
        assert self.proc.stderr is not None
        deadline = time.time() + self.timeout
        seen = []
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                if self.proc.poll() is not None:
                    break
                continue
            seen.append(line)
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if m:
                return int(m.group(1))
        raise RuntimeError("chromium did not open its DevTools port: " + "".join(seen[-5:]))

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        assert self.ws is not None
        self._id += 1
        my = self._id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                result: dict[str, Any] = msg.get("result", {})
                return result
            if "method" in msg:
                self.events.append(msg)

    def wait_for(self, event: str) -> None:
        assert self.ws is not None
        deadline = time.time() + self.timeout
        while time.time() < deadline:
            if any(e["method"] == event for e in self.events):
                return
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
        raise TimeoutError(event)

    def evaluate(self, expr: str) -> Any:
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        return r["result"].get("value")

    def load(self, path: Path, *, screenshot: bool = True, pdf: bool = True) -> PageReport:
        """Open ``path`` (file://), wait for load, and collect what went wrong and what it shows."""
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.events.clear()
        self.call("Page.navigate", url=path.resolve().as_uri())
        self.wait_for("Page.loadEventFired")
        self.evaluate("Promise.all(Array.from(document.images).map(i => i.decode().catch(() => null)))")
        rep = PageReport()
        rep.images = (
            self.evaluate(
                "Array.from(document.images).map(i => ({plot: i.dataset.plot || null, complete: i.complete, "
                "width: i.naturalWidth, height: i.naturalHeight, shownWidth: i.getBoundingClientRect().width, "
                "shownHeight: i.getBoundingClientRect().height}))"
            )
            or []
        )
        rep.text = self.evaluate("document.body.innerText") or ""
        if screenshot:
            rep.screenshot_png = base64.b64decode(
                self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
            )
        if pdf:
            rep.pdf = base64.b64decode(self.call("Page.printToPDF", preferCSSPageSize=True)["data"])
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                rep.console_errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                rep.exceptions.append(d.get("exception", {}).get("description") or d.get("text", "exception"))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                rep.log_errors.append(p["entry"].get("text", ""))
            elif m == "Network.requestWillBeSent":
                rep.requests.append(p["request"]["url"])
            elif m == "Network.loadingFailed":
                rep.failed_requests.append(f"request failed: {p.get('errorText')} {p.get('blockedReason', '')}")
        return rep

    def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(OSError):
                self.ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)
