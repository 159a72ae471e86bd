"""Storage (基础设施层): the parallel file system, checkpoint I/O and training-data reads.

>>> from wanka.spec import parse_scenario
>>> s = parse_scenario({"cluster": {"accelerator": "H100", "nodes": 2},
...     "model": {"n_layers": 2, "hidden": 1024, "n_heads": 8, "n_kv_heads": 8, "ffn_hidden": 4096,
...               "vocab": 32000, "seq_len": 2048}})
>>> checkpoint_io(s).size_bytes == 14 * parameter_count(s.model)[0]
True
"""

from wanka.storage.checkpoint import (
    CheckpointIO,
    CheckpointLayout,
    CheckpointSize,
    checkpoint_io,
    checkpoint_layout,
    checkpoint_size,
)
from wanka.storage.data_read import DataReadDemand, data_read_demand
from wanka.storage.params import parameter_count
from wanka.storage.system import StorageSystem, cluster_node, storage_system

__all__ = [
    "CheckpointIO",
    "CheckpointLayout",
    "CheckpointSize",
    "DataReadDemand",
    "StorageSystem",
    "checkpoint_io",
    "checkpoint_layout",
    "checkpoint_size",
    "cluster_node",
    "data_read_demand",
    "parameter_count",
    "storage_system",
]
