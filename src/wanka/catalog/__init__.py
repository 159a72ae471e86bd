"""Hardware catalog (基础设施层 facts): accelerators, server nodes, NICs, switches, optics, storage,
scale-up fabrics (supernodes).

Facts live in YAML files under ``data/`` with units in their key names and a ``source`` per entry;
they are converted to SI base units once, here, at load time. Nothing else in wanka holds a
hardware number.

>>> from wanka.catalog import accelerator
>>> accelerator("H100").peak_flops["bf16"] / 1e12
989.4
"""

from wanka.catalog.entries import Accelerator, Nic, Node, Optic, ScaleUpFabric, StorageServer, Switch
from wanka.catalog.loader import (
    Catalog,
    accelerator,
    catalog,
    cluster_scale_up_fabric,
    default_scale_up_fabric,
    nic,
    node,
    node_or_default,
    optic,
    scale_up_fabric,
    storage_server,
    switch,
)

__all__ = [
    "Accelerator",
    "Catalog",
    "Nic",
    "Node",
    "Optic",
    "ScaleUpFabric",
    "StorageServer",
    "Switch",
    "accelerator",
    "catalog",
    "cluster_scale_up_fabric",
    "default_scale_up_fabric",
    "nic",
    "node",
    "node_or_default",
    "optic",
    "scale_up_fabric",
    "storage_server",
    "switch",
]
