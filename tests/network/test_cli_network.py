"""``wanka fabric`` and ``wanka collective`` through the CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wanka.cli import main


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:  # type: ignore[type-arg]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_fabric_presets_show_the_difference(capsys: pytest.CaptureFixture[str]) -> None:
    meta = _json(capsys, ["fabric", "meta-24k-h100-roce", "--json"])
    trad = _json(capsys, ["fabric", "traditional-512-a100", "--json"])
    for d in (meta, trad):
        assert {"switches", "optics", "bisection_bytes_per_s", "max_accelerators_for_tiers"} <= d.keys()
        assert d["switches"]["total"] == sum(v for k, v in d["switches"].items() if k != "total")
    assert meta["tiers"] == 3 and trad["tiers"] == 2 and "core" in meta["switches"]
    assert meta["switches"]["total"] > trad["switches"]["total"]
    assert meta["optics"]["total"] > trad["optics"]["total"]
    assert meta["network_power_w"] > trad["network_power_w"]
    assert main(["fabric", "traditional-512-a100"]) == 0
    out = capsys.readouterr().out
    assert "2-tier" in out and "QM8700" in out and "bisection" in out


def test_fabric_from_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(
        "cluster:\n  accelerator: H100-SXM5-80GB\n  nodes: 512\n  fabric:\n    tiers: 3\n    switch: QM9700\n",
        encoding="utf-8",
    )
    d = _json(capsys, ["fabric", str(f), "--json"])
    assert d["switches"]["leaf"] == 128 and d["max_accelerators_for_tiers"]["2"] == 2048
    f.write_text(
        "cluster:\n  accelerator: H100-SXM5-80GB\n  nodes: 512\n  fabric:\n    tiers: 2\n    switch: QM9700\n",
        encoding="utf-8",
    )
    assert main(["fabric", str(f)]) == 2
    assert "fabric.tiers" in capsys.readouterr().err


def test_collective_default_cluster_and_sweep(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, ["collective", "--op", "all_reduce", "--bytes", "8GiB", "--gpus", "8", "--no-nvls", "--json"])
    assert d["default_cluster"] and d["ranks"] == 8
    assert 300e9 < d["busbw_bytes_per_s"] < 400e9  # DGX H100 NVLink ring ~370 GB/s (nccl-tests#212)
    d = _json(capsys, ["collective", "--op", "all_gather", "--gpus", "64", "--sweep", "--json"])
    assert len(d["sweep"]["rows"]) == 31
    assert main(["collective", "--op", "all_reduce", "--gpus", "16"]) == 0
    assert "DGX-H100-like" in capsys.readouterr().out


def test_collective_flow_reports_both_routings(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(
        capsys,
        [
            "collective",
            "--op",
            "all_reduce",
            "--bytes",
            "256MiB",
            "--gpus",
            "1024",
            "--flow",
            "--placement",
            "random",
            "--json",
        ],
    )
    f = d["flow"]
    assert {"ecmp", "adaptive"} <= f.keys()
    assert f["adaptive"]["slowdown"] <= f["ecmp"]["slowdown"] * 1.02
    assert f["ecmp"]["time_with_contention_s"] >= d["time_s"] * (1 - 1e-9)
    d = _json(capsys, ["collective", "--op", "all_to_all", "--gpus", "64", "--flow", "--routing", "ecmp", "--json"])
    assert set(d["flow"]) >= {"ecmp"} and "adaptive" not in d["flow"]
    assert main(["collective", "--op", "all_to_all", "--gpus", "64", "--flow"]) == 0
    assert "hottest" in capsys.readouterr().out


def test_collective_flow_inside_one_domain_says_no_fabric_traffic(capsys: pytest.CaptureFixture[str]) -> None:
    # four ranks of one 8-GPU node: nothing crosses the fabric, so no table of zeros and empty hot links
    assert main(["collective", "--op", "all_to_all", "--gpus", "4", "--flow"]) == 0
    out = capsys.readouterr().out
    assert "no fabric traffic" in out and "hottest" not in out


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["collective", "--op", "allreduce"], "--op"),
        (["collective", "--bytes", "lots"], "--bytes"),
        (["collective", "--routing", "spray"], "--routing"),
        (["collective", "--gpus", "0"], "--gpus"),
        (["collective", "--algo", "bruck"], "--algo"),
        (["collective", "--gpus", "64", "--no-sharp", "--algo", "CollNetChain"], "--algo"),  # needs SHARP
        (["collective", "--gpus", "64", "--no-nvls", "--algo", "nvls_tree"], "--algo"),  # needs NVLS
        (["collective", "--gpus", "8", "--algo", "tree"], "--algo"),  # one domain: no tree
        (["collective", "--gpus", "64", "--algo", "nvls"], "--algo"),  # NVLS alone stays in one domain
        (["collective", "--gpus", "64", "--op", "all_gather", "--algo", "tree"], "--algo"),
    ],
)
def test_collective_errors(argv: list[str], field: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert field in capsys.readouterr().err


def test_collective_bytes_use_nccl_tests_units_and_columns(capsys: pytest.CaptureFixture[str]) -> None:
    g = _json(capsys, ["collective", "--bytes", "1G", "--gpus", "16", "--json"])
    assert g["bytes"] == 2**30  # nccl-tests -b 1G is 2^30 bytes
    assert _json(capsys, ["collective", "--bytes", "1GB", "--gpus", "16", "--json"])["bytes"] == 1e9
    row = g["nccl_tests"][0]
    assert (row["size_bytes"], row["count"], row["type"], row["redop"], row["root"]) == (
        2**30,
        2**28,
        "float",
        "sum",
        -1,
    )
    for side in ("out_of_place", "in_place"):
        assert set(row[side]) == {"time_us", "algbw_gbs", "busbw_gbs"}
        assert row[side]["busbw_gbs"] == pytest.approx(g["busbw_bytes_per_s"] / 1e9)
    ag = _json(capsys, ["collective", "--op", "all_gather", "--bytes", "1G", "--gpus", "16", "--json"])
    assert ag["nccl_tests"][0]["count"] == 2**28 // 16 and ag["nccl_tests"][0]["redop"] == "none"
    assert main(["collective", "--bytes", "1Q"]) == 2
    assert "--bytes" in capsys.readouterr().err


def test_sharp_and_nvls_toggle_what_they_say(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["collective", "--bytes", "8G", "--json"]
    dflt = _json(capsys, [*base, "--gpus", "8"])  # the DGX-H100-like default runs NVLS, as NCCL does there
    assert dflt["algorithm"] == "nvls" and dflt["busbw_bytes_per_s"] / 1e9 == pytest.approx(480, rel=0.05)
    base.append("--no-nvls")
    one_node = _json(capsys, [*base, "--gpus", "8", "--sharp"])  # fabric SHARP cannot act inside one node
    plain = _json(capsys, [*base, "--gpus", "8", "--no-sharp"])
    assert one_node["time_s"] == plain["time_s"] and one_node["algorithm"] == "ring"
    nv = _json(capsys, [*base[:-1], "--gpus", "8", "--nvls"])
    assert nv["algorithm"] == "nvls" and nv["nvls"] and not nv["in_network_reduction"]
    many = _json(capsys, [*base[:-1], "--gpus", "128", "--sharp", "--nvls"])
    assert many["algorithm"] == "collnet" and many["in_network_reduction"] and many["nvls"]
    assert main(["collective", "--scenario", "meta-24k-h100-roce", "--gpus", "64", "--sharp"]) == 2
    assert "InfiniBand" in capsys.readouterr().err  # fabric SHARP on a RoCE fabric is refused, not ignored


def _nccl_log(
    path: Path,
    ranks: int,
    efficiency: float,
    sizes: tuple[int, ...],
    algorithm: str = "auto",
    *,
    scenario: str | None = None,
    per_host: int = 8,
    nccl_version: str | None = None,
) -> Path:
    """An all_reduce_perf log of ``ranks`` ranks (``per_host`` a host) on the DGX-H100-like default cluster
    (or ``scenario``'s) whose NICs reach ``efficiency`` of line rate, synthesised from the model with
    ``algorithm`` and NCCL release ``nccl_version``, which the log then prints as NCCL does."""
    from dataclasses import replace

    from wanka.cli.cmd_collective import _default_cluster
    from wanka.network.collectives import collective_time
    from wanka.network.groups import comm_group
    from wanka.spec import load_scenario

    cluster = _default_cluster(ranks) if scenario is None else load_scenario(scenario).cluster
    g = replace(comm_group(cluster, ranks, 1), out_efficiency=efficiency, nccl_version=nccl_version)
    lines = ["# Collective test starting: all_reduce_perf", "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592"]
    lines += [
        f"#  Rank {r:2d} Group  0 Pid {100 + r} on node{r // per_host} device {r % per_host} [0x1b] NVIDIA GPU"
        for r in range(ranks)
    ]
    if nccl_version is not None:
        lines.append(f"NCCL version {nccl_version}+cuda12.8")
    lines.append(
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong"
    )
    for s in sizes:
        r = collective_time("all_reduce", float(s), g, algorithm)
        t, a, b = float(r.time_s) * 1e6, float(r.algbw) / 1e9, float(r.busbw) / 1e9
        lines.append(
            f"  {s:>12d} {s // 4:>12d}     float     sum      -1 {t:8.1f} {a:7.2f} {b:7.2f}      0"
            f" {t:8.1f} {a:7.2f} {b:7.2f}      0"
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def test_calibrate_recovers_a_known_nic_efficiency(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from wanka.spec import load_scenario

    # an nccl-tests log of 4 nodes whose NICs reach 80% of line rate (synthesised from the model)
    log = _nccl_log(tmp_path / "all_reduce_perf.log", 32, 0.80, (2**26, 2**28, 2**30, 2**33))
    d = _json(capsys, ["collective", "--calibrate", str(log), "--json"])
    assert d["ranks"] == 32 and d["hosts"] == 4 and d["field"] == "cluster.fabric.link_efficiency"
    assert d["value"] == pytest.approx(0.80, abs=0.005) and d["mape_after"] < 0.01 < d["mape_before"]
    sc = load_scenario(d["overlay"])  # the overlay is a scenario: the rest of the twin uses the measured value
    assert sc.cluster.fabric.link_efficiency == pytest.approx(0.80, abs=0.005)
    assert main(["collective", "--calibrate", str(log)]) == 2  # never overwrites the overlay it wrote
    assert "exists" in capsys.readouterr().err


def test_calibrate_a_log_of_a_forced_algorithm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # NCCL_ALGO=RING on 2 NVLS nodes whose NICs reach 75% of line rate: NCCL's own choice there is the NVLS
    # tree, so only a fit told the log's algorithm (--algo ring) recovers the NIC's share
    log = _nccl_log(tmp_path / "ring.log", 16, 0.75, (2**28, 2**30, 2**33), "ring")
    ring = _json(
        capsys, ["collective", "--calibrate", str(log), "--algo", "Ring", "--out", str(tmp_path / "a.yaml"), "--json"]
    )
    auto = _json(capsys, ["collective", "--calibrate", str(log), "--out", str(tmp_path / "b.yaml"), "--json"])
    assert ring["value"] == pytest.approx(0.75, abs=0.005) and ring["mape_after"] < 0.01
    assert abs(auto["value"] - 0.75) > 0.05  # fitted through the NVLS tree, the share comes out wrong
    assert main(["collective", "--calibrate", str(log), "--algo", "pat", "--out", str(tmp_path / "c.yaml")]) == 2


def test_collective_flow_at_131k_gpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, ["collective", "--op", "all_to_all", "--bytes", "256M", "--gpus", "131072", "--flow", "--json"])
    assert d["flow"]["traffic_level"] == "class" and d["flow"]["ecmp"]["slowdown"] >= 1.0
    # a fabric that cannot be built is an error naming the limit and the fix
    sc = tmp_path / "big.yaml"
    sc.write_text("cluster: {accelerator: H100, nodes: 16384, fabric: {switch: QM9700}}\n")
    assert main(["collective", "--scenario", str(sc), "--flow"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "65,536" in err and "larger switch" in err and "Q3400" in err


def test_algo_forces_an_algorithm_by_wanka_or_nccl_name(capsys: pytest.CaptureFixture[str]) -> None:
    # NCCL_ALGO=COLLNETCHAIN on 8 H100 nodes with SHARP (coreweave/nccl-tests, 2023): the forced chain is
    # what runs, whatever NCCL's tuner would take (here NVLS + SHARP, faster), in the table and the sweep
    base = ["collective", "--gpus", "64", "--bytes", "8G", "--sharp", "--json"]
    auto = _json(capsys, base)
    chain = _json(capsys, [*base, "--algo", "CollNetChain"])
    assert auto["algorithm"] == "collnet" and chain["algorithm"] == "collnet_chain"
    assert chain["time_s"] > auto["time_s"]
    assert _json(capsys, [*base, "--algo", "collnet_chain"])["time_s"] == chain["time_s"]
    sweep = _json(capsys, [*base, "--algo", "collnetchain", "--sweep", "--min-bytes", "512M", "--max-bytes", "8G"])
    assert {r["algorithm"] for r in sweep["sweep"]["rows"]} == {"collnet_chain"}
    ring = _json(capsys, [*base, "--algo", "Ring"])
    assert ring["algorithm"] == "ring" and ring["time_s"] != chain["time_s"]


def test_calibrate_fits_through_the_nccl_release_the_log_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # NCCL_ALGO=RING across two GB200 NVL72 racks whose NICs reach 80% of line rate, run on NCCL 2.26.2: its
    # graph search drives 15 NICs a rack (2.27.3 and later: 16). The log's "NCCL version" line makes the fit
    # run through 15 and recover 0.80; the same table without it is fitted through the newest release's 16
    sizes = (2**28, 2**30, 2**33)
    with_version = _nccl_log(
        tmp_path / "v.log", 144, 0.80, sizes, "ring", scenario="gb200-nvl72-576", per_host=4, nccl_version="2.26.2"
    )
    without = tmp_path / "n.log"
    without.write_text("".join(ln for ln in with_version.read_text().splitlines(True) if "NCCL version" not in ln))
    base = ["collective", "--scenario", "gb200-nvl72-576", "--algo", "ring", "--json", "--calibrate"]
    got = _json(capsys, [*base, str(with_version), "--out", str(tmp_path / "a.yaml")])
    newest = _json(capsys, [*base, str(without), "--out", str(tmp_path / "b.yaml")])
    assert got["nccl_version"] == "2.26.2" and newest["nccl_version"] is None
    assert got["value"] == pytest.approx(0.80, abs=0.005) and got["mape_after"] < 0.01
    assert newest["value"] == pytest.approx(0.80 * 15 / 16, abs=0.01)  # 16 NICs carry what 15 did
    assert "NCCL 2.26.2" in (tmp_path / "a.yaml").read_text()
