"""``wanka compare A B [...]``: the same training job on each cluster, side by side (terminal, JSON, HTML)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from wanka.cli.app import app, check_output_path, console, emit_json, write_text_atomic
from wanka.errors import SpecError
from wanka.spec import load_scenario

__all__: list[str] = []


def _tokens(text: str | None, flag: str) -> float | None:
    """A token count with the units of scenario files (``15.6T``, ``16M``, ``16Mi``; wanka.units)."""
    if text is None:
        return None
    from wanka.units import parse_count

    try:
        return parse_count(text, limit=1e17)
    except ValueError as e:
        raise SpecError(str(e), field=flag) from None


@app.command("compare")
def compare_cmd(
    scenarios: Annotated[list[str], typer.Argument(help="two or more presets or scenario files")],
    job: Annotated[
        str | None,
        typer.Option("--job", help="put this model preset (or file) on every cluster, strategy picked per cluster"),
    ] = None,
    tokens: Annotated[
        str | None, typer.Option("--tokens", help="with --job: tokens to train (e.g. 15T); default 20 per parameter")
    ] = None,
    batch_tokens: Annotated[
        str | None,
        typer.Option("--batch-tokens", help="with --job: global batch in tokens (default 16Mi = 16,777,216)"),
    ] = None,
    html: Annotated[Path | None, typer.Option("--html", help="write the HTML report with plots to FILE")] = None,
    lang: Annotated[
        str | None, typer.Option("--lang", help="zh or en (default: the global --lang / WANKA_LANG)")
    ] = None,
    replicas: Annotated[int, typer.Option("--replicas", help="Monte Carlo replicas per campaign")] = 200,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="random seed")] = 0,
    what_ifs: Annotated[
        bool,
        typer.Option(
            "--what-ifs",
            help="also run the story's what-ifs (超节点, MoE All2All, FP8; ~10 s) for the terminal or --json; "
            "--html always has them",
        ),
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Traditional vs 万卡: scale, 高效训练 (MFU, 线性加速比), 长稳可靠 (failures, ETTR), fabric, facility."""
    from wanka.cli.lang import current
    from wanka.report.compare import compare
    from wanka.report.i18n import check_lang

    lg = check_lang(lang or current())
    if not 1 <= replicas <= 100_000:
        raise SpecError(f"= {replicas}: must be between 1 and 100,000", field="--replicas")
    if html is not None and html.suffix.lower() not in (".html", ".htm"):
        raise SpecError(f"= {str(html)!r}: must end in .html", field="--html")
    check_output_path(html, field="--html")
    from wanka.report.compare import DEFAULT_BATCH_TOKENS

    batch = _tokens(batch_tokens, "--batch-tokens") or DEFAULT_BATCH_TOKENS
    cmp = compare(
        [load_scenario(s) for s in scenarios],
        job=job,
        tokens=_tokens(tokens, "--tokens"),
        batch_tokens=batch,
        seed=seed,
        replicas=replicas,
        what_ifs=what_ifs or html is not None,  # the conclusion needs none of them; the HTML story shows them
    )
    if html is not None:
        from wanka.report.claims import evaluate_claims
        from wanka.report.html import render_compare_html

        page = render_compare_html(cmp, lg, claims=evaluate_claims(seed=seed))
        write_text_atomic(html, page, field="--html")
    if json_out:
        d = cmp.to_dict()
        d["lang"] = lg
        if html is not None:
            d["html"] = str(html)
        emit_json(d)
        return
    from wanka.report.terminal import compare_renderable

    console.print(compare_renderable(cmp, lg))
    if html is not None:
        console.print(f"HTML report: {html}")
