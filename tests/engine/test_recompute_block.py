"""Full recompute of only N layers per model chunk (Megatron-Core ``--recompute-method block
--recompute-num-layers N``): its cost and memory scale with N, N = every layer is plain full recompute,
N = 0 is no recompute, bad values are refused naming the field."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from wanka.cli import main
from wanka.engine import Strategies, make_context
from wanka.engine.api import evaluate_batch
from wanka.engine.feasibility import REASONS
from wanka.errors import WankaError
from wanka.planner.export import launch_args
from wanka.spec import ParallelSpec, Scenario, parse_scenario

LAYERS = 32  # Llama 3 8B


def _sc(pp: int = 1, vpp: int = 1, flash: bool = True) -> Scenario:
    return parse_scenario(
        {
            "cluster": {"accelerator": "H100", "nodes": 1, "gpus_per_node": 8},
            "model": "llama3-8b",
            "training": {"global_batch_seqs": 64, "micro_batch": 1, "seq_len": 8192, "precision": "bf16"},
            "parallel": {"tp": 1, "pp": pp, "vpp": vpp, "dp": 8 // pp, "zero": 1, "flash_attention": flash},
        }
    )


def _run(sc: Scenario, rec: list[int], rc: list[int]) -> dict[str, np.ndarray]:
    p = sc.parallel
    assert p is not None
    st = Strategies.from_columns(
        tp=1, pp=p.pp, vpp=p.vpp, dp=p.dp, zero=1, micro_batch=1, flash=p.flash_attention, recompute=rec, rc_layers=rc
    )
    res = evaluate_batch(make_context(sc), st, 1.0)
    return {
        "step": res.step_time_s,
        "rec": res.raw["breakdown"]["recompute"],
        "act": res.raw["memory"]["activations"],
        "hfu": res.raw["hfu"],
        "tp": res.raw["breakdown"]["tp_comm"],
        "reason": res.reason,
    }


def test_cost_and_memory_scale_with_the_layers_recomputed() -> None:
    n = [4, 12, 20, 28]
    r = _run(_sc(), [2] * 4, n)
    full = _run(_sc(), [2], [-1])
    # recompute re-runs the forward of N of the 32 layers: N/32 of full recompute's extra forward
    assert np.allclose(r["rec"], full["rec"][0] * np.array(n) / LAYERS, rtol=1e-9)
    # each recomputed layer keeps only its input instead of its activations: memory falls linearly
    d_act = -np.diff(r["act"])
    assert np.all(d_act > 0) and d_act == pytest.approx(np.full(3, d_act[0]), rel=1e-9)
    assert np.all(np.diff(r["step"]) > 0) and np.all(np.diff(r["hfu"]) > 0)


def test_every_layer_is_plain_full_recompute_and_zero_is_none() -> None:
    for flash in (True, False):
        sc = _sc(flash=flash)
        r = _run(sc, [2, 2, 2, 0], [LAYERS, 1000, 0, -1])
        full = _run(sc, [2], [-1])
        for k in ("step", "rec", "act", "hfu", "tp"):
            assert r[k][0] == pytest.approx(full[k][0], rel=1e-12), k
            assert r[k][1] == pytest.approx(full[k][0], rel=1e-12), k  # a chunk of fewer layers: all of them
            assert r[k][2] == pytest.approx(r[k][3], rel=1e-12), k  # N = 0: as without recompute
        assert r["act"][2] > r["act"][0]


def test_block_method_counts_layers_per_model_chunk() -> None:
    # pp 4 x vpp 2 over 32 layers: 4 layers per chunk, 2 chunks per stage; N = 2 recomputes 2 of
    # each chunk, half the stage; N = 4 every layer (Megatron-Core: len(self.layers) of each block)
    sc = _sc(pp=4, vpp=2)
    r = _run(sc, [2, 2, 2], [2, 4, -1])
    assert r["rec"][0] == pytest.approx(0.5 * r["rec"][2], rel=1e-9)
    assert r["rec"][1] == pytest.approx(r["rec"][2], rel=1e-12)
    assert r["act"][0] > r["act"][1]
    # without interleaving the stage is one chunk of 8 layers: N = 2 is a quarter of it
    r1 = _run(_sc(pp=4), [2, 2], [2, -1])
    assert r1["rec"][0] == pytest.approx(0.25 * r1["rec"][1], rel=1e-9)


def test_bad_values_are_refused_naming_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises((WankaError, ValueError), match="recompute_layers"):
        ParallelSpec(recompute="selective", recompute_layers=4)
    with pytest.raises((WankaError, ValueError), match="recompute_layers"):
        ParallelSpec(recompute="full", recompute_layers=-1)
    assert ParallelSpec(recompute="full", recompute_layers=4).recompute_layers == 4
    # a strategy built from columns breaks the engine's rule instead
    r = _run(_sc(), [1], [4])
    assert "recompute_layers" in REASONS[int(r["reason"][0])]
    for bad in ("{recompute: none, recompute_layers: 3}", "{recompute: full, recompute_layers: -2}"):
        p = tmp_path / "bad.yaml"
        p.write_text(
            "cluster: {accelerator: H100, nodes: 1, gpus_per_node: 8}\nmodel: llama3-8b\n"
            f"training: {{global_batch_seqs: 64}}\nparallel: {bad}\n",
            encoding="utf-8",
        )
        assert main(["show", str(p)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error:") and "recompute_layers" in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1


def test_export_writes_megatron_block_flags() -> None:
    sc = _sc()
    assert sc.parallel is not None

    def args(**kw: object) -> tuple[list[str], list[str]]:
        one = sc.model_copy(update={"parallel": sc.parallel.model_copy(update=kw)})  # type: ignore[union-attr]
        return launch_args(one, "megatron"), launch_args(one, "nemo")

    mg, nm = args(recompute="full", recompute_layers=5)
    assert "--recompute-method block" in mg and "--recompute-num-layers 5" in mg
    assert "model.config.recompute_method=block" in nm and "model.config.recompute_num_layers=5" in nm
    mg, nm = args(recompute="full")
    assert "--recompute-method uniform" in mg and "model.config.recompute_method=uniform" in nm
    mg, nm = args(recompute="full", recompute_layers=0)  # no layer recomputed: no recompute flags
    assert not any("recompute" in a for a in mg + nm)
