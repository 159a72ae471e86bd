"""``wanka serve``: the web pages and the HTTP API on one local port (needs ``pip install 'wanka[web]'``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from wanka.cli.app import app, console
from wanka.errors import SpecError, WankaError

__all__: list[str] = []


@app.command("serve")
def serve_cmd(
    host: Annotated[
        str, typer.Option("--host", help="address to listen on (127.0.0.1: this machine only)")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port")] = 8000,
    db: Annotated[Path, typer.Option("--db", help="run store (SQLite) for saved runs and the runs endpoints")] = Path(
        "wanka.db"
    ),
) -> None:
    """Planner, compare, claims and past-runs pages, and the HTTP API (OpenAPI at /docs)."""
    if not 1 <= port <= 65535:
        raise SpecError(f"= {port}: must be between 1 and 65535", field="--port")
    if db.parent and not db.parent.exists():
        raise SpecError(f"= {str(db)!r}: folder {db.parent} does not exist", field="--db")
    try:
        import uvicorn

        from wanka.web import create_app
    except ImportError as e:
        raise WankaError(f"wanka serve needs the web extra: pip install 'wanka[web]' ({e.name} is missing)") from None
    console.print(f"wanka serve: http://{host}:{port}/ (API docs at /docs; run store {db})")
    uvicorn.run(create_app(db), host=host, port=port, log_level="warning")
