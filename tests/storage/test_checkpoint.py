from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wanka.errors import SpecError
from wanka.spec import parse_scenario
from wanka.storage import checkpoint_io, checkpoint_layout, checkpoint_size, data_read_demand

from .conftest import bloom

BLOOM_PARAMS = 70 * 12 * 14336**2 + 250880 * 14336 + 141 * 14336  # by hand, see test_params


def test_bloom_checkpoint_size_matches_bigscience() -> None:
    size = checkpoint_size(bloom())
    # BigScience model card: "bf16 weights 329GB, full checkpoint with optimizer states 2.3TB".
    assert size.weights_bytes == 2 * BLOOM_PARAMS
    assert abs(size.weights_bytes / 2**30 - 329) / 329 < 0.01  # their "GB" is GiB
    assert abs(size.total_bytes - 2.3e12) / 2.3e12 < 0.10
    assert size.grads_bytes == 0


def test_bloom_save_seconds_on_given_bandwidth() -> None:
    io = checkpoint_io(bloom(checkpoint={"coordination_s": 0.0}), mode="sync")
    # 10 servers × 10 GB/s write = 100 GB/s; 48 nodes × min(400 Gb/s = 50 GB/s, 8 × 5 GB/s) = 1.9 TB/s.
    assert io.limited_by == "servers"
    assert io.write_bandwidth == pytest.approx(100e9)
    assert io.save_s == pytest.approx(14 * BLOOM_PARAMS / 100e9)  # ≈ 24.7 s
    assert io.blocking_s == io.save_s
    assert io.load_s == pytest.approx(14 * BLOOM_PARAMS / 200e9)
    assert io.writers == 384 and io.writer_nodes == 48


def test_client_network_limit() -> None:
    s = bloom(
        cluster={
            "storage": {
                "servers": 1000,
                "read_gbytes_per_s_per_server": 100.0,
                "write_gbytes_per_s_per_server": 100.0,
            }
        }
    )
    io = checkpoint_io(s, mode="sync")
    # 48 nodes × 8 ranks × 5 GB/s streams = 1.92 TB/s < 48 × 50 GB/s NICs = 2.4 TB/s < 100 TB/s servers
    assert io.limited_by == "client streams"
    assert io.write_bandwidth == pytest.approx(48 * 8 * 5e9)


def test_layouts() -> None:
    s = bloom(parallel={"zero": 0})
    lay = checkpoint_layout(s)
    assert lay.writers == 4 * 12  # one dp replica: tp · pp
    assert lay.writer_nodes == 12  # tp 4 fits one node; each stage on its own node
    gathered = checkpoint_layout(s, sharded=False)
    assert gathered.writers == 12 and gathered.writer_nodes == 12
    assert checkpoint_layout(bloom()).writers == 384  # distributed optimizer: every rank


def test_gathered_is_slower_than_sharded() -> None:
    sharded = checkpoint_io(bloom(), mode="sync")
    gathered = checkpoint_io(bloom(checkpoint={"sharded": False}), mode="sync")
    assert gathered.save_s > sharded.save_s
    assert gathered.limited_by == "client streams"  # 12 single-stream writers × 5 GB/s = 60 GB/s


def test_async_and_in_memory_block_less() -> None:
    s = bloom()
    sync, asy, mem = (checkpoint_io(s, mode=m) for m in ("sync", "async", "in_memory"))
    assert asy.blocking_s < sync.blocking_s
    # async stalls for the device-to-host copy of one rank's shard (2.47 TB / 384 / 25 GB/s) plus the
    # save's coordination, 0.5 s + 0.25 s × log2(384 ranks) by default
    coord = 0.5 + 0.25 * math.log2(384)
    assert asy.coordination_s == pytest.approx(coord)
    assert asy.blocking_s == pytest.approx(14 * BLOOM_PARAMS / 384 / 25e9 + coord)
    assert asy.save_s == pytest.approx(asy.blocking_s + sync.drain_s)
    assert any("coordination" in a for a in asy.assumptions)
    given = checkpoint_io(bloom(checkpoint={"coordination_s": 0.0}), mode="async")
    assert given.blocking_s == pytest.approx(14 * BLOOM_PARAMS / 384 / 25e9)
    assert not any("coordination" in a for a in given.assumptions)
    assert mem.blocking_s < sync.blocking_s
    assert mem.load_s < sync.load_s
    assert mem.to_dict()["mode"] == "in_memory"


def test_weights_only_and_fp32() -> None:
    w = checkpoint_size(bloom(checkpoint={"include_optimizer": False}))
    assert w.total_bytes == 2 * BLOOM_PARAMS
    fp32 = checkpoint_size(bloom(training={"precision": "fp32"}))
    assert fp32.total_bytes == 12 * BLOOM_PARAMS


def test_errors() -> None:
    with pytest.raises(SpecError, match=r"checkpoint\.mode"):
        checkpoint_io(bloom(), mode="later")
    no_model = parse_scenario({"cluster": {"accelerator": "H100", "nodes": 2}})
    with pytest.raises(SpecError, match="model"):
        checkpoint_io(no_model)
    with pytest.raises(SpecError, match="tokens_per_s"):
        data_read_demand(bloom(), -1.0)


def test_data_read_demand() -> None:
    d = data_read_demand(bloom(), 1e6)
    assert d.bytes_per_token == 4  # vocab 250,880 > 65,536: int32 token ids
    assert d.demand == pytest.approx(4e6)
    assert d.supply == pytest.approx(200e9)
    assert d.ok and d.headroom == pytest.approx(5e4)
    small = bloom(model={"vocab": 32000})
    assert data_read_demand(small, 1e6).bytes_per_token == 2


_gbs = st.floats(min_value=0.5, max_value=500.0)


@settings(max_examples=40, deadline=None)
@given(
    servers=st.integers(1, 400),
    extra=st.integers(0, 400),
    w=_gbs,
    w2=_gbs,
    nic=_gbs,
    mode=st.sampled_from(["sync", "async", "in_memory"]),
)
def test_more_bandwidth_never_slows_a_save(
    servers: int, extra: int, w: float, w2: float, nic: float, mode: str
) -> None:
    def io(n: int, wr: float, nic_gbps: float):  # type: ignore[no-untyped-def]
        return checkpoint_io(
            bloom(
                cluster={
                    "fabric": {"nic_gbps_per_gpu": nic_gbps},
                    "storage": {"servers": n, "write_gbytes_per_s_per_server": wr},
                }
            ),
            mode=mode,
        )

    base = io(servers, w, nic)
    more_servers = io(servers + extra, w, nic)
    faster = io(servers, max(w, w2), nic)
    wider_nics = io(servers, w, nic * 2)
    for other in (more_servers, faster, wider_nics):
        assert other.save_s <= base.save_s * (1 + 1e-12)
        assert other.blocking_s <= base.blocking_s * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(servers=st.integers(1, 2000), w=_gbs, zero=st.integers(0, 3), sharded=st.booleans())
def test_sync_blocks_at_least_as_long_as_async(servers: int, w: float, zero: int, sharded: bool) -> None:
    s = bloom(
        cluster={"storage": {"servers": servers, "write_gbytes_per_s_per_server": w}},
        parallel={"zero": zero},
        checkpoint={"sharded": sharded},
    )
    sync, asy, mem = (checkpoint_io(s, mode=m) for m in ("sync", "async", "in_memory"))
    assert sync.blocking_s >= asy.blocking_s > 0
    assert sync.blocking_s >= mem.blocking_s > 0
    assert sync.size_bytes == asy.size_bytes == mem.size_bytes


def test_unknown_node_and_server_are_catalog_errors() -> None:
    from wanka.errors import CatalogError

    with pytest.raises(CatalogError, match=r"cluster\.node"):
        checkpoint_io(bloom(cluster={"node": "no-such-node"}))
    with pytest.raises(CatalogError, match=r"cluster\.storage\.server"):
        checkpoint_io(bloom(cluster={"storage": {"server": "no-such-box"}}))


def test_catalog_server_and_node_storage_network() -> None:
    # DDN AI400X2 (catalog: 65 GB/s write); DGX-A100 storage network 400 Gb/s = 50 GB/s per node.
    s = bloom(
        cluster={
            "node": "DGX-A100",
            "storage": {
                "server": "DDN-AI400X2",
                "servers": 4,
                "write_gbytes_per_s_per_server": None,
                "read_gbytes_per_s_per_server": None,
            },
        }
    )
    io = checkpoint_io(s, mode="sync")
    assert io.write_bandwidth == pytest.approx(4 * 65e9)
    single = bloom(
        cluster={"node": "DGX-A100", "storage": {"servers": 1000}},
        parallel={"zero": 0},
        checkpoint={"sharded": False},
    )
    # gathered: 12 stage writers on 12 nodes, one 5 GB/s stream each
    assert checkpoint_io(single, mode="sync").write_bandwidth == pytest.approx(12 * 5e9)


def test_data_loading_leaves_the_save_less_bandwidth() -> None:
    s = bloom(checkpoint={"coordination_s": 0.0})
    free = checkpoint_io(s, mode="sync")
    # 10 servers read 200 GB/s; a loader taking half of it leaves half the servers' write bandwidth
    busy = checkpoint_io(s, mode="sync", data_read_bytes_per_s=100e9)
    assert busy.write_bandwidth == pytest.approx(free.write_bandwidth / 2)
    assert busy.drain_s == pytest.approx(2 * free.drain_s)
    with pytest.raises(SpecError, match="data_read_bytes_per_s"):
        checkpoint_io(s, data_read_bytes_per_s=-1.0)


STORE = {"servers": 10, "read_gbytes_per_s_per_server": 20.0, "write_gbytes_per_s_per_server": 10.0}


def test_shared_file_system_counts_its_share() -> None:
    whole = checkpoint_io(bloom(checkpoint={"coordination_s": 0.0}), mode="sync")
    quarter = checkpoint_io(
        bloom(checkpoint={"coordination_s": 0.0}, cluster={"storage": {**STORE, "share": 0.25}}), mode="sync"
    )
    assert quarter.write_bandwidth == pytest.approx(whole.write_bandwidth / 4)
