"""The one door for files: what wanka reads is checked before it is parsed, what it writes is checked
before any work starts and then written atomically.

Reading: the path must be a regular file (a FIFO, a device or a folder is refused before it is
opened, so nothing blocks), no larger than the limit of its kind, and UTF-8 text (a BOM is
dropped). JSON refuses ``NaN``/``Infinity``, nesting deeper than :data:`MAX_DEPTH` and integers of
more than 4,300 digits; YAML goes through :mod:`wanka.yamlio` with the same limits plus one on
alias expansion.

Writing: the target must not be a folder, a special file, a SQLite database (a run store is never
overwritten) or one of the paths the caller protects; its folder must exist. The text goes to a
temporary file in the same folder, is flushed to disk, and replaces the target in one rename.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from wanka.errors import SpecError

__all__ = [
    "MAX_DEPTH",
    "MAX_SPEC_BYTES",
    "MAX_TABLE_BYTES",
    "check_depth",
    "check_input",
    "check_output",
    "json_safe",
    "load_json",
    "read_json",
    "read_text",
    "write_atomic",
]

MAX_SPEC_BYTES = 4 * 1024**2  # a scenario, model, sweep, validation or config.json file
MAX_TABLE_BYTES = 512 * 1024**2  # a CSV trace or node list
MAX_DEPTH = 64  # nesting of mappings/lists in any structured file
_SQLITE_MAGIC = b"SQLite format 3\x00"


def check_input(path: str | Path, *, field: str | None = None, max_bytes: int = MAX_SPEC_BYTES) -> Path:
    """``path`` as a Path once it is known to be a readable regular file within the size limit."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise SpecError(f"= {str(p)!r}: no such file", field=field) from None
    except OSError as e:
        raise SpecError(f"= {str(p)!r}: cannot read ({e.strerror})", field=field) from None
    if stat.S_ISDIR(st.st_mode):
        raise SpecError(f"= {str(p)!r}: is a folder, not a file", field=field)
    if not stat.S_ISREG(st.st_mode):
        raise SpecError(f"= {str(p)!r}: not a regular file (a pipe or device is not read)", field=field)
    if st.st_size > max_bytes:
        raise SpecError(
            f"= {str(p)!r}: {st.st_size:,} bytes; at most {max_bytes:,} are read for this kind of file", field=field
        )
    return p


def read_text(path: str | Path, *, field: str | None = None, max_bytes: int = MAX_SPEC_BYTES) -> str:
    """The file's text, after :func:`check_input`; non-UTF-8 bytes are a SpecError naming the line."""
    p = check_input(path, field=field, max_bytes=max_bytes)
    try:
        with p.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as e:
        raise SpecError(f"= {str(p)!r}: cannot read ({e.strerror})", field=field) from None
    if len(raw) > max_bytes:  # grew after the stat
        raise SpecError(f"= {str(p)!r}: more than {max_bytes:,} bytes", field=field)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise SpecError(
            f"not UTF-8 text: byte 0x{raw[e.start]:02x} at offset {e.start:,}; save the file as UTF-8",
            field=field,
            source=str(p),
            line=line,
        ) from None
    if "\x00" in text:
        raise SpecError("is binary (contains NUL bytes), not a text file", field=field, source=str(p))
    return text


def check_depth(data: Any, source: str | None = None, limit: int = MAX_DEPTH) -> None:
    """Refuse data nested deeper than ``limit`` (iterative: no recursion on hostile input)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        obj, d = stack.pop()
        if isinstance(obj, dict):
            children: Iterable[Any] = obj.values()
        elif isinstance(obj, list):
            children = obj
        else:
            continue
        if d > limit:
            raise SpecError(f"nested more than {limit} levels deep", source=source)
        stack.extend((c, d + 1) for c in children)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number wanka accepts")


def load_json(text: str, source: str | None = None) -> Any:
    """Parse JSON text: no NaN/Infinity, bounded depth and integer size; errors carry the line."""
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise SpecError(f"malformed JSON: {e.msg}", source=source, line=e.lineno) from None
    except RecursionError:
        raise SpecError(f"malformed JSON: nested more than {MAX_DEPTH} levels deep", source=source) from None
    except ValueError as e:  # NaN/Infinity, or an integer of more than 4,300 digits
        raise SpecError(f"malformed JSON: {e}", source=source) from None
    check_depth(data, source)
    return data


def read_json(path: str | Path, *, field: str | None = None, max_bytes: int = MAX_SPEC_BYTES) -> Any:
    """Read and parse a JSON file through the door."""
    return load_json(read_text(path, field=field, max_bytes=max_bytes), str(path))


def json_safe(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float replaced by None (JSON has no such numbers; ``null``
    says "not a number" to every reader), numpy scalars and arrays made plain."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    if type(obj).__module__ == "numpy" and hasattr(obj, "tolist"):
        return json_safe(obj.tolist())
    return obj


# ---------------------------------------------------------------- writing
def _is_sqlite(p: Path) -> bool:
    try:
        with p.open("rb") as fh:
            return fh.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def _same(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.abspath(a) == os.path.abspath(b)


def check_output(path: str | Path, *, field: str, protect: Iterable[str | Path] = ()) -> Path:
    """``path`` as a Path once it is safe to (over)write; call before doing the work.

    Refused: an empty name or one ending in a separator, a folder, a special file, a SQLite
    database, any path in ``protect`` (with its ``-wal``/``-shm``/``-journal`` companions), and a
    path whose folder does not exist or is not writable.
    """
    text = str(path)
    if not text or text.endswith(("/", os.sep)) or Path(text).name in ("", ".", ".."):
        raise SpecError(f"= {text!r}: must name a file, not a folder", field=field)
    p = Path(text)
    for q in protect:
        base = Path(q)
        for companion in (base, *(base.with_name(base.name + s) for s in ("-wal", "-shm", "-journal"))):
            if _same(p, companion):
                raise SpecError(f"= {text!r}: is the run store {str(base)!r}; write the export elsewhere", field=field)
    try:
        st = p.stat()
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise SpecError(f"= {text!r}: cannot write ({e.strerror})", field=field) from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise SpecError(f"= {text!r}: is a folder; give a file name", field=field)
        if not stat.S_ISREG(st.st_mode):
            raise SpecError(f"= {text!r}: not a regular file; refusing to write to it", field=field)
        if _is_sqlite(p):
            raise SpecError(f"= {text!r}: is a SQLite database (a run store?); refusing to overwrite it", field=field)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise SpecError(f"= {text!r}: folder {str(parent)!r} does not exist", field=field)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise SpecError(f"= {text!r}: folder {str(parent)!r} is not writable", field=field)
    return p


def write_atomic(path: str | Path, data: str | bytes, *, field: str, protect: Iterable[str | Path] = ()) -> None:
    """Check ``path`` (:func:`check_output`), then write ``data`` through a temporary file and a rename:
    a crash or a full disk never leaves a half-written file in place of what was there."""
    p = check_output(path, field=field, protect=protect)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=str(p.parent if str(p.parent) else "."), prefix=f".{p.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, stat.S_IMODE(p.stat().st_mode) if p.exists() else 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise SpecError(f"= {str(p)!r}: cannot write ({e.strerror})", field=field) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
