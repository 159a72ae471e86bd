"""The ``wanka`` command line (typer + rich). The core never prints; only this face does.

Each command lives in its own module in this package and registers itself on :data:`app`. Start-up
is lazy: :func:`main` imports only the module of the command being run (:data:`COMMANDS`), and
``wanka --help`` prints the command list from that table without importing typer, rich, numpy or
pydantic. A ``cmd_*`` module the table does not name still works: then every module is loaded
(slower) and typer prints the help; ``tests/cli/test_startup.py`` keeps the table in sync.
"""

from __future__ import annotations

import gc
import importlib
import os
import pkgutil
import sys
from typing import Any

__all__ = ["COMMANDS", "main"]

# command -> (module, one-line help); the help is the command's own (checked by a test)
COMMANDS: dict[str, tuple[str, str]] = {
    "catalog": ("cmd_catalog", "List the hardware catalog entries with their key figures and sources."),
    "claims": (
        "cmd_claims",
        "Check the article's claims (500B on 1000P, GPT-4 on 25k A100, 1,000 H100, Meta, xAI, ...).",
    ),
    "collective": (
        "cmd_collective",
        "Time, algbw and busbw of one collective as nccl-tests prints them; --flow adds ECMP vs adaptive fabric "
        "contention, --calibrate fits the cluster's link efficiency to an nccl-tests log.",
    ),
    "compare": (
        "cmd_compare",
        "Traditional vs 万卡: scale, 高效训练 (MFU, 线性加速比), 长稳可靠 (failures, ETTR), fabric, facility.",
    ),
    "fabric": (
        "cmd_fabric",
        "Bill of materials of a cluster's fabric: switches per tier, optics, cables, bisection, power.",
    ),
    "facility": (
        "cmd_facility",
        "Power, racks, PUE, energy, electricity cost and CO2 of a cluster and its training job.",
    ),
    "model": ("cmd_model", "Model specs: import a Hugging Face config.json, show a preset."),
    "plan": ("cmd_plan", "Step time, its breakdown, memory per GPU, MFU and time to train of a scenario's job."),
    "presets": ("cmd_show", "The built-in scenario and model presets, with their descriptions."),
    "reliability": (
        "cmd_reliability",
        "Failures, recovery and checkpointing over a whole campaign: interruptions, ETTR, time to train.",
    ),
    "runs": ("cmd_runs", "Sweep runs stored in SQLite: list, show, export."),
    "schedule": ("cmd_schedule", "Simulate the cluster scheduler on a trace or a synthetic LLM workload."),
    "schema": ("cmd_schema", "The scenario file's fields: types, defaults, allowed ranges (JSON Schema with --json)."),
    "search": (
        "cmd_search",
        "Enumerate the valid TP/PP/DP/CP/EP/VPP/micro-batch/ZeRO/recompute strategies, rank them, explain.",
    ),
    "serve": ("cmd_serve", "Planner, compare, claims and past-runs pages, and the HTTP API (OpenAPI at /docs)."),
    "show": (
        "cmd_show",
        "The inventory of a scenario's cluster: accelerators, nodes, domains, racks, peaks, memory, fabric.",
    ),
    "storage": ("cmd_facility", "Checkpoint size and save/stall/restart time per mode, and training-data read demand."),
    "sweep": ("cmd_sweep", "Run (or resume) a sweep; each point is committed to the run store the moment it finishes."),
    "validate": ("cmd_validate", "Predict every published case and compare tokens/s/GPU with the measured value."),
}
_HELP = "wanka — a digital twin of 万卡 (10,000+ GPU) AI training clusters."
_LANGS = ("en", "zh")


def __getattr__(name: str) -> Any:  # console, err_console on first use (PEP 562)
    if name in ("console", "err_console", "run_app"):
        import wanka.cli.app as _app_module

        return getattr(_app_module, name)
    raise AttributeError(name)


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("cmd_"))


def _load_commands(names: list[str] | None = None) -> None:
    for mod in names if names is not None else _modules():
        importlib.import_module(f"{__name__}.{mod}")


def _static_help() -> str:
    width = max(len(n) for n in COMMANDS) + 2
    lines = [
        "Usage: wanka [OPTIONS] COMMAND [ARGS]...",
        "",
        f"  {_HELP}",
        "",
        "Options:",
        "  --lang [en|zh]  language of text output and errors (default: $WANKA_LANG, else en)",
        "  --help          Show this message and exit.",
        "",
        "Commands:",
        *(f"  {name:<{width}}{text}" for name, (_, text) in sorted(COMMANDS.items())),
        "",
        "`wanka COMMAND --help` for a command's options; `wanka schema` for the scenario file's fields.",
    ]
    return "\n".join(lines) + "\n"


def _split_lang(argv: list[str]) -> tuple[list[str], str | None]:
    """Take a global ``--lang X`` / ``--lang=X`` given before the command out of ``argv``."""
    out: list[str] = []
    lang = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if not out or all(x.startswith("-") for x in out):  # still before the command name
            if a == "--lang" and i + 1 < len(argv):
                lang = argv[i + 1]
                i += 2
                continue
            if a.startswith("--lang="):
                lang = a.split("=", 1)[1]
                i += 1
                continue
        out.append(a)
        i += 1
    return out, lang


_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _lean_start() -> None:
    """Two defaults for a short-lived command, each only where the user set nothing:

    * one BLAS thread: wanka calls no BLAS routine (no matrix products; its arrays go through
      element-wise numpy), but OpenBLAS starts a thread per core when numpy is imported, ~50-70 ms
      of CPU on a 2-core machine before any work;
    * no pydantic plugins: pydantic looks for plugins in every installed distribution's entry points
      when the first model is built (~10 ms here, more in a large environment); wanka uses none.
      ``PYDANTIC_DISABLE_PLUGINS=`` (empty) turns them back on.

    Results are unchanged."""
    if "numpy" not in sys.modules and not any(v in os.environ for v in _BLAS_THREADS):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    if "pydantic" not in sys.modules:
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code (2 on bad input)."""
    args, lang = _split_lang(list(sys.argv[1:] if argv is None else argv))
    lang = lang if lang is not None else os.environ.get("WANKA_LANG") or "en"
    if lang not in _LANGS:
        sys.stderr.write(f"error: --lang = {lang!r} — must be one of {', '.join(_LANGS)} (or set WANKA_LANG)\n")
        return 2
    from wanka.cli import lang as _lang

    _lang.set_lang(lang)
    command = next((a for a in args if not a.startswith("-")), None)
    known = {m for m, _ in COMMANDS.values()}
    complete = set(_modules()) <= known
    if complete and (command is None and (not args or args[0] in ("--help", "-h"))):
        sys.stdout.write(_static_help())
        return 0
    # Imports create ~50k long-lived objects (modules, classes, pydantic schemas); the collector
    # would walk them ~120 times during `wanka plan` (~50 ms, ~10% of its run). Collect nothing while
    # the command's modules load, then move what they made out of the collector's sight (gc.freeze):
    # later collections see only the command's own objects (gc.unfreeze at the end, for callers
    # that stay: tests, the web server's workers). Output is unchanged.
    _lean_start()
    # dataclass methods compiled once, not on every start (wanka.cli.codecache; ~70 ms of `wanka plan`)
    from wanka.cli import codecache

    codecache.install()
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        if complete and command in COMMANDS:
            _load_commands([COMMANDS[command][0]])
        else:
            _load_commands()
        from wanka.cli.app import run_app
    finally:
        gc.freeze()
        if gc_was_on:
            gc.enable()
    try:
        return run_app(args)
    finally:
        gc.unfreeze()
        codecache.save()
        codecache.uninstall()
