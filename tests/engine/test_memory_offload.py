"""Activation offloading to host memory (Megatron-Core cpu_offloading_num_layers through Transformer
Engine's CPU offload context): what it frees in HBM, what its copies cost on the host link, and the
rules under which Megatron-Core runs it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from wanka.catalog import accelerator
from wanka.engine import Strategies, make_context
from wanka.engine.api import evaluate_batch
from wanka.engine.feasibility import REASONS
from wanka.errors import WankaError
from wanka.spec import Scenario, parse_scenario
from wanka.validate.cases import load_cases
from wanka.validate.run import predict_case

EXTRA = Path(__file__).resolve().parents[2] / "benchmarks" / "extra_runs" / "nemo_perf_tables.yaml"


def _sc(acc: str = "GB200", precision: str = "fp8") -> Scenario:
    # Llama 3 70B, Megatron FSDP over 64 GPUs, micro-batch 2 (Megatron-Bridge's GB200 FP8 preset)
    return parse_scenario(
        {
            "cluster": {"accelerator": acc, "nodes": 16, "gpus_per_node": 4},
            "model": "llama3-70b",
            "training": {"global_batch_seqs": 256, "micro_batch": 2, "seq_len": 8192, "precision": precision},
            "parallel": {"tp": 1, "pp": 1, "dp": 64, "zero": 3, "sp": False, "recompute": "none"},
        }
    )


def _run(sc: Scenario, offload: list[int], **cols: object) -> dict[str, np.ndarray]:
    base = {"tp": 1, "pp": 1, "dp": 64, "zero": 3, "sp": False, "recompute": 0, "micro_batch": 2}
    st = Strategies.from_columns(**{**base, **cols, "offload": offload})  # type: ignore[arg-type]
    res = evaluate_batch(make_context(sc), st, 1.0)
    return {
        "act": res.raw["memory"]["activations"],
        "rec": res.raw["breakdown"]["recompute"],
        "step": res.step_time_s,
        "reason": res.reason,
    }


def test_offloaded_layers_leave_hbm_but_one_layer_stays_in_flight() -> None:
    sc = _sc()
    r = _run(sc, [0, 20, 40, 60])
    ctx = make_context(sc)
    per_layer = (r["act"][0] - r["act"][1]) / 19.0  # 20 layers out, one back in flight
    assert per_layer > 0
    # each further 20 layers free the same 20 layers' activations
    assert r["act"][1] - r["act"][2] == pytest.approx(20 * per_layer, rel=1e-9)
    assert r["act"][2] - r["act"][3] == pytest.approx(20 * per_layer, rel=1e-9)
    # a layer's activations are the stored inventory, not a constant: s·b = 16384 tokens x >= 200 kB
    assert per_layer > 16384 * 200e3
    assert ctx.acc.host_link_bandwidth > 0


def test_offload_costs_at_least_what_the_host_link_cannot_hide() -> None:
    # a GB200 (Grace NVLink-C2C) hides the copies behind the forward and backward; over a PCIe Gen5
    # host link (B200) the same bytes take 4x longer, so the exposed cost is never smaller
    fast, slow = _run(_sc("GB200"), [0, 40]), _run(_sc("B200"), [0, 40])
    extra_fast = fast["rec"][1] - fast["rec"][0]
    extra_slow = slow["rec"][1] - slow["rec"][0]
    assert extra_fast > 0  # the copies move the bytes through HBM twice (read, then write back)
    assert extra_slow >= extra_fast
    # conservation on the host link: exposed >= copy time - the compute it can overlap
    ctx = make_context(_sc("B200"))
    r = evaluate_batch(
        ctx, Strategies.from_columns(tp=1, pp=1, dp=64, zero=3, sp=False, recompute=0, micro_batch=2, offload=[40]), 1.0
    )
    m_mb = 256 / 64 / 2
    off = (slow["act"][0] - slow["act"][1]) * 40 / 39  # 40 layers' bytes per micro-batch
    t_copy = off / ctx.acc.host_link_bandwidth
    fwd_bwd = float(r.raw["breakdown"]["compute"][0]) / m_mb
    assert extra_slow >= m_mb * (2 * t_copy - fwd_bwd) - 1e-9
    # and a slower link is never faster
    assert slow["step"][1] - slow["step"][0] >= 0


def test_offload_is_infeasible_with_pipelining_recompute_or_every_layer() -> None:
    sc = _sc()
    rule = REASONS.index(next(r for r in REASONS if r.startswith("activation offload")))
    r = _run(sc, [10, 10, 80, 10], pp=[1, 2, 1, 1], dp=[64, 32, 64, 64], recompute=[1, 0, 0, 2])
    assert list(r["reason"][:3]) == [rule, rule, rule]
    assert r["reason"][3] == rule
    ok = _run(sc, [79])
    assert ok["reason"][0] in (-1, -2)  # feasible; 79 < 80 layers


def test_spec_rejects_offload_with_pipelining_or_recompute() -> None:
    from wanka.spec.training import ParallelSpec

    with pytest.raises((WankaError, ValueError), match="offload_layers"):
        ParallelSpec(pp=2, recompute="none", offload_layers=4)
    with pytest.raises((WankaError, ValueError), match="offload_layers"):
        ParallelSpec(recompute="full", offload_layers=4)
    assert ParallelSpec(recompute="none", offload_layers=4).offload_layers == 4


def test_host_link_is_a_catalog_fact_with_a_stated_default() -> None:
    gb200, h100, mi300x = accelerator("GB200"), accelerator("H100"), accelerator("MI300X")
    assert gb200.host_link_bandwidth > 3 * h100.host_link_bandwidth  # NVLink-C2C vs PCIe Gen5
    assert not h100.host_link_assumed
    assert mi300x.host_link_assumed  # no entry: PCIe Gen5 x16 assumed, and said so
    # the link the copies share with GPUDirect RDMA: NVLink-C2C's 450 GB/s per direction on Grace
    # superchips, the copies' own PCIe link elsewhere
    from wanka.catalog import catalog

    for a in catalog().accelerators.records:
        assert a.host_link_capacity >= a.host_link_bandwidth, a.name
    assert gb200.host_link_capacity == pytest.approx(450e9) and h100.host_link_capacity == h100.host_link_bandwidth


def test_nemo_fsdp_row_without_recompute_fits_by_offloading_as_nvidia_runs_it() -> None:
    # Megatron-Bridge's Llama 3 70B GB200 FP8 preset: FSDP, mb 2, cpu_offloading_num_layers 40, no
    # recompute. Not fitted: the validator chooses offload and recompute itself among layouts that fit
    cases, _ = load_cases(EXTRA)
    case = next(c for c in cases if c.id == "nemo2511_llama3_70b_gb200_fp8cs_64g")
    r = predict_case(case)
    assert r.predicted is not None, r.error
    assert r.strategy["recompute"] == "none"
    assert 0 < int(r.strategy["offload_layers"]) < 80  # type: ignore[call-overload]


def test_published_no_recompute_fsdp_run_is_predicted_with_offload_not_dropped() -> None:
    # public file: recompute none is published, activation offload is not (NVIDIA's preset offloads 40
    # of 80 layers); without offload no layout fits 173 GiB, so the case would go unpredicted
    cases, sup = load_cases()
    case = next(c for c in cases + sup if c.id == "nemo260401_llama3_70b_gb200_fp8cs_64g")
    r = predict_case(case)
    assert r.predicted is not None, r.error
    assert r.strategy["recompute"] == "none" and int(r.strategy["offload_layers"]) > 0  # type: ignore[call-overload]


def test_host_link_is_the_published_copy_rate_where_one_is_published() -> None:
    """Consistency check against the measurement the entries were taken from: nvbandwidth's copy-engine
    memcpy host -> device / device -> host on Azure's VMs (H100 51 / 52, H200 55 / 55, GB200 201 / 193 GB/s),
    the mean of the two directions; GB300's 211 / 193 stays bounded by its 194 GB/s share of Grace memory."""
    from wanka.catalog import accelerator

    published = {"H100-SXM5-80GB": (51.0, 52.0), "H200": (55.0, 55.0), "GB200": (201.0, 193.0)}
    for name, (h2d, d2h) in published.items():
        assert accelerator(name).host_link_bandwidth == pytest.approx((h2d + d2h) / 2 * 1e9), name
    assert accelerator("GB300").host_link_bandwidth == pytest.approx(194e9)  # memory share < (211 + 193) / 2
    assert accelerator("H100-SXM5-80GB").host_link_bandwidth < 0.85 * 63e9  # not PCIe Gen5's line rate


def test_offloaded_activations_must_fit_in_the_nodes_host_memory() -> None:
    # a GB200 tray's two Grace CPUs hold 894 GiB of LPDDR5X for its 4 GPUs (catalog node): what the
    # node's GPUs offload must fit there, or the layout cannot run, however much HBM it frees
    from wanka.catalog import node
    from wanka.engine.api import estimate_step
    from wanka.errors import InfeasibleError

    sc = _sc()
    ctx = make_context(sc)
    per_gpu = node("GB200-NVL72-tray").host_memory_bytes / 4
    assert ctx.host_memory_per_gpu == pytest.approx(per_gpu)
    offs = [10, 20, 30, 40, 50, 60, 70, 79]
    st = Strategies.from_columns(tp=1, pp=1, dp=64, zero=3, sp=False, recompute=0, micro_batch=2, offload=offs)
    res = evaluate_batch(ctx, st, 1.0)
    held = np.asarray(res.raw["offloaded_bytes"], dtype=float)
    hbm_ok = np.asarray(res.raw["memory_bytes"], dtype=float) <= ctx.hbm_usable
    assert np.all(np.diff(held) > 0)  # each further layer offloaded is held in host memory
    too_much = held > per_gpu
    assert too_much.any() and (~too_much).any()  # the limit binds inside the range tried
    assert list(res.fits) == list(hbm_ok & ~too_much)
    assert all(int(r) == -2 for r in res.reason[too_much])
    # offloading 70 of 80 layers frees enough HBM but holds more than the Grace memory: only the host
    # limit rejects it, with an error naming the field and the host memory
    binds = too_much & hbm_ok
    assert binds.any()
    k = int(np.flatnonzero(binds)[0])
    par = sc.parallel.model_copy(update={"offload_layers": offs[k]})  # type: ignore[union-attr]
    big = sc.model_copy(update={"parallel": par})
    with pytest.raises(InfeasibleError, match=r"offload_layers = \d+: .*host memory"):
        estimate_step(big)
    r = estimate_step(big, require_fit=False)
    assert r.memory.offloaded == pytest.approx(held[k]) and not r.memory.fits_host and not r.memory.fits
    d = r.memory.to_dict()
    assert d["offloaded"] == pytest.approx(held[k]) and d["host_capacity"] == pytest.approx(per_gpu)


def test_without_offload_the_host_memory_never_binds() -> None:
    sc = _sc()
    r = evaluate_batch(make_context(sc), Strategies.from_columns(tp=1, pp=1, dp=64, zero=3, recompute=2), 1.0)
    assert float(np.asarray(r.raw["offloaded_bytes"]).ravel()[0]) == 0.0
    assert bool(r.fits[0]) == bool(float(r.memory_bytes[0]) <= make_context(sc).hbm_usable)


def test_nic_traffic_shares_the_host_link_with_the_copies_on_pcie_not_on_grace() -> None:
    # GPUDirect RDMA crosses the GPU's one PCIe link (or, on GB200, NVLink-C2C behind Grace) beside the
    # offload copies: on a PCIe host a busy NIC leaves the copies less of the link; Grace's 450 GB/s link
    # leaves its memory-bound 197 GB/s copies whole
    from types import SimpleNamespace

    from wanka.engine.core import offload_time

    cm = SimpleNamespace(t_fwd=np.array([1.0]), t_bwd=np.array([2.0]), t_rec=np.array([0.0]))
    for acc, shared in (("H100-SXM5-80GB", True), ("GB200", False)):
        ctx = make_context(_sc(acc))
        st = Strategies.from_columns(tp=1, pp=1, dp=64, zero=3, sp=False, recompute=0, micro_batch=2, offload=[40])
        off = np.array([0.9 * ctx.acc.host_link_bandwidth])  # 0.9 s of copies: hidden behind a 1 s forward
        quiet = float(offload_time(ctx, st, cm, off, 0.0)[0])
        busy = float(offload_time(ctx, st, cm, off, np.array([1.5]))[0])  # NIC busy half the 3 s
        nic_rate = 1.5 * ctx.scale_out_bw * ctx.cal.scale_out_efficiency / 3.0
        hbm = 2.0 * off[0] / (ctx.hbm_bw * ctx.cal.elementwise_efficiency)
        assert quiet == pytest.approx(hbm)  # nothing exposed but the copies' HBM traffic
        if shared:
            assert ctx.acc.host_link_capacity == ctx.acc.host_link_bandwidth  # a PCIe link bounds both
            rate = ctx.acc.host_link_capacity - nic_rate
            # conservation on the shared link: exposed >= copy time at what the NIC leaves - the forward
            assert busy == pytest.approx(hbm + (off[0] / rate - 1.0))
            assert busy > quiet
        else:
            assert ctx.acc.host_link_capacity - nic_rate > ctx.acc.host_link_bandwidth
            assert busy == pytest.approx(quiet)


def _job(framework: str, release: str) -> dict[str, object]:
    return {
        "cluster": {"accelerator": "H100", "nodes": 2},
        "model": "llama3-8b",
        "training": {"global_batch_seqs": 64, "micro_batch": 1, "seq_len": 8192},
        "software": {"framework": framework, "release": release},
    }


def test_frameworks_without_activation_offload_reject_it_and_search_never_tries_it() -> None:
    # torchtitan's job config offers FSDP CPU offload of parameters only; Megatron-Core has cpu_offloading
    # from 0.5 (core_v0.5.0 transformer_block.py), so Megatron-LM of 2023 (core 0.4) has none either
    from wanka.engine.strategies import software_columns
    from wanka.planner import SearchSpace, enumerate_space
    from wanka.spec.training import ParallelSpec

    par = {"tp": 1, "pp": 1, "dp": 16, "zero": 3, "recompute": "none", "offload_layers": 8}
    with pytest.raises(WankaError, match="offload_layers"):
        parse_scenario({**_job("torchtitan", "2024"), "parallel": par})
    assert parse_scenario({**_job("nemo", "25.11"), "parallel": par}).parallel.offload_layers == 8  # type: ignore[union-attr]
    counts = {}
    for fw, rel in (("torchtitan", "2024"), ("llm-foundry", "2023"), ("nemo", "25.11"), ("megatron-lm", "2023")):
        sc = parse_scenario(_job(fw, rel))
        assert sc.software is not None
        switches = software_columns(ParallelSpec(**sc.software.switches()))
        st, _ = enumerate_space(make_context(sc), SearchSpace(micro_batches=(1,), vpp_max=1), switches)
        counts[fw] = int((st.offload > 0).sum())
    assert counts["nemo"] > 0
    assert counts["torchtitan"] == counts["llm-foundry"] == counts["megatron-lm"] == 0
    # the engine's rule holds whatever the columns say: Megatron-LM 2023 builds on Megatron-Core 0.4
    rule = REASONS.index(next(r for r in REASONS if r.startswith("activation offload")))
    old = make_context(parse_scenario(_job("megatron-lm", "2023")))
    new = make_context(parse_scenario(_job("nemo", "25.11")))
    st = Strategies.from_columns(tp=1, pp=1, dp=16, zero=3, recompute=0, offload=[8])
    assert int(evaluate_batch(old, st, 1.0).reason[0]) == rule
    assert int(evaluate_batch(new, st, 1.0).reason[0]) in (-1, -2)


def test_validator_completes_with_offload_only_where_the_framework_has_it() -> None:
    from wanka.validate.run import _candidates

    cases, _ = load_cases(Path(__file__).resolve().parents[2] / "benchmarks" / "extra_runs" / "papers.yaml")
    case = next(c for c in cases if c.id == "mpt_1b_h100_bf16_64gpu_seq2048")  # llm-foundry / Composer FSDP
    from wanka.validate.cases import case_scenario

    sc, unknown = case_scenario(case)
    assert sc.parallel is not None and not sc.parallel.activation_offload
    assert not np.any(_candidates(sc, unknown).offload > 0)
    r = predict_case(case)
    assert r.predicted is None or int(r.strategy["offload_layers"]) == 0  # type: ignore[call-overload]


def test_a_batch_says_which_memory_a_layout_overflows() -> None:
    # the batch API names the host memory when only the offloaded activations overflow, HBM otherwise
    sc = _sc()
    st = Strategies.from_columns(tp=1, pp=1, dp=64, zero=3, sp=False, recompute=0, micro_batch=2, offload=[0, 70])
    res = evaluate_batch(make_context(sc), st, 1.0)
    assert list(res.reason) == [-2, -2]
    assert res.reason_text(0) == "does not fit in HBM"  # no offload: 321 GiB of activations in HBM
    assert res.reason_text(1) == "offloaded activations do not fit in the node's host memory"
