"""Fixtures shared across test packages."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from wanka.engine import StepResult, estimate_step, make_context
from wanka.engine.context import Context
from wanka.spec import Scenario, load_model, parse_scenario
from wanka.validate.cases import Case, case_scenario, load_cases

NEMO_TABLES = Path(__file__).resolve().parents[1] / "benchmarks" / "extra_runs" / "nemo_perf_tables.yaml"

# property tests draw the same examples on every run (CI runs with no example database): a property
# that fails fails every time, on every machine, instead of once in a while; `HYPOTHESIS_PROFILE=explore`
# draws fresh examples for a local search
settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def deepseek_h800() -> Callable[..., Scenario]:
    """DeepSeek-V3 in FP8 on 32 nodes of H800 (1,024 sequences of 4,096 tokens) with a ``parallel:`` block:
    ``deepseek_h800(base, **changes)`` takes ``base`` with ``changes`` over it."""

    def build(base: dict[str, object], **parallel: object) -> Scenario:
        return parse_scenario(
            {
                "cluster": {"accelerator": "H800", "nodes": 32},
                "model": "deepseek-v3",
                "training": {"global_batch_seqs": 1024, "precision": "fp8", "seq_len": 4096},
                "parallel": {**base, **parallel},
            }
        )

    return build


@pytest.fixture
def scenario_of_case(tmp_path: Path) -> Callable[[str], Scenario]:
    """The scenario the validator builds for the first case of a ``wanka-validation/1`` text. The text
    is written to a file and loaded from there, through the same door as a user's validation file."""

    def build(text: str) -> Scenario:
        p = tmp_path / "cases.yaml"
        p.write_text(text, encoding="utf-8")
        cases, _ = load_cases(p)
        return case_scenario(cases[0])[0]

    return build


@pytest.fixture(scope="session")
def nemo_step() -> Callable[..., StepResult]:
    """One step of a NeMo performance-table row by id, with dotted-path changes to its raw fields
    (``nemo_step(row, **{"software.cuda_graphs": False})``), built through the validator's case door."""
    raw_by_id = {c.id: c.raw for c in load_cases(NEMO_TABLES)[0]}

    def step(row_id: str, **changes: Any) -> StepResult:
        raw = copy.deepcopy(raw_by_id[row_id])
        for path, value in changes.items():
            *head, last = path.split(".")
            d = raw
            for k in head:
                d = d[k]
            d[last] = value
        case = Case(id=row_id, kind="steady_state", raw=raw)
        return estimate_step(case_scenario(case)[0], require_fit=False)

    return step


@pytest.fixture(scope="session")
def attention_ctx() -> Callable[..., Context]:
    """The engine context of Llama 3 8B with its 4096-wide attention cut into heads of ``head_dim``
    (4096 / head_dim heads, 8 KV heads: the same attention FLOPs per token) on one node of
    ``accelerator``, 8k tokens, BF16."""

    def build(head_dim: int, accelerator: str = "H100-SXM5-80GB") -> Context:
        model: dict[str, Any] = load_model("llama3-8b").model_dump(exclude_none=True)
        model.update(n_heads=4096 // head_dim, head_dim=head_dim, n_kv_heads=8)
        sc = parse_scenario(
            {
                "cluster": {"accelerator": accelerator, "nodes": 1},
                "model": model,
                "training": {"global_batch_seqs": 64, "precision": "bf16", "seq_len": 8192},
                "parallel": {"tp": 1, "pp": 1, "dp": 8},
            }
        )
        return make_context(sc)

    return build
