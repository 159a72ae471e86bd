"""Unit conversions used at the edges (files, flags, displays). Inside wanka everything is SI."""

from __future__ import annotations

import re

__all__ = [
    "COUNT_CONVENTION",
    "GIB",
    "GIGA",
    "KIB",
    "MEGA",
    "MIB",
    "PETA",
    "TERA",
    "TIB",
    "format_bytes",
    "format_duration",
    "format_flops",
    "gbps_to_bytes_per_s",
    "parse_bytes",
    "parse_count",
    "parse_gbps",
    "parse_gbytes_per_s",
    "round_batch_seqs",
]

KIB = 1024.0
MIB = 1024.0**2
GIB = 1024.0**3
TIB = 1024.0**4
MEGA = 1e6
GIGA = 1e9
TERA = 1e12
PETA = 1e15

_SIZE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")
_SIZE_UNITS = {
    "": 1.0,
    "b": 1.0,
    "k": 1e3,
    "kb": 1e3,
    "m": 1e6,
    "mb": 1e6,
    "g": 1e9,
    "gb": 1e9,
    "t": 1e12,
    "tb": 1e12,
    "kib": KIB,
    "mib": MIB,
    "gib": GIB,
    "tib": TIB,
}


def gbps_to_bytes_per_s(gbps: float) -> float:
    """Gbit/s (network convention, 10^9 bits) to bytes per second."""
    return gbps * 1e9 / 8.0


def parse_bytes(text: str) -> float:
    """Parse a size such as ``256MiB``, ``1.5GB`` or ``4096`` into bytes.

    >>> parse_bytes("256MiB")
    268435456.0
    """
    m = _SIZE_RE.match(text)
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise ValueError(f"{text!r} is not a size; use a number with an optional unit (B, KB, MiB, GiB, TB …)")
    return float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]


def format_bytes(n: float) -> str:
    """Binary-prefixed bytes, e.g. ``72.3 GiB``."""
    for unit, scale in (("TiB", TIB), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def format_flops(x: float, per_s: bool = True) -> str:
    """Decimal-prefixed FLOP or FLOP/s, e.g. ``24.3 EFLOP/s``."""
    suffix = "FLOP/s" if per_s else "FLOP"
    for unit, scale in (("E", 1e18), ("P", 1e15), ("T", 1e12), ("G", 1e9)):
        if abs(x) >= scale:
            return f"{x / scale:,.1f} {unit}{suffix}"
    return f"{x:.0f} {suffix}"


def format_duration(seconds: float) -> str:
    """Human duration: seconds, minutes, hours or days as fits."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    if seconds < 120:
        return f"{seconds:.2f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


# ---------------------------------------------------------------- quantities with units (files and flags alike)
_QTY_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*(/\s*s)?\s*$")
# counts (tokens, batch tokens): SI prefixes are decimal (16M = 16·10^6), IEC prefixes binary (16Mi = 2^24)
_COUNT_UNITS = {
    "": 1.0,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "B": 1e9,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
}
COUNT_CONVENTION = "k, M, G (or B), T, P are powers of 10 (16M = 16,000,000); Ki, Mi, Gi, Ti powers of 2 (16Mi = 2^24)"


def parse_count(text: str | float, *, limit: float = 1e18) -> float:
    """A count such as ``15.6T``, ``16M``, ``16Mi`` or ``2e12`` (see :data:`COUNT_CONVENTION`).

    >>> parse_count("16Mi"), parse_count("10T")
    (16777216.0, 10000000000000.0)
    """
    if isinstance(text, int | float) and not isinstance(text, bool):
        v = float(text)
    else:
        m = _QTY_RE.match(str(text))
        if not m or m.group(3) or m.group(2) not in _COUNT_UNITS:
            raise ValueError(f"= {str(text)!r} — not a count; use a number with an optional {COUNT_CONVENTION}")
        v = float(m.group(1)) * _COUNT_UNITS[m.group(2)]
    if not (0 < v <= limit) or v != v:
        raise ValueError(f"= {text!r} — must be > 0 and ≤ {limit:g}")
    return v


def parse_gbps(text: str | float) -> float:
    """A link speed in Gbit/s: ``400``, ``400G``, ``400Gb/s``, ``400Gbps``, ``0.8Tb/s``."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    t = str(text).strip().replace("bps", "b/s")
    m = _QTY_RE.match(t)
    scale = {"": 1.0, "G": 1.0, "Gb": 1.0, "Gbit": 1.0, "T": 1e3, "Tb": 1e3, "Tbit": 1e3, "M": 1e-3, "Mb": 1e-3}
    if not m or m.group(2) not in scale:
        raise ValueError(f"= {str(text)!r} — not a link speed; write e.g. 400, 400G or 400Gb/s (bits per second)")
    return float(m.group(1)) * scale[m.group(2)]


def parse_gbytes_per_s(text: str | float) -> float:
    """A bandwidth in GB/s (bytes): ``900``, ``900GB/s``, ``1.8TB/s``, or bits with ``Gb/s`` (÷ 8)."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    m = _QTY_RE.match(str(text))
    scale = {"": 1.0, "G": 1.0, "GB": 1.0, "T": 1e3, "TB": 1e3, "Gb": 1 / 8, "Tb": 1e3 / 8}
    if not m or m.group(2) not in scale:
        raise ValueError(f"= {str(text)!r} — not a bandwidth; write e.g. 900, 900GB/s or 1.8TB/s (bytes per second)")
    return float(m.group(1)) * scale[m.group(2)]


def round_batch_seqs(batch_tokens: float, seq_len: int) -> tuple[int, str]:
    """A global batch in sequences for ``batch_tokens`` tokens of ``seq_len``, and a note saying how.

    An exact count is kept; otherwise the nearest multiple of ``2^(⌊log2 n⌋ − 3)`` (four significant
    bits: 1,953.1 → 1,920 = 15 × 128), so data-parallel sizes and micro-batches divide it.
    """
    exact = batch_tokens / seq_len
    if exact < 1:
        n, step = 1, 1
    elif exact == int(exact):
        n, step = int(exact), 0
    else:
        step = 2 ** max(0, int(exact).bit_length() - 4)
        n = max(step, round(exact / step) * step)
    if step == 0:
        return n, f"training.batch_tokens = {batch_tokens:,.0f} = {n:,} sequences of {seq_len:,} tokens"
    return n, (
        f"training.batch_tokens = {batch_tokens:,.0f} = {exact:,.1f} sequences of {seq_len:,} tokens, "
        f"rounded to {n:,} (a multiple of {step:,}; {n * seq_len:,} tokens per step)"
    )
