"""The typer application, the consoles, and the one place user errors become exit code 2."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
import typer
from rich.console import Console

from wanka.errors import WankaError

__all__ = ["app", "console", "emit_json", "err_console", "fail", "run_app"]

app = typer.Typer(
    name="wanka",
    help="wanka — a digital twin of 万卡 (10,000+ GPU) AI training clusters.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
console = Console(highlight=False, soft_wrap=False)
err_console = Console(stderr=True, highlight=False)


def emit_json(obj: Any) -> None:
    """Print one JSON document on stdout (plain, not through rich, so pipes get clean JSON)."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2, default=_json_default) + "\n")


def _json_default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` to stderr and return an Exit(2) to raise."""
    err_console.print(f"error: {message}", markup=False)
    return typer.Exit(2)


def run_app(argv: list[str]) -> int:
    """Run the CLI; user errors print one line and exit 2, never a traceback."""
    try:
        app(args=argv, prog_name="wanka", standalone_mode=False)
    except WankaError as e:
        err_console.print(f"error: {e}", markup=False)
        return 2
    except click.exceptions.UsageError as e:
        err_console.print(f"error: {e.format_message()}", markup=False)
        return 2
    except click.exceptions.Abort:
        err_console.print("aborted", markup=False)
        return 130
    except click.exceptions.Exit as e:
        return int(e.exit_code)
    except typer.Exit as e:
        return int(e.exit_code)
    except (BrokenPipeError, KeyboardInterrupt):
        return 1
    return 0
