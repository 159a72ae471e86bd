"""Unit conversions used at the edges (files, flags, displays). Inside wanka everything is SI."""

from __future__ import annotations

import re

__all__ = [
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
