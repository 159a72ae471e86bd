"""Contention factors kept between runs (``wanka.network.factor_cache``): the cached factor is the
simulated one, a second run does not simulate, and a damaged file, a bad value or changed code is a
miss that simulates again; nothing is written where bytecode is not."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from wanka.network import factor_cache, flow
from wanka.spec import ClusterSpec, FabricSpec

CLUSTER = ClusterSpec(accelerator="H100-SXM5-80GB", nodes=64, fabric=FabricSpec(tiers=2, switch="QM9700"))
OVERSUB = CLUSTER.model_copy(update={"fabric": CLUSTER.fabric.model_copy(update={"oversubscription": 4.0})})


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Bytecode (and so the factor cache) written under tmp_path; no factor remembered in-process."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    flow._cached_factor.cache_clear()
    path = factor_cache.cache_file()
    assert path is not None and str(path).startswith(str(tmp_path))
    yield path
    flow._cached_factor.cache_clear()


def _count_simulations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = flow._simulated_factor

    def counted(*args: object) -> float:
        calls.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(flow, "_simulated_factor", counted)
    return calls


def _factor(cluster: ClusterSpec = OVERSUB) -> float:
    return flow.contention_factor(cluster, "all_to_all")


def test_second_run_reads_the_simulated_factor(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_simulations(monkeypatch)
    first = _factor()
    assert first > 2.0 and calls == [1] and cache.is_file()
    flow._cached_factor.cache_clear()  # a new process: only the file remembers
    assert _factor() == first and calls == [1]
    assert _factor(CLUSTER) != first and calls == [1, 1]  # other inputs: simulated, and kept beside
    flow._cached_factor.cache_clear()
    assert _factor() == first and _factor(CLUSTER) < first and calls == [1, 1]


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],  # truncated
        lambda b: b[:-1] + bytes([b[-1] ^ 0xFF]),  # a flipped byte
        lambda b: b"not a cache at all",
        lambda b: b"",
    ],
    ids=["truncated", "flipped", "foreign", "empty"],
)
def test_a_damaged_file_is_a_miss(cache: Path, monkeypatch: pytest.MonkeyPatch, damage) -> None:  # type: ignore[no-untyped-def]
    first = _factor()
    cache.write_bytes(damage(cache.read_bytes()))
    flow._cached_factor.cache_clear()
    calls = _count_simulations(monkeypatch)
    assert _factor() == first and calls == [1]
    flow._cached_factor.cache_clear()
    assert _factor() == first and calls == [1]  # rewritten whole


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0.5, -1.0, 3, "2.0", None])
def test_a_bad_value_is_never_used(cache: Path, monkeypatch: pytest.MonkeyPatch, bad: object) -> None:
    first = _factor()
    data = factor_cache._read()
    assert list(data.values()) == [first]
    rules = factor_cache.rules()
    assert rules is not None
    from wanka import yamlio

    yamlio.write_cache(cache, rules, dict.fromkeys(data, bad))  # a well-formed file holding a bad value
    flow._cached_factor.cache_clear()
    calls = _count_simulations(monkeypatch)
    assert _factor() == first and calls == [1]


def test_changed_code_drops_every_entry(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _factor()
    monkeypatch.setattr(factor_cache, "rules", lambda: b"\0" * 32)  # what a changed source file does
    flow._cached_factor.cache_clear()
    calls = _count_simulations(monkeypatch)
    assert _factor() == first and calls == [1]


def test_the_key_covers_the_simulation_sources() -> None:
    root = Path(factor_cache.__file__).resolve().parents[1]
    covered = {p.relative_to(root).as_posix() for pat in factor_cache._SOURCES for p in root.glob(pat)}
    for name in ("network/flow.py", "network/routing.py", "network/topology.py", "network/collectives.py"):
        assert name in covered
    assert "catalog/data/switches.yaml" in covered and "spec/cluster.py" in covered


def test_nothing_written_without_bytecode(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert _factor() > 2.0
    assert not cache.exists()


def test_entries_are_bounded(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factor_cache, "MAX_ENTRIES", 3)
    for i in range(5):
        factor_cache.put(f"k{i}", 1.0 + i)
    assert factor_cache._read() == {"k2": 3.0, "k3": 4.0, "k4": 5.0}
    assert factor_cache.get("k0") is None and factor_cache.get("k4") == 5.0
