"""Dataclass methods compiled once (``wanka.cli.codecache``): the classes behave as without it, a
second process compiles nothing, a damaged file is ignored, nothing is written without bytecode, and
``wanka plan`` prints the same bytes with every cache (bytecode, parsed data, contention factors,
dataclass code) cold, being written, and warm."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from wanka.cli import codecache


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    monkeypatch.setattr(codecache, "_table", {})
    monkeypatch.setattr(codecache, "_compiled", 0)
    path = codecache.cache_file()
    assert path is not None and str(path).startswith(str(tmp_path))
    yield path
    codecache.uninstall()


def _make() -> type:
    @dataclasses.dataclass(frozen=True, order=True)
    class Point:
        x: int
        y: float = 0.5
        tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)

    return Point


def _behaviour(cls: type) -> tuple[object, ...]:
    a, b = cls(1), cls(1, 2.0, ("t",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 2  # type: ignore[attr-defined]
    return (repr(a), repr(b), a == cls(1), a < b, hash(a) == hash(cls(1)), dataclasses.astuple(b))


def test_classes_behave_the_same(table: Path) -> None:
    plain = _behaviour(_make())
    codecache.install()
    assert _behaviour(_make()) == plain  # compiled through the table
    assert codecache._compiled > 0
    assert _behaviour(_make()) == plain  # from the table
    codecache.uninstall()
    assert "exec" not in vars(dataclasses)


def test_code_is_compiled_as_exec_compiles_it(table: Path) -> None:
    """No ``__future__`` flag of wanka's modules leaks in: annotations stay objects, not strings."""
    plain = _make()
    codecache.install()
    cached = _make()
    for name in ("__init__", "__repr__", "__eq__", "__lt__", "__hash__", "__setattr__"):
        a, b = getattr(plain, name), getattr(cached, name)
        assert a.__code__.co_code == b.__code__.co_code, name
        assert a.__code__.co_flags == b.__code__.co_flags, name
        assert a.__annotations__ == b.__annotations__, name
    assert cached.__init__.__annotations__["return"] is None  # type: ignore[misc]


def test_saved_table_is_read_back_and_a_damaged_one_ignored(table: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    codecache.install()
    _make()
    codecache.save()
    saved = dict(codecache._table)
    assert table.is_file() and codecache._load() == saved
    monkeypatch.setattr(codecache, "_table", {})
    codecache.uninstall()
    codecache.install()  # a new process: the table comes from the file, nothing to compile
    plain = _behaviour(_make())
    assert codecache._compiled == 0
    blob = table.read_bytes()
    for damaged in (blob[: len(blob) // 2], blob[:-1] + bytes([blob[-1] ^ 0xFF]), b"junk", b""):
        table.write_bytes(damaged)
        assert codecache._load() == {}
    monkeypatch.setattr(codecache, "_table", {})
    codecache.uninstall()
    codecache.install()
    assert _behaviour(_make()) == plain and codecache._compiled > 0


def test_nothing_written_without_bytecode(table: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    codecache.install()
    _make()
    codecache.save()
    assert not table.exists()


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("preset", ["traditional-512-a100", "meta-24k-h100-roce"])
def test_plan_output_is_the_same_with_every_cache_cold_and_warm(tmp_path: Path, preset: str) -> None:
    code = "import sys; from wanka.cli import main; sys.exit(main())"
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    none = dict(base, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=str(tmp_path / "empty"))
    cached = dict(base, PYTHONPYCACHEPREFIX=str(tmp_path / "prefix"))
    outs = []
    for env in (none, cached, cached):  # no cache read or written; caches written; caches read
        r = subprocess.run(
            [sys.executable, "-c", code, "plan", preset], capture_output=True, text=True, env=env, check=False
        )
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1] == outs[2]
    assert "step time" in outs[0]
    written = {p.name.split(".")[0] for p in (tmp_path / "prefix").rglob("*.marshal")}
    assert {"codecache", "flow"} <= written
    assert not (tmp_path / "empty").exists()


def test_forward_references_compile_the_same(table: Path) -> None:
    import typing

    plain = typing.ForwardRef("dict[str, tuple[int, ...]] | None")
    codecache.install()
    again = typing.ForwardRef("dict[str, tuple[int, ...]] | None")
    cached = typing.ForwardRef("dict[str, tuple[int, ...]] | None")
    assert again.__forward_code__ is cached.__forward_code__  # the second one from the table
    for ref in (again, cached):
        assert ref.__forward_code__.co_code == plain.__forward_code__.co_code
        assert ref.__forward_code__.co_flags == plain.__forward_code__.co_flags
        assert ref._evaluate(globals(), None, recursive_guard=frozenset()) == dict[str, tuple[int, ...]] | None
    with pytest.raises(SyntaxError):
        typing.ForwardRef("not an expression ::")
    codecache.uninstall()
    assert "compile" not in vars(typing)
