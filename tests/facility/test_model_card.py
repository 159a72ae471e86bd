"""Published training energy and emissions of open model families, predicted end to end.

The cases, their published figures, conventions, sources and assumptions are in
``src/wanka/data/model_cards.yaml``. For each, wanka predicts the GPU-hours (engine step time →
operations campaign with failures, restarts and checkpoints → wall clock × GPUs) and reports them in
the card's own convention (the file's header says which quantity of wanka each convention reads).
The published GPU-hours and energy are NOT inputs; each card's per-GPU power, PUE and grid factor are.
None of these runs is in the engine's calibration fit; the Llama 3.1 405B campaign's failure rates are
built from its own logbook (see ``built_from`` in the file).

One test per family. Tolerance: 15 % (issue 14). Families or runs outside it are kept, each with a
test that guards the size and sign of its gap and where it lies (``engine_share``: the steady-state
engine's GPU-hours against the card's; ``campaign_share``: what failures, restarts and checkpoints add),
so that a change in the model shows up either way. Each case's ``gap_note`` says what the card states.

``python tests/facility/test_model_card.py`` prints the table that README.md quotes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
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
    steady_gpu_hours: float  # the engine alone: tokens / steady-state throughput (no failures, no restarts)
    step_time_s: float
    published_gpu_hours: float | None  # board_power: the card's; measured_gpu: None
    gpu_hours_floor: float  # the fewest GPU-hours the published figure allows (energy / TDP for measured_gpu)

    @property
    def energy_error(self) -> float:
        return self.mwh / self.published_mwh - 1.0

    @property
    def engine_share(self) -> float:
        """The steady-state engine's GPU-hours against the card's (its lower bound for measured energy), - 1."""
        return self.steady_gpu_hours / (self.published_gpu_hours or self.gpu_hours_floor) - 1.0

    @property
    def campaign_share(self) -> float:
        """What the campaign (failures, restarts, checkpoints) adds to the engine's GPU-hours."""
        return self.gpu_hours / self.steady_gpu_hours - 1.0

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
    tdp = accelerator(s.cluster.accelerator).tdp_w
    published_gh = float(pub["gpu_hours"]) if pub.get("gpu_hours") is not None else None
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
        steady_gpu_hours=step.time_to_train_s * step.gpus / 3600.0,
        step_time_s=step.step_time_s,
        published_gpu_hours=published_gh,
        gpu_hours_floor=published_gh if published_gh is not None else _published_mwh(case) * 1e6 / tdp,
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


def test_meta_llama_405b_70b_and_65b_within_15_percent() -> None:
    for cid in ("llama3.1-405b", "llama2-70b", "llama1-65b"):
        p = predict(cid)
        assert abs(p.energy_error) < TOL, (cid, p)
        assert p.co2_error is not None and abs(p.co2_error) < TOL, (cid, p)


def test_meta_llama2_7b_known_gap_is_engine_throughput() -> None:
    """Llama 2 7B: under-predicted by ~23 %, and the gap is the engine's throughput, not downtime.

    Meta's A100-era GPU-hours are tokens / measured throughput (``gap_note`` in the file: Llama 1 65B's
    380 tokens/s/GPU reproduces its card's GPU-hours within 0.1 %), so the card implies ~3,000 tokens/s/GPU
    where the engine's steady step gives ~4,000 (job size and split not published; dp 512 assumed). The
    campaign adds only ~2 %. When the engine's throughput for this job moves, this test fails.
    """
    p = predict("llama2-7b")
    assert _family("Meta Llama") == ["llama3.1-405b", "llama2-70b", "llama2-7b", "llama1-65b"]
    assert -0.30 < p.energy_error < -0.15, p
    assert p.engine_share < -0.18, p  # the steady-state engine alone is already more than 18 % short
    assert 0.0 < p.campaign_share < 0.05, p


def test_bigscience_bloom_within_15_percent() -> None:
    """BLOOM 176B (Jean Zay, 384 A100): energy and CO2 within 15 % of Luccioni et al.'s 433 MWh / 24.7 t.

    The split is the training script's: tp 4 · pp 12 · dp 8 with full recompute and no sequence
    parallelism (the 2022 Megatron-DeepSpeed had none; reading it as sp=true was a misread that made the
    engine 9 % too fast). What remains is the campaign: the published GPU-hours are 384 GPUs × all 117.5
    days from launch to the end (ramp-up, evals, hangs, debugging restarts, a slow GPU, the chronicle
    lists them), of which a generic failure model charges ~2 %.
    """
    p = predict("bloom-176b")
    assert abs(p.energy_error) < TOL, p
    assert p.co2_error == pytest.approx(p.energy_error)  # one grid factor: CO2 follows energy
    assert p.engine_share > -0.15, p
    assert p.campaign_share < 0.05, p  # the campaign overheads the chronicle lists are not all modelled


def test_engine_alone_against_the_measured_steady_throughput() -> None:
    """Check (engine only, no campaign): runs whose papers or logs state their steady-state speed.

    BLOOM: the run log's 105 s per 2,048-sequence iteration at 149-150 TFLOPs; Llama 1 65B: 380
    tokens/s/GPU on 2,048 A100. Within 10 %.
    """
    checked = 0
    for cid, c in _cases().items():
        pub = c["published"]
        p = predict(cid)
        if pub.get("measured_step_s") is not None:
            assert p.step_time_s == pytest.approx(float(pub["measured_step_s"]), rel=0.10), (cid, p)
            checked += 1
        if pub.get("measured_tokens_per_s_per_gpu") is not None:
            tps = float(c["scenario"]["training"]["tokens"]) / (p.steady_gpu_hours * 3600.0)
            assert tps == pytest.approx(float(pub["measured_tokens_per_s_per_gpu"]), rel=0.10), (cid, tps)
            checked += 1
    assert checked == 2


def test_bigcode_starcoder_known_gap_is_engine_throughput() -> None:
    """StarCoderBase is under-predicted by ~25 %: the card's 320,256 GPU-hours imply ~910 tokens/s/GPU
    over the whole run where the engine's steady step gives ~1,235 on the AWS p4de cluster (50 Gb/s EFA
    per GPU, as the card's us-west-2 AWS grid factor places it). The campaign adds ~2 %; the paper gives
    no throughput, so steady-state speed and downtime cannot be told apart from the card."""
    p = predict("starcoderbase-15.5b")
    assert -0.35 < p.energy_error < -0.15, p
    assert p.co2_error == pytest.approx(p.energy_error)
    assert p.engine_share < -0.15, p
    assert 0.0 < p.campaign_share < 0.05, p


def test_ai2_olmo2_13b_within_20_percent_olmo2_7b_known_gap() -> None:
    """OLMo 2 (measured GPU energy): the 13B comes within 20 % (+15.0 %; its ZeRO-3 gathers over 1,024
    ranks are latency-bound, so it moves with the fitted scale-out latency: +15.6 % and +13.9 % after
    earlier refits), the 7B is under-predicted by ~45 %.

    Both depend on a job size that is not in the sources read; the largest job the published batch
    allows without gradient accumulation is assumed (13B: 1,024 GPUs, 7B: 512). The 13B agreement is
    conditional on it: on 512 GPUs the engine runs the 13B at ~57 % MFU instead of ~36 % and comes out
    about -31 %. The 7B miss is in the GPU-hours, not in the power curve: 131 MWh needs at least
    131 MWh / 700 W = 187,000 H100-hours, and wanka predicts ~117,000 (ZeRO-3 at ~48 % MFU with OLMo's
    FlashAttention-2 kernel; ~101,000 at ~55 % with the cuDNN rate the catch-all software rule gave it).
    """
    assert _family("AI2 OLMo") == ["olmo2-13b", "olmo2-7b"]
    p13, p7 = predict("olmo2-13b"), predict("olmo2-7b")
    assert abs(p13.energy_error) < 0.20, p13
    assert -0.55 < p7.energy_error < -0.35, p7
    assert p7.gpu_hours < 0.7 * p7.gpu_hours_floor, p7  # even at the power limit, too few GPU-hours
    assert p13.gpu_hours > p13.gpu_hours_floor, p13


def test_ibm_granite_2b_and_moe_within_15_percent_8b_known_gap() -> None:
    """IBM Granite 3.0 (Blue Vela H100; GPU-hours × 700 W × PUE 1.3, × 0.39 kg/kWh): the report states
    each model's job size and split, so only micro batch, recompute and the MoE job sizes' order are
    assumed. Both MoE models come within 15 % and the 2B within 20 % (+15 %); the 8B (tp 4 · pp 4 on 768 GPUs) is
    under-predicted by ~20 %: its GPU-hours imply ~4,000 tokens/s/GPU (MFU ~23 %) where the engine's
    steady step gives ~5,700, and the campaign adds ~2 %."""
    assert _family("IBM Granite") == ["granite3.0-8b", "granite3.0-2b", "granite3.0-1b-a400m", "granite3.0-3b-a800m"]
    for cid in ("granite3.0-1b-a400m", "granite3.0-3b-a800m"):
        p = predict(cid)
        assert abs(p.energy_error) < TOL, (cid, p)
        assert p.co2_error is not None and abs(p.co2_error) < TOL, (cid, p)
    # the 2B: +14.5 % until the refit after FP8 parameters and the all-to-all CTA copies raised the fitted
    # per-layer launch cost 7 % (a 2B model's short layers feel it most); +16 % since, stated in the README
    p2 = predict("granite3.0-2b")
    assert 0.0 < p2.energy_error < 0.20, p2
    assert p2.co2_error is not None and abs(p2.co2_error) < 0.20, p2
    p8 = predict("granite3.0-8b")
    assert -0.35 < p8.energy_error < -0.15, p8
    assert p8.engine_share < -0.15, p8
    assert 0.0 < p8.campaign_share < 0.05, p8


def test_issue14_target_three_families_within_15_percent() -> None:
    """Issue 14's target: at least three open model families with a published run reproduced within 15 %
    (energy, and CO2 where the card gives it) in the card's convention."""
    within = {
        c["family"]
        for cid, c in _cases().items()
        if abs(predict(cid).energy_error) < TOL and abs(predict(cid).co2_error or 0.0) < TOL
    }
    assert len(within) >= 3, within


# ---------------------------------------------------------------- the README table


def table() -> str:
    rows = [
        "| family | run | published (convention) | wanka | error | engine alone | campaign adds |",
        "|---|---|---|---|---|---|---|",
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
        rows.append(
            f"| {c['family']} | {cid} | {published} | {got} (MFU {p.mfu:.0%}) | {p.energy_error:+.0%} "
            f"| {p.engine_share:+.0%} | {p.campaign_share:+.0%} |"
        )
    return "\n".join(rows)


def test_readme_quotes_the_table_the_code_computes() -> None:
    """A consistency check of the documentation: README.md's energy table is this table, row for row,
    so a change of the engine or of the campaign model that moves a run shows up there."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    for row in table().splitlines():
        assert row in readme, row


if __name__ == "__main__":
    print(table())
