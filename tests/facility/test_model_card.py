"""Model-card energy and emissions of open model families, predicted end to end.

wanka predicts the GPU-hours (engine step time → operations campaign with failures, restarts and
checkpoints → wall clock × GPUs) and reports them in the model-card convention, GPU-hours × board
power × grid factor. The published GPU-hours are NOT inputs; only each card's board power (the
catalog TDP) and its grid factor (a site input: published tCO2 / published MWh) are.

Published figures (model cards / papers):
- Llama 3.1 405B (meta-llama/Llama-3.1-405B model card, "Training Energy Use"): 30.84 M GPU-hours on
  H100-80GB at 700 W, 8,930 t CO2eq location-based.
- Llama 2 70B (Touvron et al. 2023, Table 2 / model card): 1,720,320 GPU-hours on A100-80GB at 400 W,
  291.42 t CO2eq.
- BLOOM 176B (Luccioni et al. 2023, JMLR 24:253): 1,082,990 GPU-hours × 400 W = 433,196 kWh dynamic
  energy, 24.69 t CO2eq at the French grid's 57 g/kWh.
Tolerance: 15 % (issue 14). BLOOM is outside it today (about -19 %, see its own test below).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from wanka.engine import estimate_step
from wanka.facility import assess
from wanka.ops import simulate_campaign
from wanka.spec import Scenario, load_scenario, parse_scenario

DATA = Path(__file__).parent / "data"


def _with_grid(data: dict[str, Any], grid: float) -> Scenario:
    data = dict(data)
    data["facility"] = {**{k: v for k, v in data.get("facility", {}).items() if k != "gpu_utilization"}}
    data["facility"]["grid_kgco2_per_kwh"] = grid
    data.pop("campaign_days", None)
    return parse_scenario(data)


def _llama31_405b(grid: float) -> Scenario:
    base = load_scenario("meta-24k-h100-roce")
    return base.model_copy(update={"facility": base.facility.model_copy(update={"grid_kgco2_per_kwh": grid})})


def _file(name: str, grid: float, **parallel: Any) -> Scenario:
    data = yaml.safe_load((DATA / name).read_text(encoding="utf-8"))
    if parallel:
        data["parallel"] = {**data["parallel"], **parallel}
    return _with_grid(data, grid)


# (family, scenario builder, published GPU-hours, board W, published t CO2)
CARDS = [
    ("llama3.1-405b", lambda: _llama31_405b(8930e3 / (30.84e6 * 0.7)), 30.84e6, 700.0, 8930.0),
    ("llama2-70b", lambda: _file("llama2-70b-rsc.yaml", 291.42e3 / (1_720_320 * 0.4)), 1_720_320, 400.0, 291.42),
    # BLOOM trained with full activation recompute (bigscience tr11-176B-ml: --checkpoint-activations)
]
BLOOM = ("bloom-176b", lambda: _file("bloom-176b.yaml", 0.057, recompute="full"), 1_082_990, 400.0, 24.69)


def _model_card(s: Scenario) -> Any:
    step = estimate_step(s)
    camp = simulate_campaign(
        s, step_time_s=step.step_time_s, tokens_per_step=step.tokens_per_step, replicas=200, seed=0
    )
    return assess(s, utilization=step.mfu, hfu=step.hfu, wall_clock_s=camp.wall_clock_s.mean)


@pytest.mark.parametrize(("family", "build", "gpu_hours", "board_w", "tco2"), CARDS, ids=[c[0] for c in CARDS])
def test_model_card_energy_and_emissions_within_15_percent(family, build, gpu_hours, board_w, tco2) -> None:  # type: ignore[no-untyped-def]
    r = _model_card(build())
    mwh = (r.model_card_energy_j or 0.0) / 3.6e9
    published_mwh = gpu_hours * board_w / 1e6
    assert abs(mwh - published_mwh) / published_mwh < 0.15, (family, mwh, published_mwh)
    assert abs((r.model_card_co2_kg or 0.0) / 1e3 - tco2) / tco2 < 0.15, (family, r.model_card_co2_kg, tco2)
    # the facility convention counts hosts, network, storage and cooling: always more
    assert (r.energy_j or 0.0) > (r.model_card_energy_j or 0.0)


def test_bloom_known_gap() -> None:
    """BLOOM's GPU energy is under-predicted by about 19 %: a known gap, guarded here, not hidden.

    The engine predicts ~54 % hardware utilisation on A100 against the published ~50 % (156 TFLOP/s),
    and the published 1.08 M GPU-hours cover the whole 117.5-day reservation (failures, restarts and
    batch ramp-up included), of which the campaign model charges ~2 %. The gap shares its cause with
    the A100 efficiency the engine over-predicts (issue 13); when that is fixed this test fails and
    BLOOM moves back into the 15 % test above.
    """
    family, build, gpu_hours, board_w, _ = BLOOM
    r = _model_card(build())
    rel = (r.model_card_energy_j or 0.0) / 3.6e9 / (gpu_hours * board_w / 1e6) - 1.0
    assert -0.25 < rel < -0.15, (family, rel)
