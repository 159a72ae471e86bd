"""Published nccl-tests results against the collective model: busbw error per row, MAPE by role.

Rows and sources: ``benchmarks/nccl_tests_published.yaml``. Rows with ``role: fit`` set a model
constant (consistency checks); ``role: check`` rows were never used to set one (held out).
Run: ``.venv/bin/python -m benchmarks.check_nccl_tests``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from wanka.catalog import accelerator
from wanka.network.collectives import CommGroup, collective_time
from wanka.units import gbps_to_bytes_per_s

DATA = Path(__file__).with_name("nccl_tests_published.yaml")


@dataclass(frozen=True)
class Row:
    id: str
    role: str
    single_domain: bool
    published: float
    predicted: float
    algorithm: str
    protocol: str

    @property
    def error(self) -> float:
        return self.predicted / self.published - 1.0


def load_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = yaml.safe_load(DATA.read_text())["rows"]
    return rows


def predict(row: dict[str, Any]) -> Row:
    acc = accelerator(row["accelerator"])
    g = CommGroup(
        size=float(row["gpus"]),
        per_domain=float(row["per_domain"]),
        scale_up_bw=acc.scale_up_bandwidth,
        scale_out_bw=gbps_to_bytes_per_s(row["nic_gbps"]),
        scale_up_reduction=bool(row.get("nvls", False)),
        in_network_reduction=bool(row.get("sharp", False)),
        architecture=acc.architecture,
    )
    r = collective_time(row["op"], float(row["bytes"]), g, row.get("algorithm") or "auto")
    return Row(
        row["id"],
        row["role"],
        row["gpus"] <= row["per_domain"],
        float(row["busbw_gbs"]),
        float(r.busbw) / 1e9,
        r.algorithm,
        r.protocol,
    )


def mape(rows: list[Row]) -> float:
    return sum(abs(r.error) for r in rows) / len(rows) if rows else 0.0


def main() -> None:
    rows = [predict(r) for r in load_rows()]
    print(f"{'row':<28} {'role':<6} {'published':>9} {'model':>8} {'error':>7}  algorithm/protocol")
    for r in rows:
        print(
            f"{r.id:<28} {r.role:<6} {r.published:9.1f} {r.predicted:8.1f} {r.error:+7.1%}  {r.algorithm}/{r.protocol}"
        )
    for label, sel in (
        ("all rows", rows),
        ("check rows (held out)", [r for r in rows if r.role == "check"]),
        ("fit rows (consistency)", [r for r in rows if r.role == "fit"]),
        ("multi-domain rows", [r for r in rows if not r.single_domain]),
        ("single-domain rows", [r for r in rows if r.single_domain]),
    ):
        worst = max(sel, key=lambda r: abs(r.error))
        print(f"{label:<24} n={len(sel):>2}  MAPE {mape(sel):6.1%}  worst {worst.id} {worst.error:+.1%}")


if __name__ == "__main__":
    main()
