"""The calibration is data: loaded from a file with provenance, frozen, carried in the engine context."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace
from pathlib import Path

import pytest

from wanka.calibration import Calibration, calibration_info, default_calibration, load_calibration
from wanka.engine import estimate_step, make_context
from wanka.errors import SpecError
from wanka.spec import load_scenario


def test_every_constant_has_provenance_and_source() -> None:
    info = calibration_info()
    assert set(info) == set(Calibration.names())
    for name, i in info.items():
        assert i.provenance in ("datasheet", "benchmark", "fit"), name
        assert len(i.source) > 20, name
        if i.provenance == "fit":
            assert i.bounds is not None, f"fitted constant {name} needs the fit's bounds"


def test_calibration_is_frozen() -> None:
    cal = default_calibration()
    with pytest.raises(FrozenInstanceError):
        cal.attn_efficiency = 0.1  # type: ignore[misc]


def test_two_calibrations_run_side_by_side() -> None:
    sc = load_scenario("meta-24k-h100-roce")
    base = default_calibration()
    slow = replace(base, attn_efficiency=base.attn_efficiency / 2, gemm_eff_max=base.gemm_eff_max / 2)
    r_base = estimate_step(sc)
    ctx_slow = make_context(sc, cal=slow)
    assert ctx_slow.cal is slow
    r_slow = estimate_step(sc, cal=slow)
    assert r_slow.step_time_s > 1.3 * r_base.step_time_s
    # the first context is untouched by the second
    assert estimate_step(sc).step_time_s == pytest.approx(r_base.step_time_s, rel=1e-12)


def test_network_constants_flow_from_the_calibration() -> None:
    from wanka.network import CommGroup, collective_time

    g = CommGroup(size=16, per_domain=1, scale_up_bw=450e9, scale_out_bw=50e9)  # every hop on the NIC
    slow = replace(default_calibration(), scale_out_efficiency=0.46)
    t = float(collective_time("all_reduce", 2**30, g).time_s)
    t_slow = float(collective_time("all_reduce", 2**30, replace(g, calibration=slow)).time_s)
    assert t_slow > 1.5 * t


def _write(tmp: Path, text: str) -> Path:
    p = tmp / "cal.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_load_roundtrip_and_bad_files(tmp_path: Path) -> None:
    shipped = Path(__file__).parents[2] / "src/wanka/data/calibration.yaml"
    assert load_calibration(shipped) == default_calibration()
    text = shipped.read_text(encoding="utf-8")
    with pytest.raises(SpecError, match="missing constants"):
        load_calibration(_write(tmp_path, text.replace("  attn_efficiency:", "  attn_eff:")))
    with pytest.raises(SpecError, match="provenance"):
        load_calibration(_write(tmp_path, text.replace("provenance: fit", "provenance: guess", 1)))
    with pytest.raises(SpecError, match="outside its bounds"):
        bad = text.replace("  attn_efficiency:\n    value: ", "  attn_efficiency:\n    value: 9 #", 1)
        load_calibration(_write(tmp_path, bad))
