"""``wanka catalog``: the hardware catalog with sources."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from wanka.catalog import catalog
from wanka.cli.app import app, emit_json, print_table
from wanka.cli.lang import tx
from wanka.errors import CatalogError

__all__: list[str] = []

KINDS = ("accelerators", "nodes", "nics", "switches", "optics", "storage", "scale_up_fabrics")

# Columns shown per kind: (header, raw key). Values come straight from the data files (units in keys).
_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "accelerators": (
        ("BF16 TFLOPS", "dense_tflops.bf16"),
        ("FP8", "dense_tflops.fp8"),
        ("HBM GiB", "hbm_gib"),
        ("HBM TB/s", "hbm_tbytes_per_s"),
        ("scale-up GB/s", "scale_up_gbytes_per_s_per_direction"),
        ("domains", "scale_up_domains"),
        ("TDP W", "tdp_w"),
    ),
    "nodes": (
        ("accelerator", "accelerator"),
        ("GPUs", "gpus"),
        ("CPUs", "cpus"),
        ("memory GiB", "host_memory_gib"),
        ("NICs", "scale_out_nics"),
        ("max W", "max_power_w"),
    ),
    "nics": (("protocol", "protocol"), ("Gb/s", "gbps"), ("ports", "ports"), ("W", "power_w")),
    "switches": (
        ("protocol", "protocol"),
        ("ports", "ports"),
        ("Gb/s", "port_gbps"),
        ("W", "power_w"),
        ("ns", "latency_ns"),
    ),
    "optics": (
        ("form factor", "form_factor"),
        ("Gb/s", "gbps"),
        ("reach m", "reach_m"),
        ("W", "power_w"),
        ("kind", "kind"),
    ),
    "storage": (
        ("kind", "kind"),
        ("read GB/s", "read_gbytes_per_s"),
        ("write GB/s", "write_gbytes_per_s"),
        ("TB", "capacity_tb"),
        ("W", "power_w"),
    ),
    "scale_up_fabrics": (
        ("kind", "kind"),
        ("topology", "topology"),
        ("GPUs", "domain_size"),
        ("GB/s", "gbytes_per_s_per_direction"),
        ("tier 1", "first_tier_size"),
        ("+µs", "upper_tier_latency_us"),
    ),
}


def _get(row: dict[str, Any], dotted: str) -> str:
    v: Any = row
    for part in dotted.split("."):
        v = v.get(part) if isinstance(v, dict) else None
    if v is None:
        return "–"
    if isinstance(v, list):
        return ",".join(str(x) for x in v)
    return f"{v:g}" if isinstance(v, float) else str(v)


@app.command("catalog")
def catalog_cmd(
    kind: Annotated[str | None, typer.Option("--kind", help=f"one of: {', '.join(KINDS)}")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print JSON (the data-file entries, units in keys)")] = False,
) -> None:
    """List the hardware catalog entries with their key figures and sources."""
    if kind is not None and kind not in KINDS:
        raise CatalogError(f"--kind = {kind!r}: must be one of {', '.join(KINDS)}")
    kinds = (kind,) if kind else KINDS
    raw = catalog().raw
    if json_out:
        emit_json({k: raw[k] for k in kinds})
        return
    for k in kinds:
        t = Table(title=f"{k} ({len(raw[k])})", show_header=True, header_style="bold", title_justify="left")
        t.add_column(tx("name"), no_wrap=True)
        for header, _ in _COLUMNS[k]:
            t.add_column(tx(header), justify="right")
        t.add_column(tx("source"), overflow="fold", ratio=1)
        for row in raw[k]:
            t.add_row(row["name"], *(_get(row, key) for _, key in _COLUMNS[k]), row["source"])
        print_table(t)
