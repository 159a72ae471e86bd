"""Presets whose assumptions say their layout is the one `wanka search` ranks first keep that true: the
preset's own step is within 0.5% of the search's best (ties within the engine's resolution count), over
the layouts the claim names (without activation offload, where the assumption says so). A change of the
engine or of the calibration that moves the ranking fails here, so the preset's text is revisited."""

from __future__ import annotations

import pytest

from wanka.engine import estimate_step
from wanka.planner.search import search
from wanka.spec import load_scenario

CLAIMS = [
    ("xai-colossus-100k-h100", "the fastest layout `wanka search` finds", False),
    ("gb200-nvl72-576", "`wanka search` ranks first here", False),
    ("cloudmatrix384", "`wanka search` ranks first here without activation offload", True),
]


@pytest.mark.parametrize(("name", "claim", "no_offload"), CLAIMS, ids=[c[0] for c in CLAIMS])
def test_preset_layout_is_the_search_best_it_claims(name: str, claim: str, no_offload: bool) -> None:
    sc = load_scenario(name)
    assert any(claim in str(a) for a in sc.assumptions), claim  # the preset still says so
    own = estimate_step(sc).step_time_s
    res = search(sc, top=50)
    tops = [c for c in res.top if not (no_offload and c.offload_layers)]
    assert tops, name
    assert own <= tops[0].step_time_s * 1.005, (name, own, tops[0])


@pytest.mark.parametrize(
    ("name", "same_as"), [("gb200-nvl576", "gb200-nvl72-576"), ("ascend-910c-384-8npu", "cloudmatrix384")]
)
def test_comparison_presets_run_their_reference_layout(name: str, same_as: str) -> None:
    # these presets say their layout is the reference preset's, so that the pair differs only in hardware
    a, b = load_scenario(name), load_scenario(same_as)
    assert any(same_as in str(x) for x in a.assumptions)
    assert a.parallel == b.parallel
