"""The storage system a cluster sees: parallel-file-system servers and each node's path to them.

Aggregate bandwidth of a parallel file system (Lustre, GPFS/Storage Scale, WEKA, 3FS) grows with its
server count until the clients run out of network: for ``k`` client nodes,

    B = min(servers × per-server bandwidth,  k × min(node storage network, ranks_on_node × stream))

(the first term is the servers' own limit — DDN/NVIDIA SuperPOD sizing rules are "GB/s per
appliance × appliances"; the second the storage NICs of the nodes that take part; the third what the
writing processes themselves can push, one stream each).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from wanka import yamlio
from wanka.catalog import Node, catalog, node, storage_server
from wanka.errors import CatalogError
from wanka.spec import ClusterSpec
from wanka.units import GIGA, TERA, gbps_to_bytes_per_s

__all__ = ["StorageSystem", "cluster_node", "defaults", "storage_system"]


@lru_cache(maxsize=1)
def defaults() -> dict[str, Any]:
    """The storage defaults file (``storage/data/storage_defaults.yaml``), parsed once."""
    path = resources.files("wanka.storage") / "data" / "storage_defaults.yaml"
    data: dict[str, Any] = yamlio.load_data(path, yaml11=True)  # yaml.safe_load's result, cached
    return data


def cluster_node(cluster: ClusterSpec) -> Node:
    """The catalog node of ``cluster`` (its ``node`` or the accelerator's default); CatalogError if none."""
    from wanka.catalog import accelerator

    name = cluster.node or accelerator(cluster.accelerator).default_node
    if name is None:
        raise CatalogError(
            f"cluster.node is not given and accelerator {cluster.accelerator!r} has no default_node; "
            "name a catalog node in cluster.node"
        )
    try:
        return node(name)
    except CatalogError as e:
        raise CatalogError(f"cluster.node = {name!r}: {e}") from None


@dataclass(frozen=True)
class StorageSystem:
    """Servers and client paths in SI units (B/s, W)."""

    kind: str
    servers: int
    server_name: str
    read_per_server: float  # B/s
    write_per_server: float  # B/s
    capacity: float  # B, all servers
    power_per_server_w: float
    node_storage_bandwidth: float  # B/s per node, its storage (or scale-out) network
    node_fabric_bandwidth: float  # B/s per node on the scale-out fabric (peer copies)
    stream_bandwidth: float  # B/s one writing/reading process
    host_copy_bandwidth: float  # B/s device-to-host per GPU
    gpus_per_node: int
    source: str
    assumptions: tuple[str, ...] = ()
    share: float = 1.0  # share of a shared file system serving this cluster

    @property
    def power_w(self) -> float:
        """Draw charged to this cluster: its share of the servers."""
        return self.servers * self.power_per_server_w * self.share

    def client_bandwidth(self, nodes: int, ranks_per_node: int) -> float:
        """What ``nodes`` client nodes with ``ranks_per_node`` active processes each can move."""
        per_node = min(self.node_storage_bandwidth, ranks_per_node * self.stream_bandwidth)
        return nodes * per_node

    def bandwidth(self, nodes: int, ranks_per_node: int, *, write: bool) -> tuple[float, str]:
        """Aggregate bandwidth and what limits it: ``servers``, ``storage network`` or ``client streams``."""
        server = self.servers * self.share * (self.write_per_server if write else self.read_per_server)
        net = nodes * self.node_storage_bandwidth
        streams = nodes * ranks_per_node * self.stream_bandwidth
        best = min(server, net, streams)
        which = "servers" if best == server else "storage network" if best == net else "client streams"
        return best, which


def storage_system(cluster: ClusterSpec) -> StorageSystem:
    """Resolve ``cluster.storage`` against the catalog and the storage defaults.

    Per-server figures: the spec's ``read/write_gbytes_per_s_per_server``, else the catalog entry
    named by ``storage.server``, else the generic appliance of ``storage_defaults.yaml``. A node's
    storage network: its catalog ``storage_gbps``, else its scale-out NICs (``fabric.nic_gbps_per_gpu``
    × GPUs per node), noted in ``assumptions``. An unknown node is a CatalogError.
    """
    d = defaults()
    st = cluster.storage
    notes: list[str] = []
    generic = str(d["generic_server_catalog"])
    given = st.read_gbytes_per_s_per_server is not None and st.write_gbytes_per_s_per_server is not None
    if st.server is not None or generic in catalog().storage:
        try:
            srv = storage_server(st.server or generic)
        except CatalogError as e:
            raise CatalogError(f"cluster.storage.server = {st.server!r}: {e}") from None
        name, rd, wr, cap, pw, src = (
            srv.name,
            srv.read_bandwidth,
            srv.write_bandwidth,
            srv.capacity_bytes,
            srv.power_w,
            srv.source,
        )
        if st.server is None and not given:
            notes.append(f"storage server: not given; assumed {srv.name} ({srv.source})")
    else:
        g = d["generic_server"]
        name, rd, wr = g["name"], g["read_gbytes_per_s"] * GIGA, g["write_gbytes_per_s"] * GIGA
        cap, pw, src = g["capacity_tb"] * TERA, float(g["power_w"]), str(g["source"]).strip()
        if not given:
            notes.append(f"storage server: generic appliance ({src})")
    if st.read_gbytes_per_s_per_server is not None:
        rd = st.read_gbytes_per_s_per_server * GIGA
    if st.write_gbytes_per_s_per_server is not None:
        wr = st.write_gbytes_per_s_per_server * GIGA
    if st.capacity_tb is not None:
        cap = st.capacity_tb * TERA
    servers = st.servers
    if "servers" not in st.model_fields_set:
        per = int(d["nodes_per_server"])
        servers = max(1, -(-cluster.nodes // per))
        notes.append(
            f"storage servers: not given; {servers:,} = ceil({cluster.nodes:,} nodes / {per}) "
            f"({' '.join(str(d['nodes_per_server_source']).split())})"
        )
    if st.share < 1.0:
        notes.append(
            f"storage: a shared file system; {st.share:.1%} of its {servers:,} servers' power and bandwidth "
            "counted for this cluster (cluster.storage.share)"
        )
    fabric = gbps_to_bytes_per_s(cluster.fabric.nic_gbps_per_gpu) * cluster.gpus_per_node
    n = cluster_node(cluster)  # CatalogError names the field when the node is unknown
    node_bw = n.storage_bandwidth if n.storage_bandwidth > 0 else fabric
    if n.storage_bandwidth <= 0:
        notes.append(f"node {n.name}: no storage network in the catalog; the scale-out NICs carry it")
    return StorageSystem(
        kind=st.kind,
        servers=servers,
        server_name=name,
        read_per_server=rd,
        write_per_server=wr,
        capacity=servers * cap,
        power_per_server_w=pw,
        node_storage_bandwidth=node_bw,
        node_fabric_bandwidth=fabric,
        stream_bandwidth=float(d["client_stream_gbytes_per_s"]) * GIGA,
        host_copy_bandwidth=float(d["host_copy_gbytes_per_s"]) * GIGA,
        gpus_per_node=cluster.gpus_per_node,
        source=src,
        assumptions=tuple(notes),
        share=st.share,
    )
