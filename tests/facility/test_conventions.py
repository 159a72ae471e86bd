"""Published conventions, price/currency/grid inputs, power that follows the silicon, storage share."""

from __future__ import annotations

import json

import pytest

from wanka.catalog import accelerator
from wanka.cli import main
from wanka.facility import assess, facility_assumptions
from wanka.spec import parse_scenario


def _s(**facility: object):  # type: ignore[no-untyped-def]
    return parse_scenario({"cluster": {"accelerator": "H100", "nodes": 64}, "facility": facility, "campaign_days": 10})


def test_model_card_convention_is_gpu_hours_times_board_power_times_grid() -> None:
    r = assess(_s(grid_kgco2_per_kwh=0.5), utilization=0.4)
    gh = 512 * 10 * 24
    assert r.gpu_hours == pytest.approx(gh)
    assert r.model_card_energy_j == pytest.approx(gh * 700.0 * 3600.0)
    assert r.model_card_co2_kg == pytest.approx(gh * 0.7 * 0.5)
    # the site draws more: hosts, network, storage, cooling
    assert (r.energy_j or 0) > 1.4 * (r.model_card_energy_j or 0)


def test_currency_defaults_are_printed_and_cny_uses_the_chinese_grid() -> None:
    usd = assess(_s(), utilization=0.4)
    assert (usd.currency, usd.price_per_kwh, usd.grid_kgco2_per_kwh) == ("USD", 0.08, 0.4)
    assert any(a.startswith("electricity 0.08 USD/kWh") for a in usd.assumptions)
    cny = assess(_s(currency="CNY"), utilization=0.4)
    assert (cny.currency, cny.grid_kgco2_per_kwh) == ("CNY", 0.5703)
    assert cny.energy_cost == pytest.approx((cny.energy_j or 0) / 3.6e6 * cny.price_per_kwh)
    assert any("CNY/kWh" in a for a in facility_assumptions(_s(currency="CNY")))
    given = assess(_s(currency="CNY", electricity_price_per_kwh=0.4, grid_kgco2_per_kwh=0.1), utilization=0.4)
    assert (given.price_per_kwh, given.grid_kgco2_per_kwh) == (0.4, 0.1)
    assert not any(a.startswith(("electricity", "grid")) for a in given.assumptions)


def test_training_draws_near_the_power_limit_and_idle_gpus_idle() -> None:
    h100 = accelerator("H100")
    r = assess(_s(), utilization=0.35, hfu=0.45)
    assert r.node.accelerators_w == pytest.approx(8 * h100.tdp_w)  # at 45 % HFU: the 700 W limit
    job = parse_scenario({"cluster": {"accelerator": "H100", "nodes": 64}, "job_gpus": 256, "campaign_days": 1})
    half = assess(job, utilization=0.4)
    assert half.accelerators_w == pytest.approx(256 * h100.tdp_w + 256 * h100.idle_w)
    # the synchronous swing: the job's nodes between training and idle draw
    assert half.power_swing_w == pytest.approx(32 * (half.node.total_w - assess(job, utilization=0.0).node.total_w))


def test_storage_power_from_provisioned_servers_and_share() -> None:
    base = {"accelerator": "H100", "nodes": 1024}
    default = assess(parse_scenario({"cluster": base}), utilization=0.4)
    assert default.storage_w == pytest.approx(64 * 2000.0)  # ceil(1,024 / 16) appliances at 2 kW
    assert any(a.startswith("storage servers: not given; 64") for a in default.assumptions)
    shared = assess(parse_scenario({"cluster": {**base, "storage": {"servers": 1000, "share": 0.25}}}), utilization=0.4)
    assert shared.storage_w == pytest.approx(250 * 2000.0)


def test_cli_convention(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["facility", "llama3-405b-16k-h100-54d", "--convention", "model-card"]) == 0
    out = capsys.readouterr().out
    assert out.index("model-card convention") < out.index("facility convention")
    assert "grid 0.4 kg CO2/kWh" in out and "USD/kWh" in out and "synchronous swing" in out
    assert main(["facility", "llama3-405b-16k-h100-54d", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["currency"] == "USD" and d["model_card_energy_j"] > 0
    assert main(["facility", "llama3-405b-16k-h100-54d", "--convention", "paper"]) == 2
    assert "--convention" in capsys.readouterr().err
