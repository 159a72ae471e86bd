"""One exception type per kind of user error; every message names the field, the value and what is allowed."""

from __future__ import annotations

__all__ = ["CatalogError", "CatalogNameError", "InfeasibleError", "SpecError", "TraceError", "WankaError"]


class WankaError(Exception):
    """Base of every error wanka raises for bad input; the CLI turns it into exit code 2."""


class SpecError(WankaError, ValueError):
    """A scenario, model or strategy file is malformed or names an impossible value.

    ``field`` is the dotted path of the offending key (``cluster.nodes``), ``source`` the file it came
    from and ``line`` its line there when known. A file with several problems raises one SpecError
    whose ``problems`` lists them all (the first one's field/source/line are the error's own); its
    text has one line per problem.
    """

    cross_field = False  # True when a rule across fields failed (``field`` names the one to change)

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        source: str | None = None,
        line: int | None = None,
        problems: list[SpecError] | None = None,
    ) -> None:
        self.field = field
        self.source = source
        self.line = line
        self.detail = message
        self.problems: list[SpecError] = problems if problems else [self]
        if problems:
            super().__init__("\n".join(p.one_line() for p in problems))
        else:
            super().__init__(self.one_line())

    def one_line(self) -> str:
        """``field = value — what is allowed (file, line N)``."""
        where = ""
        if self.source:
            where = f" ({self.source}, line {self.line})" if self.line else f" ({self.source})"
        if not self.field:
            text = self.detail
        elif self.detail.startswith("= "):
            text = f"{self.field} {self.detail}"
        else:
            text = f"{self.field} — {self.detail}"
        return text + where

    @classmethod
    def collect(cls, problems: list[SpecError]) -> SpecError:
        """One error carrying every problem (the first names the field, source and line)."""
        flat = [q for p in problems for q in p.problems]
        if len(flat) == 1:
            return flat[0]
        first = flat[0]
        return cls(first.detail, field=first.field, source=first.source, line=first.line, problems=flat)


class CatalogError(WankaError, KeyError):
    """An accelerator, NIC, switch or other catalog entry is unknown or malformed."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want the plain message
        return str(self.args[0]) if self.args else ""


class InfeasibleError(WankaError, ValueError):
    """A parallel strategy cannot run on the given model and cluster (the message says why)."""


class TraceError(WankaError, ValueError):
    """A workload trace row is malformed; the message carries the file and line number."""


class CatalogNameError(SpecError, CatalogError):
    """A scenario field names a catalog entry that does not exist (both a SpecError and a CatalogError)."""

    def __str__(self) -> str:
        return SpecError.__str__(self)
