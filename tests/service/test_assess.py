"""The service layer: one assess() runs the layers in order and returns every assumption."""

from __future__ import annotations

import json
import math

import pytest

from wanka.engine import estimate_step
from wanka.errors import SpecError
from wanka.planner import search
from wanka.planner.presets import PRESETS, get_preset, placement_sizes, search_preset
from wanka.service import LAYERS, assess, choose_strategy
from wanka.spec import load_scenario


@pytest.fixture(scope="module")
def trad():  # type: ignore[no-untyped-def]
    return assess(load_scenario("traditional-512-a100"), replicas=30, until_trained=True)


def test_every_layer_runs_and_feeds_the_next(trad) -> None:  # type: ignore[no-untyped-def]
    a = trad
    assert a.layers == LAYERS and not a.errors
    assert a.step is not None and a.campaign is not None and a.facility is not None
    assert a.checkpoint is not None and a.data_read is not None and a.network is not None
    # ops ran on the engine's step time; facility on the engine's MFU and the ops wall clock
    assert a.campaign.wall_clock_s.mean >= a.step.time_to_train_s
    assert a.facility.utilization == pytest.approx(a.step.mfu)
    assert a.facility.wall_clock_s == pytest.approx(a.campaign.wall_clock_s.mean)
    assert a.data_read.tokens_per_s == pytest.approx(a.step.tokens_per_s)


def test_assumptions_are_tagged_and_complete(trad) -> None:  # type: ignore[no-untyped-def]
    a = trad
    origins = {x.origin for x in a.assumptions}
    assert {"preset", "ops", "facility", "network"} <= origins
    texts = [x.text for x in a.assumptions]
    assert len(texts) == len(set(texts))
    for note in a.scenario.assumptions:
        assert note in texts
    for note in a.facility.assumptions:
        assert note in texts


def test_to_dict_is_plain_json_without_nan(trad) -> None:  # type: ignore[no-untyped-def]
    text = json.dumps(trad.to_dict(), allow_nan=False)
    d = json.loads(text)
    assert d["engine"]["mfu"] == pytest.approx(trad.step.mfu)
    assert d["scenario_spec"]["cluster"]["accelerator"] == trad.scenario.cluster.accelerator


def test_what_selects_layers_and_rejects_unknown() -> None:
    s = load_scenario("traditional-512-a100")
    a = assess(s, ("network",))
    assert a.step is None and a.campaign is None and a.network is not None
    with pytest.raises(SpecError, match="what"):
        assess(s, ("engine", "weather"))
    with pytest.raises(SpecError, match="replicas"):
        assess(s, replicas=0)


def test_no_strategy_means_one_shared_search() -> None:
    s = load_scenario("traditional-512-a100").model_copy(update={"parallel": None})
    a = assess(s, ("engine",), preset="search")
    assert a.strategy is not None and a.strategy.searched and a.step is not None
    best = search(s, top=1).best
    st = a.step.strategy
    assert (st["tp"], st["pp"], st["dp"], st["micro_batch"], st["zero"]) == (
        best.tp,
        best.pp,
        best.dp,
        best.micro_batch,
        best.zero,
    )
    assert a.step.time_to_train_s == pytest.approx(best.time_to_train_s)
    assert any(x.origin == "service" and "wanka search" in x.text for x in a.assumptions)


def test_infeasible_scenario_strategy_falls_back_to_the_search() -> None:
    s = load_scenario("traditional-512-a100")
    assert s.parallel is not None
    bad = s.model_copy(update={"parallel": s.parallel.model_copy(update={"tp": 1, "dp": 512, "zero": 0})})
    bad = bad.model_copy(update={"training": bad.training.model_copy(update={"micro_batch": 8})})  # type: ignore[union-attr]
    try:
        estimate_step(bad)
    except Exception:
        a = assess(bad, ("engine",))
        assert a.strategy is not None and a.strategy.why and a.step is not None and a.step.memory.fits
    else:  # the engine accepts it: nothing to fall back from
        a = assess(bad, ("engine",))
        assert a.strategy is not None and not a.strategy.searched


def test_placement_sizes_are_the_largest_powers_of_two_and_three() -> None:
    s = load_scenario("xai-colossus-100k-h100")
    sizes = placement_sizes(s, 6)
    assert sizes[0] == s.gpus and 98_304 in sizes and 65_536 in sizes
    for n in sizes[1:]:
        m = n // 3 if n % 3 == 0 else n
        assert m & (m - 1) == 0 and n <= s.cluster.accelerators


def test_place_preset_beats_the_largest_size_when_bubbles_dominate() -> None:
    """The issue's case: Llama 3 70B on xAI Colossus. The search over sizes picks the fastest time to train."""
    from wanka.report.compare import DEFAULT_BATCH_TOKENS, _job_training, job_on
    from wanka.spec import load_model

    m = load_model("llama3-70b")
    s = job_on(
        load_scenario("xai-colossus-100k-h100"),
        model=m,
        training=_job_training(m, None, DEFAULT_BATCH_TOKENS),
        note="test",
    )
    res = search_preset(s, "place")
    best = res.best
    for n in res.gpus:
        one = search(s.model_copy(update={"job_gpus": n}), top=1)
        if one.top:
            assert best.time_to_train_s <= one.top[0].time_to_train_s * (1 + 1e-12)
    picked, choice = choose_strategy(s)
    assert picked.gpus == best.gpus and choice.candidate == best
    assert best.mfu > 0.2 and math.isfinite(best.time_to_train_s)


def test_presets_are_named_and_unknown_is_an_error() -> None:
    assert set(PRESETS) == {"search", "place", "quick"}
    with pytest.raises(SpecError, match="preset"):
        get_preset("fastest")
