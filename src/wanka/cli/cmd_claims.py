"""``wanka claims``: the seed article's quantitative statements checked, with the arithmetic and a verdict."""

from __future__ import annotations

from typing import Annotated

import typer

from wanka.cli.app import app, console, emit_json

__all__: list[str] = []


@app.command("claims")
def claims_cmd(
    ids: Annotated[list[str] | None, typer.Argument(help="claim ids (default: all)")] = None,
    lang: Annotated[
        str | None, typer.Option("--lang", help="zh or en (default: the global --lang / WANKA_LANG)")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="random seed of the campaigns")] = 0,
    json_out: Annotated[
        bool, typer.Option("--json", help="print JSON: a list of {id, statement, computed, verdict, explanation, ...}")
    ] = False,
) -> None:
    """Check the article's claims (500B on 1000P, GPT-4 on 25k A100, 1,000 H100, Meta, xAI, ...)."""
    from wanka.cli.lang import current
    from wanka.report.claims import evaluate_claims
    from wanka.report.i18n import check_lang

    lg = check_lang(lang or current())
    results = evaluate_claims(seed=seed, only=list(ids) if ids else None)
    if json_out:
        emit_json([r.to_dict() for r in results])
        return
    from wanka.report.terminal import claims_renderable

    console.print(claims_renderable(results, lg))
