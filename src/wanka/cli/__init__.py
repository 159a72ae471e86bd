"""The ``wanka`` command line (typer + rich). The core never prints; only this face does.

Each command lives in its own module in this package and registers itself on :data:`app`;
modules are discovered at start-up, so adding a command touches no shared file.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

from wanka.cli.app import app, console, err_console, run_app

__all__ = ["app", "console", "err_console", "main"]


def _load_commands() -> None:
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if mod.name.startswith("cmd_"):
            importlib.import_module(f"{__name__}.{mod.name}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code (2 on bad input)."""
    _load_commands()
    return run_app(sys.argv[1:] if argv is None else argv)
