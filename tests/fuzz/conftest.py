"""Helpers of the fuzz suite: run one CLI call in-process under a time limit and check its outcome."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from wanka.cli import main

CASE_TIMEOUT_S = 20  # a case that runs longer is a hang


@dataclass
class Outcome:
    code: int
    out: str
    err: str


class Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise Hang


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} in JSON output")


def strict_json(text: str) -> Any:
    """Parse JSON as a strict reader does: NaN and Infinity are errors."""
    return json.loads(text, parse_constant=_no_constant)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Iterator[Any]:
    """``cli(argv)`` runs ``wanka argv`` in-process under :data:`CASE_TIMEOUT_S` and checks the
    invariants every call must keep: exit 0 or 2, no traceback, no internal error, every stderr
    line of a failure starting with ``error:``, and strict JSON on stdout for ``--json``."""

    def run(argv: list[str], timeout: int = CASE_TIMEOUT_S) -> Outcome:
        capsys.readouterr()
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(timeout)
        try:
            code = main([str(a) for a in argv])
        except Hang:
            pytest.fail(f"hang: wanka {' '.join(map(str, argv))} ran longer than {timeout} s")
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        cap = capsys.readouterr()
        o = Outcome(code, cap.out, cap.err)
        where = f"wanka {' '.join(map(str, argv))}\nstdout: {o.out[-2000:]}\nstderr: {o.err[-2000:]}"
        assert "Traceback" not in o.err and "internal error" not in o.err, where
        assert o.code in (0, 2), where
        if o.code == 2:
            lines = [ln for ln in o.err.splitlines() if ln.strip()]
            assert lines, where
            usage = any(ln.startswith(("Usage:", "Try ", "╭", "│", "╰")) for ln in lines)
            assert usage or all(ln.startswith("error:") for ln in lines), where
        if o.code == 0 and "--json" in argv:
            strict_json(o.out)
        return o

    yield run


@pytest.fixture
def write(tmp_path: Path) -> Any:
    """``write(name, text_or_bytes)`` → path in a fresh folder."""

    def w(name: str, content: str | bytes) -> Path:
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
        return p

    return w
