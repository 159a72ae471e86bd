"""The typer application, the consoles, and the one place user errors become exit code 2."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from wanka.errors import WankaError

__all__ = [
    "app",
    "check_output_path",
    "console",
    "emit_json",
    "err_console",
    "fail",
    "print_table",
    "run_app",
    "write_text_atomic",
]

app = typer.Typer(
    name="wanka",
    help="wanka — a digital twin of 万卡 (10,000+ GPU) AI training clusters.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _root(
    lang: str | None = typer.Option(
        None, "--lang", help="language of text output and errors: en or zh (default: $WANKA_LANG, else en)"
    ),
) -> None:
    """wanka — a digital twin of 万卡 (10,000+ GPU) AI training clusters."""
    # `wanka.cli.main` takes --lang out of the arguments before typer runs; this documents it


console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def print_table(table: Any) -> None:
    """Print a rich table whose cells are never cut short with an ellipsis. A column keeps the width of
    its widest unbreakable piece: a ``no_wrap`` column (a name) its widest cell, any other its widest
    word, or its widest cell where every cell is a figure and its unit ("5.548 s", "79.3 GiB"), so a
    figure is read whole or not at all; longer text wraps at spaces, and a word longer than a column
    that must fold (``overflow="fold"``, kept at least 12 wide) folds. Where those widths alone exceed
    the terminal, the table is printed at the width they need rather than dropping a digit."""
    from rich.cells import cell_len
    from rich.measure import Measurement
    from rich.text import Text

    def lines(cell: Any) -> list[str]:
        return (cell.plain if isinstance(cell, Text) else cell if isinstance(cell, str) else "").splitlines()

    def whole(cell: Any) -> int:
        return max((cell_len(line) for line in lines(cell)), default=0)

    def piece(cell: Any) -> int:
        words = [w for line in lines(cell) for w in line.split()]
        if len(words) <= 2:
            return whole(cell)  # a figure and its unit stay together
        return max((cell_len(w) for w in words), default=0)

    for col in table.columns:
        cells = [col.header, *col.cells]
        if col.overflow == "fold":
            col.min_width = max(col.min_width or 0, min(12, max(piece(c) for c in cells)))
        elif col.no_wrap:
            col.min_width = max(whole(c) for c in cells)
        else:
            col.min_width = max(piece(c) for c in cells)
            col.overflow = "fold"
    need = Measurement.get(console, console.options.update(max_width=1 << 16), table).minimum
    console.print(table, width=max(console.width, need))


def emit_json(obj: Any) -> None:
    """Print one JSON document on stdout (plain, not through rich, so pipes get clean JSON).

    NaN and infinities, which JSON does not have, print as ``null``."""
    from wanka.fileio import json_safe

    text = json.dumps(json_safe(obj), ensure_ascii=False, indent=2, default=_json_default, allow_nan=False)
    sys.stdout.write(text + "\n")


def _json_default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def write_text_atomic(path: Path, text: str, *, field: str) -> None:
    """Write ``text`` to ``path`` through :func:`wanka.fileio.write_atomic`: the path is checked (never
    a folder, a special file or a SQLite run store), then written through a temporary file and a
    rename, so a crash or a full disk never leaves a half-written file; errors name the option."""
    from wanka.fileio import write_atomic

    write_atomic(path, text, field=field)


def check_output_path(path: Path | None, *, field: str) -> None:
    """Check an output path before the work starts (see :func:`wanka.fileio.check_output`)."""
    if path is not None:
        from wanka.fileio import check_output

        check_output(path, field=field)


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` to stderr and return an Exit(2) to raise."""
    err_console.print(f"error: {message}", markup=False)
    return typer.Exit(2)


def run_app(argv: list[str]) -> int:
    """Run the CLI; user errors print one line and exit 2, never a traceback.

    Usage errors (unknown option, bad flag value) are handled by typer's standalone mode, which
    prints them with the usage line and exits 2.
    """
    try:
        app(args=argv, prog_name="wanka", standalone_mode=True)
    except SystemExit as e:
        code = e.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except WankaError as e:
        from wanka.cli.lang import translate_error

        for line in str(e).splitlines() or [""]:
            err_console.print(f"error: {translate_error(line)}", markup=False)
        return 2
    except (BrokenPipeError, KeyboardInterrupt):
        return 1
    except RecursionError:
        err_console.print("error: input nested too deeply", markup=False)
        return 2
    except Exception as e:  # a bug, not bad input: one line, exit 1, and how to see the traceback
        if os.environ.get("WANKA_DEBUG"):
            raise
        err_console.print(
            f"internal error: {type(e).__name__}: {e} (a bug in wanka; WANKA_DEBUG=1 shows the traceback)",
            markup=False,
        )
        return 1
    return 0
