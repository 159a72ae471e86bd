"""Published training energy and emissions of open model families, predicted end to end.

The cases, their published figures, conventions, sources and assumptions are in
``src/wanka/data/model_cards.yaml``. For each, wanka predicts the GPU-hours (engine step time →
operations campaign with failures, restarts and checkpoints → wall clock × GPUs) and reports them in
the card's own convention (the file's header says which quantity of wanka each convention reads).
The published GPU-hours and energy are NOT inputs; each card's per-GPU power, PUE and grid factor are.
None of these runs is in the engine's calibration fit; the Llama 3.1 405B campaign's failure rates are
built from its own logbook (see ``built_from`` in the file).

One test per family. Tolerance: 15 % (issue 14). Families or runs outside it are kept, each with a
test that guards the size and sign of its gap, so that a change in the model shows up either way.

``python tests/facility/test_model_card.py`` prints the table that README.md quotes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import pytest
import yaml

from wanka.catalog import accelerator
from wanka.engine import estimate_step
from wanka.facility import assess
from wanka.ops import simulate_campaign
from wanka.spec import Scenario, load_scenario, parse_scenario

CARDS = files("wanka") / "data" / "model_cards.yaml"
TOL = 0.15


@cache
def _cases() -> dict[str, dict[str, Any]]:
    data = yaml.safe_load(CARDS.read_text(encoding="utf-8"))
    assert data["schema"] == "wanka-model-cards/1"
    return {c["id"]: c for c in data["cases"]}


def _scenario(case: dict[str, Any]) -> Scenario:
    pub = case["published"]
    sc = case["scenario"]
    base = load_scenario(sc["preset"]) if "preset" in sc else parse_scenario(sc)
    facility: dict[str, Any] = {"gpu_utilization": None}
    if pub.get("tco2") is not None:
        # the card's own grid factor: published t CO2 / published MWh (= kg/kWh)
        facility["grid_kgco2_per_kwh"] = pub["tco2"] / _published_mwh(case)
    return base.model_copy(update={"campaign_days": None, "facility": base.facility.model_copy(update=facility)})


def _published_mwh(case: dict[str, Any]) -> float:
    pub = case["published"]
    if pub.get("energy_mwh") is not None:
        return float(pub["energy_mwh"])
    return float(pub["gpu_hours"]) * float(pub["power_w"]) / 1e6


@dataclass(frozen=True)
class Prediction:
    case: str
    gpu_hours: float
    mwh: float  # in the card's convention
    tco2: float | None
    published_mwh: float
    published_tco2: float | None
    mfu: float
    hfu: float
    facility_mwh: float  # wanka's own convention: job IT energy × PUE
    model_card_mwh: float  # wanka's model-card output: GPU-hours × catalog TDP

    @property
    def energy_error(self) -> float:
        return self.mwh / self.published_mwh - 1.0

    @property
    def co2_error(self) -> float | None:
        if self.tco2 is None or not self.published_tco2:
            return None
        return self.tco2 / self.published_tco2 - 1.0


@cache
def predict(case_id: str) -> Prediction:
    case = _cases()[case_id]
    s = _scenario(case)
    step = estimate_step(s)
    camp = simulate_campaign(
        s, step_time_s=step.step_time_s, tokens_per_step=step.tokens_per_step, replicas=200, seed=0
    )
    r = assess(s, utilization=step.mfu, hfu=step.hfu, wall_clock_s=camp.wall_clock_s.mean)
    gh = r.gpu_hours or 0.0
    pub = case["published"]
    if case["convention"] == "board_power":
        mwh = gh * float(pub["power_w"]) / 1e6
    elif case["convention"] == "measured_gpu":
        mwh = (r.accelerator_energy_j or 0.0) / 3.6e9
    else:  # pragma: no cover - the schema allows only the two
        raise ValueError(case["convention"])
    tco2 = mwh * r.grid_kgco2_per_kwh if pub.get("tco2") is not None else None
    return Prediction(
        case=case_id,
        gpu_hours=gh,
        mwh=mwh,
        tco2=tco2,
        published_mwh=_published_mwh(case),
        published_tco2=pub.get("tco2"),
        mfu=step.mfu,
        hfu=step.hfu,
        facility_mwh=(r.energy_j or 0.0) / 3.6e9,
        model_card_mwh=(r.model_card_energy_j or 0.0) / 3.6e9,
    )


def _family(name: str) -> list[str]:
    return [cid for cid, c in _cases().items() if c["family"] == name]


# ---------------------------------------------------------------- the data file itself


def test_every_case_names_its_sources_convention_and_role() -> None:
    for cid, c in _cases().items():
        assert c["sources"], cid
        assert c["convention"] in ("board_power", "measured_gpu"), cid
        assert c["role"] in ("check", "consistency"), cid
        assert c["built_from"], cid
        pub = c["published"]
        if c["convention"] == "board_power":
            assert pub["gpu_hours"] > 0 and pub["power_w"] > 0, cid
            if pub.get("energy_mwh") is not None:  # a stated energy must be GPU-hours × power
                assert pub["energy_mwh"] == pytest.approx(pub["gpu_hours"] * pub["power_w"] / 1e6, rel=1e-3), cid


def test_board_power_convention_is_wankas_model_card_output_when_power_is_the_tdp() -> None:
    """Consistency: for cards that state the board limit, our figure IS FacilityResult.model_card_energy_j."""
    for cid, c in _cases().items():
        if c["convention"] != "board_power":
            continue
        p = predict(cid)
        tdp = accelerator(_scenario(c).cluster.accelerator).tdp_w
        if float(c["published"]["power_w"]) == tdp:
            assert p.mwh == pytest.approx(p.model_card_mwh, rel=1e-9), cid
        # the facility convention counts hosts, network, storage and cooling: always more
        assert p.facility_mwh > p.model_card_mwh, cid


# ---------------------------------------------------------------- one test per family


def test_meta_llama_405b_and_70b_within_15_percent() -> None:
    for cid in ("llama3.1-405b", "llama2-70b"):
        p = predict(cid)
        assert abs(p.energy_error) < TOL, (cid, p)
        assert p.co2_error is not None and abs(p.co2_error) < TOL, (cid, p)


def test_meta_llama2_7b_known_gap() -> None:
    """Llama 2 7B: under-predicted by ~23 % (job size and split not published; dp 512 assumed)."""
    p = predict("llama2-7b")
    assert _family("Meta Llama") == ["llama3.1-405b", "llama2-70b", "llama2-7b"]
    assert -0.30 < p.energy_error < -0.15, p


def test_bigscience_bloom_known_gap() -> None:
    """BLOOM's GPU energy is under-predicted by about 19 %: a known gap, guarded here, not hidden.

    The engine predicts ~54 % hardware utilisation on A100 against the published ~50 % (156 TFLOP/s),
    and the published 1.08 M GPU-hours cover the whole 117.5-day reservation (failures, restarts and
    batch ramp-up included), of which the campaign model charges ~2 %. The gap shares its cause with
    the A100 efficiency the engine over-predicts (issue 13); when that is fixed this test fails and
    BLOOM moves into the 15 % band.
    """
    p = predict("bloom-176b")
    assert -0.25 < p.energy_error < -0.15, p
    assert p.co2_error == pytest.approx(p.energy_error)  # one grid factor: CO2 follows energy


def test_bigcode_starcoder_known_gap() -> None:
    """StarCoderBase is under-predicted by ~30 %: the engine runs the A100 job at ~47 % MFU where the
    published 320,256 GPU-hours imply ~26 % (6·N·tokens model FLOPs) over the whole campaign. Same
    direction and cause as BLOOM (A100 throughput over-predicted, campaign overheads under-charged)."""
    p = predict("starcoderbase-15.5b")
    assert -0.40 < p.energy_error < -0.20, p
    assert p.co2_error == pytest.approx(p.energy_error)


def test_ai2_olmo2_13b_within_15_percent_olmo2_7b_known_gap() -> None:
    """OLMo 2 (measured GPU energy): the 13B comes within 15 %, the 7B is under-predicted by ~45 %.

    Both depend on a job size that is not in the sources read; the largest job the published batch
    allows without gradient accumulation is assumed (13B: 1,024 GPUs, 7B: 512). The 13B agreement is
    conditional on it: on 512 GPUs the engine runs the 13B at ~57 % MFU instead of ~36 % and comes out
    about -31 %. The 7B miss is not: on 512 or 256 GPUs the engine runs its ZeRO-3 job at ~55 % MFU,
    which the 131 MWh of measured GPU energy does not support.
    """
    assert _family("AI2 OLMo") == ["olmo2-13b", "olmo2-7b"]
    p13, p7 = predict("olmo2-13b"), predict("olmo2-7b")
    assert abs(p13.energy_error) < TOL, p13
    assert -0.55 < p7.energy_error < -0.35, p7


# ---------------------------------------------------------------- the README table


def table() -> str:
    rows = [
        "| family | run | published (convention) | wanka | error |",
        "|---|---|---|---|---|",
    ]
    for cid, c in _cases().items():
        p = predict(cid)
        pub = c["published"]
        if c["convention"] == "board_power":
            conv = f"{pub['gpu_hours'] / 1e6:.3g} M GPU-h × {pub['power_w']:g} W"
            got = f"{p.gpu_hours / 1e6:.3g} M GPU-h, {p.mwh:,.0f} MWh, {p.tco2:,.0f} t"
            published = f"{p.published_mwh:,.0f} MWh, {pub['tco2']:,.5g} t ({conv})"
        else:
            published = f"{p.published_mwh:,.0f} MWh measured GPU energy (PUE {pub['pue']:g} on top)"
            got = f"{p.gpu_hours / 1e6:.3g} M GPU-h, {p.mwh:,.0f} MWh GPU energy"
        rows.append(f"| {c['family']} | {cid} | {published} | {got} (MFU {p.mfu:.0%}) | {p.energy_error:+.0%} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
