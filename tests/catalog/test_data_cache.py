"""The parsed-data cache of the package's own YAML files (``wanka.yamlio.load_data``): same data as
parsing, a changed file is parsed again, and a damaged cache or an unwritable folder never breaks a load."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

import pytest
import yaml

from wanka import yamlio

DATA = Path(str(resources.files("wanka.catalog") / "data"))
SHIPPED = [*sorted(DATA.glob("*.yaml")), Path(str(resources.files("wanka") / "data" / "calibration.yaml"))]


@pytest.fixture
def cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of accelerators.yaml, with bytecode (and so the cache) written under tmp_path."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    src = tmp_path / "data" / "accelerators.yaml"
    src.parent.mkdir()
    src.write_bytes((DATA / "accelerators.yaml").read_bytes())
    return src


def _cache_of(src: Path, yaml11: bool = False) -> Path:
    c = yamlio._cache_file(src, yaml11)
    assert c is not None
    return c


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: object, **k: object) -> None:
        raise AssertionError("parsed although cached")

    monkeypatch.setattr(yamlio, "load", boom)
    monkeypatch.setattr(yaml, "load", boom)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_load_data_equals_parsing_for_every_shipped_file(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert yamlio.load_data(path) == yamlio.load(text)
    # yaml11: exactly yaml.safe_load (the pure-Python loader), for the files read that way
    assert yamlio.load_data(path, yaml11=True) == yaml.safe_load(text)


def test_second_load_reads_the_cache(cached: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = yamlio.load_data(cached)
    assert _cache_of(cached).is_file()
    assert str(_cache_of(cached)).startswith(sys.pycache_prefix or "")
    _no_parsing(monkeypatch)
    again = yamlio.load_data(cached)
    assert again == first and again is not first  # a fresh object: callers may change it
    again["accelerators"].clear()
    assert yamlio.load_data(cached) == first


def test_a_changed_file_is_parsed_again(cached: Path) -> None:
    yamlio.load_data(cached)
    text = cached.read_text(encoding="utf-8")
    cached.write_text(text.replace("tdp_w: 700", "tdp_w: 701", 1), encoding="utf-8")
    data = yamlio.load_data(cached)
    assert data == yamlio.load(cached.read_text(encoding="utf-8"))
    assert any(a.get("tdp_w") == 701 for a in data["accelerators"])


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],  # truncated
        lambda b: b[:-1] + bytes([b[-1] ^ 0xFF]),  # one byte flipped in the payload
        lambda b: b"",  # empty
        lambda b: b"\x00" * 200,  # garbage
        lambda b: b.replace(b"wanka-yaml-cache 1", b"wanka-yaml-cache 9"),  # another format
    ],
    ids=["truncated", "flipped", "empty", "garbage", "other-version"],
)
def test_a_damaged_cache_is_ignored_and_rewritten(cached: Path, damage: object) -> None:
    good = yamlio.load_data(cached)
    cache = _cache_of(cached)
    cache.write_bytes(damage(cache.read_bytes()))  # type: ignore[operator]
    assert yamlio.load_data(cached) == good
    head = len(yamlio._CACHE_MAGIC)
    assert yamlio.read_cache(cache, cache.read_bytes()[head : head + 32])[0]  # rewritten, readable again


def test_yaml11_and_yaml12_caches_are_separate(cached: Path) -> None:
    cached.write_text("a: 1e3\nb: 1.5e+3\n", encoding="utf-8")
    assert yamlio.load_data(cached) == {"a": 1000.0, "b": 1500.0}  # YAML 1.2 floats
    assert yamlio.load_data(cached, yaml11=True) == {"a": "1e3", "b": 1500.0}  # safe_load's result
    assert yamlio.load_data(cached) == {"a": 1000.0, "b": 1500.0}


def test_no_cache_written_without_bytecode_or_on_a_read_only_folder(
    cached: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    data = yamlio.load_data(cached)
    assert not _cache_of(cached).exists()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    blocker = Path(sys.pycache_prefix or "")
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("a file where the cache folder would be", encoding="utf-8")
    assert yamlio.load_data(cached) == data  # the write fails quietly
    assert not list(blocker.parent.glob("**/*.tmp"))


def test_unmarshallable_data_is_parsed_every_time(cached: Path) -> None:
    cached.write_text("when: 2024-01-02\n", encoding="utf-8")  # a YAML 1.1 timestamp: a datetime.date
    data = yamlio.load_data(cached, yaml11=True)
    assert str(data["when"]) == "2024-01-02"
    assert not _cache_of(cached, yaml11=True).exists()


def test_malformed_data_file_is_still_a_spec_error(cached: Path) -> None:
    cached.write_text("a: 1\na: 2\n", encoding="utf-8")
    with pytest.raises(Exception, match="appears twice"):
        yamlio.load_data(cached)
    assert not _cache_of(cached).exists()


def test_the_built_catalog_is_cached_and_equal_to_a_fresh_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wanka.catalog import loader

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path))
    fresh = loader._build()
    loader.catalog.cache_clear()
    try:
        first = loader.catalog()  # builds and writes the cache
        cache = yamlio.cache_path(Path(str(resources.files("wanka.catalog") / "data")) / "catalog", ".pickle")
        assert cache is not None and cache.is_file() and str(cache).startswith(str(tmp_path))
        loader.catalog.cache_clear()

        def boom() -> None:
            raise AssertionError("built although cached")

        monkeypatch.setattr(loader, "_build", boom)
        hit = loader.catalog()
        assert hit is not first
        assert hit.raw == fresh.raw
        for kind in ("accelerators", "nodes", "nics", "switches", "optics", "storage"):
            assert list(getattr(hit, kind)) == list(getattr(fresh, kind)), kind  # the SI records
            assert getattr(hit, kind)._index == getattr(fresh, kind)._index, kind  # names and aliases
        assert [a.name for a in hit.accelerators] == [a.name for a in fresh.accelerators]
        assert hit.accelerators["h100"] == fresh.accelerators["H100"]
        # a damaged cache is a miss: the catalog is built again
        cache.write_bytes(cache.read_bytes()[:-7])
        loader.catalog.cache_clear()
        with pytest.raises(AssertionError, match="built although cached"):
            loader.catalog()
    finally:
        loader.catalog.cache_clear()


def test_the_catalog_key_follows_every_data_file_and_the_conversion_code(monkeypatch: pytest.MonkeyPatch) -> None:
    from wanka.catalog import loader

    key = loader._key(DATA)
    real = Path.read_bytes

    for changed in ("nics.yaml", "entries.py"):

        def read(p: Path, name: str = changed) -> bytes:
            return real(p) + (b"#" if p.name == name else b"")

        monkeypatch.setattr(Path, "read_bytes", read)
        assert loader._key(DATA) != key, changed
    monkeypatch.setattr(Path, "read_bytes", real)
    assert loader._key(DATA) == key
