"""Strategy search: finds the fastest strategy, ranks the published layout, explains, Pareto fronts."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from wanka.engine import Strategies, evaluate_batch, make_context
from wanka.errors import SpecError
from wanka.planner import SearchSpace, enumerate_space, job_scenario, search
from wanka.spec import load_scenario

from .helpers import small


@pytest.fixture(scope="module")
def llama405() -> object:
    sc = load_scenario("llama3-405b-16k-h100-54d")
    assert sc.parallel is not None
    # the published layout (Llama 3 paper Table 4): TP8 / PP16 / CP1 / DP128 on 16,384 H100
    published = sc.parallel.model_copy(update={"tp": 8, "pp": 16, "cp": 1, "dp": 128})
    sc = sc.model_copy(update={"parallel": published})
    return sc, search(sc, top=10)


def test_search_beats_or_matches_the_published_llama3_layout(llama405: object) -> None:
    _, r = llama405  # type: ignore[misc]
    b = r.baseline
    assert b is not None and b.feasible, b and b.why_not
    c = b.candidate
    assert (c.tp, c.pp, c.cp, c.dp) == (8, 16, 1, 128)
    assert r.best.step_time_s <= c.step_time_s * (1 + 1e-12)
    assert r.best.time_to_train_s <= c.time_to_train_s * (1 + 1e-12)
    # the published layout is ranked inside the feasible set, consistently with the top list
    assert b.rank is not None and 1 <= b.rank <= r.feasible == b.feasible_total
    assert b.shape_rank is not None and 1 <= b.shape_rank <= b.rank
    if b.rank <= len(r.top):
        assert r.top[b.rank - 1].time_to_train_s <= c.time_to_train_s * (1 + 1e-12)
    assert all(t.time_to_train_s < c.time_to_train_s for t in r.top[: b.rank - 1])


def test_top_is_sorted_feasible_and_no_hand_built_strategy_is_faster(llama405: object) -> None:
    sc, r = llama405  # type: ignore[misc]
    times = [c.time_to_train_s for c in r.top]
    assert times == sorted(times)
    assert [c.rank for c in r.top] == list(range(1, len(r.top) + 1))
    # brute force over a hand-made grid, straight through the engine: nothing beats the search's best
    ctx = make_context(job_scenario(sc))
    grid = [
        (tp, pp, 16384 // (tp * pp * cp), cp, mb, v, z, rec)
        for tp, pp, cp, mb, v, z, rec in itertools.product(
            (1, 2, 4, 8), (1, 2, 4, 8, 16, 32), (1, 2, 4, 8), (1, 2), (1, 2, 4), (0, 1, 2, 3), (0, 1, 2)
        )
        if 16384 % (tp * pp * cp) == 0 and not (pp == 1 and v > 1)
    ]
    a = np.array(grid)
    st = Strategies.from_columns(
        tp=a[:, 0],
        pp=a[:, 1],
        dp=a[:, 2],
        cp=a[:, 3],
        micro_batch=a[:, 4],
        vpp=a[:, 5],
        zero=a[:, 6],
        recompute=a[:, 7],
        sp=a[:, 0] > 1,
    )
    res = evaluate_batch(ctx, st, sc.training.tokens)
    assert res.feasible.any()
    assert r.best.step_time_s <= float(res.step_time_s[res.feasible].min()) * (1 + 1e-9)


def test_reasons_name_the_terms(llama405: object) -> None:
    _, r = llama405  # type: ignore[misc]
    assert r.top[0].reason.startswith("best by time")
    assert "headroom" in r.top[0].reason
    for c in r.top[1:]:
        assert "vs #1" in c.reason or "ties #1" in c.reason
        assert "headroom" in c.reason


def test_result_json_has_the_documented_fields(llama405: object) -> None:
    _, r = llama405  # type: ignore[misc]
    d = json.loads(json.dumps(r.to_dict()))
    need = {
        "tp",
        "pp",
        "dp",
        "cp",
        "ep",
        "vpp",
        "micro_batch",
        "recompute",
        "zero",
        "step_time_s",
        "mfu",
        "memory_bytes",
        "time_to_train_s",
        "reason",
    }
    assert need <= set(d["strategies"][0])
    assert d["baseline"]["rank"] == r.baseline.rank  # type: ignore[union-attr]
    assert d["evaluated"] == r.evaluated >= r.feasible + r.no_fit


def test_memory_pruning_changes_nothing() -> None:
    for sc in (small(nodes=4), small(nodes=8, model="llama3-70b", batch=128)):
        a = search(sc, top=5)
        b = search(sc, top=5, space=SearchSpace(memory_prune=False))
        assert [c.to_dict() for c in a.top] == [c.to_dict() for c in b.top]
        assert a.feasible == b.feasible


def test_energy_and_cost_objectives_rank_by_their_figure() -> None:
    sc = small(nodes=4)
    for obj, attr in (("cost", "energy_cost"), ("energy", "energy_j")):
        r = search(sc, top=5, objective=obj, facility_pool=20)
        vals = [getattr(c, attr) for c in r.top]
        assert all(v is not None and v > 0 for v in vals)
        assert vals == sorted(vals)  # type: ignore[type-var]
        assert r.top[0].reason.startswith(f"best by {obj}")


def test_gpu_counts_give_a_pareto_front_of_time_vs_gpus() -> None:
    sc = small(nodes=8)
    r = search(sc, top=3, gpus=[8, 16, 32, 64])
    assert r.pareto_axes == ("gpus", "time_to_train_s")
    xs = [p.x for p in r.pareto]
    ys = [p.y for p in r.pareto]
    assert xs == sorted(xs) and all(a > b for a, b in itertools.pairwise(ys))
    assert set(r.gpus) == {8, 16, 32, 64}
    # the front's last point is the fastest strategy of all
    assert ys[-1] == pytest.approx(r.best.time_to_train_s)


def test_goodput_for_the_top_k() -> None:
    r = search(small(nodes=4), top=2, goodput=True, replicas=50)
    for c in r.top:
        assert c.goodput is not None and 0 < c.goodput <= 1
        assert c.effective_time_to_train_s is not None and c.effective_time_to_train_s >= c.time_to_train_s


def test_moe_search_uses_expert_parallel() -> None:
    sc = small(nodes=8, model="mixtral-8x7b", batch=128)
    r = search(sc, top=20)
    assert r.feasible > 0
    n_exp = sc.model.moe.n_experts  # type: ignore[union-attr]
    for c in r.top:
        assert n_exp % c.ep == 0 and (c.dp * c.cp) % c.ep == 0
    st, _ = enumerate_space(make_context(job_scenario(sc)))
    assert (st.ep > 1).any() and (n_exp % st.ep == 0).all() and ((st.dp * st.cp) % st.ep == 0).all()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"objective": "speed"}, "objective"), ({"top": 0}, "top"), ({"gpus": [10_000]}, "gpus")],
)
def test_bad_arguments_name_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(SpecError) as e:
        search(small(nodes=2), **kwargs)  # type: ignore[arg-type]
    assert e.value.field == field


def test_a_cluster_without_a_job_is_a_clear_error() -> None:
    from wanka.spec import parse_scenario

    with pytest.raises(SpecError, match="training job"):
        search(parse_scenario({"cluster": {"accelerator": "H100-SXM5-80GB", "nodes": 2}}))


def test_a_search_that_times_nothing_names_what_dropped_every_layout() -> None:
    """405B on 7 GPUs: every shape falls to a shape rule or to memory before any is timed, and the
    note names those rules with their counts instead of 'none'."""
    res = search(load_scenario("llama3-405b-16k-h100-54d"), gpus=[7])
    assert res.top == () and res.evaluated == 0
    (note,) = [n for n in res.notes if n.startswith("no feasible strategy")]
    assert "tp does not divide n_heads" in note and "does not fit in HBM" in note and "none" not in note


def test_search_finds_the_offloading_fsdp_layout_nvidia_runs_on_gb200() -> None:
    # Megatron-Bridge's Llama 3 70B GB200 FP8 preset runs FSDP over 64 GPUs at micro-batch 2 with no
    # recompute and activation offload (cpu_offloading_num_layers 40; here, without the preset's
    # software switches, 50 layers fit): the search must rank at least as fast as that layout, which
    # fits only by offloading
    from wanka.spec import parse_scenario

    sc = parse_scenario(
        {
            "cluster": {"accelerator": "GB200", "nodes": 16, "gpus_per_node": 4},
            "model": "llama3-70b",
            "training": {
                "tokens": 1e11,
                "global_batch_seqs": 256,
                "micro_batch": 2,
                "seq_len": 8192,
                "precision": "fp8",
            },
            "parallel": {"tp": 1, "pp": 1, "dp": 64, "zero": 3, "sp": False, "recompute": "none", "offload_layers": 50},
        }
    )
    r = search(sc, top=5)
    b = r.baseline
    assert b is not None and b.feasible, b and b.why_not
    assert r.best.step_time_s <= b.candidate.step_time_s * (1 + 1e-12)
    assert b.rank is not None and b.rank <= r.feasible
    # without offload, no-recompute FSDP at micro-batch 2 does not fit: the recipe's own shape needs it
    same = [c for c in r.top if (c.tp, c.pp, c.dp, c.zero, c.micro_batch) == (1, 1, 64, 3, 2) and c.recompute == "none"]
    assert all(c.offload_layers > 0 for c in same)
    best = r.best
    if best.offload_layers:
        spec = best.parallel_spec()
        assert spec.offload_layers == best.offload_layers and spec.pp == 1 and spec.recompute == "none"
        assert best.memory_saving() == f"offload {best.offload_layers}"
        assert best.to_dict()["offload_layers"] == best.offload_layers
