"""NICs NCCL's graph search gives channels to across scale-up domains, by NCCL release.

NCCL (src/graph/search.cc ``ncclTopoCompute``) adds one channel per NIC at its first inter-node speed
until channels x speed reaches the GPU's NVLink total; a GB200 NVL72 domain (18 x 40 GB/s = 720 =
15 x 48.0) therefore drives 15 of its 72 NICs up to NCCL 2.27.2 and 16 from 2.27.3 (speed 47.9; its
release notes: "increase to 16 the number of NICs used to communicate between MNNVL domains").
"""

import numpy as np
import pytest

from wanka.network.collectives import CommGroup, _ctx, _model_for, collective_time, nccl_version


def _gb200(racks: int, version: str | None, **kw: object) -> CommGroup:
    return CommGroup(
        size=72.0 * racks,
        per_domain=72.0,
        scale_up_bw=900e9,
        scale_out_bw=50e9,
        architecture="Blackwell",
        nccl_version=version,
        **kw,  # type: ignore[arg-type]
    )


def _nics(g: CommGroup) -> tuple[float, float]:
    c = _ctx(1e9, g, _model_for(g))
    return float(c.nics), float(c.nvls_heads)


def test_gb200_nvl72_drives_15_nics_before_nccl_2_27_3_and_16_after() -> None:
    assert _nics(_gb200(20, "2.26.2")) == (15.0, 16.0)  # NVLS graph: 720 x 72/71 / 48 -> 16 heads
    assert _nics(_gb200(20, "2.27.3")) == (16.0, 16.0)
    assert _nics(_gb200(20, "2.28.3")) == (16.0, 16.0)  # 18 x 40.1 = 721.8 > 15 x 48
    assert _nics(_gb200(20, None)) == _nics(_gb200(20, "2.30.7"))  # None: the newest release


def test_eight_gpu_nodes_keep_one_nic_per_gpu() -> None:
    # DGX H100: 18 x 20.6 = 370.8 GB/s needs 8 channels of 48: every NIC, in every release
    for v in ("2.21.5", "2.26.2", None):
        g = CommGroup(
            size=64, per_domain=8, scale_up_bw=450e9, scale_out_bw=50e9, architecture="Hopper", nccl_version=v
        )
        assert _nics(g) == (8.0, 8.0)
    # an architecture without NCCL's tables: every NIC of the domain
    g = CommGroup(size=144, per_domain=72, scale_up_bw=900e9, scale_out_bw=50e9)
    assert _nics(g)[0] == 72.0


def test_fewer_nics_lower_the_multi_rack_ring_by_their_share() -> None:
    # ring across 20 racks: busbw = min(NVLink, NICs x NIC), NVLink-bound with 16 NICs, NIC-bound with 15
    old = collective_time("all_reduce", 16 * 2**30, _gb200(20, "2.26.2"), "ring", protocol="Simple")
    new = collective_time("all_reduce", 16 * 2**30, _gb200(20, "2.27.3"), "ring", protocol="Simple")
    assert float(old.busbw) < float(new.busbw)
    m = _model_for(_gb200(20, None))
    nic_bound = 15 * 50e9 * m.out_efficiency
    nvlink_bound = 900e9 * m.up_efficiency
    assert float(old.busbw) / float(new.busbw) == pytest.approx(nic_bound / nvlink_bound, rel=0.02)


def test_batch_and_scalar_paths_agree_on_the_nic_count() -> None:
    sizes = np.array([2.0**29, 2.0**31, 2.0**34])
    batch = collective_time("all_reduce", sizes, _gb200(20, "2.26.2"))
    for i, s in enumerate(sizes):
        one = collective_time("all_reduce", float(s), _gb200(20, "2.26.2"))
        assert float(one.time_s) == pytest.approx(float(np.asarray(batch.time_s)[i]), rel=1e-12)


def test_nccl_version_parsing_and_errors() -> None:
    assert nccl_version("2.26.2") == (2, 26, 2)
    assert nccl_version("v2.27.3-1") == (2, 27, 3)
    assert nccl_version("2.28") == (2, 28, 0)
    assert nccl_version(None) is None
    with pytest.raises(ValueError, match="nccl_version"):
        nccl_version("latest")
    with pytest.raises(ValueError, match="nccl_version"):
        collective_time("all_reduce", 1e9, _gb200(2, "two"))
