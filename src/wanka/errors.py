"""One exception type per kind of user error; every message names the field, the value and what is allowed."""

from __future__ import annotations

__all__ = ["CatalogError", "InfeasibleError", "SpecError", "TraceError", "WankaError"]


class WankaError(Exception):
    """Base of every error wanka raises for bad input; the CLI turns it into exit code 2."""


class SpecError(WankaError, ValueError):
    """A scenario, model or strategy file is malformed or names an impossible value.

    ``field`` is the dotted path of the offending key (``cluster.nodes``), ``source`` the file it came
    from and ``line`` its line there when known.
    """

    def __init__(
        self, message: str, *, field: str | None = None, source: str | None = None, line: int | None = None
    ) -> None:
        self.field = field
        self.source = source
        self.line = line
        self.detail = message
        where = ""
        if source:
            where = f" ({source}, line {line})" if line else f" ({source})"
        text = f"{field} — {message}" if field else message
        super().__init__(text + where)


class CatalogError(WankaError, KeyError):
    """An accelerator, NIC, switch or other catalog entry is unknown or malformed."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want the plain message
        return str(self.args[0]) if self.args else ""


class InfeasibleError(WankaError, ValueError):
    """A parallel strategy cannot run on the given model and cluster (the message says why)."""


class TraceError(WankaError, ValueError):
    """A workload trace row is malformed; the message carries the file and line number."""
