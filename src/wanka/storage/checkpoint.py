"""Checkpoint size and I/O: how big, who writes, how long it takes and how long training stalls.

Size (bytes per parameter, mixed-precision Adam; Rajbhandari et al. 2020, ZeRO §3: 2 + 2 + 12 = 16
B/param of training state): a checkpoint keeps the 16-bit weights (2), the fp32 master copy (4) and
Adam's m and v (4 + 4) = 14 B/param. Gradients are not persisted — a checkpoint is taken at a step
boundary, after the optimizer step, when they are consumed — so ``grads_bytes`` is 0. BLOOM-176B:
176.2 G × 14 B = 2.47 TB, against BigScience's "bf16 weights 329 GB, full checkpoint with optimizer
states 2.3 TB" (binary units: 328 GiB and 2.24 TiB here). fp32/tf32 training has no separate master
copy (4 + 8 = 12 B/param); ``checkpoint.include_optimizer = false`` keeps the weights only. With
``training.optimizer: muon`` the matrices Muon steps keep one fp32 moment (momentum), so 10 B/param for them.

Layout: sharded (Megatron-Core distributed checkpoint / torch.distributed.checkpoint) — with the
distributed optimizer (``zero ≥ 1``, or no parallel strategy given) every rank writes its share;
with ``zero = 0`` one data-parallel replica writes (tp·pp·ep ranks). Gathered — one rank per
pipeline stage writes (legacy ``torch.save`` after a tp gather).

Modes: ``sync`` stalls training for the whole write; ``async`` stalls it for the device-to-host copy
into pinned memory plus the save's coordination (planning, barriers, metadata: ``coordination_s``,
``checkpoint.coordination_s`` or ``base + per_doubling · log2(ranks)`` from published DCP / Megatron
async / ByteCheckpoint blocking times, ``storage_defaults.yaml``), then drains in the background
(torch.distributed.checkpoint ``async_save``,
Nebula); ``in_memory`` copies each node's state to a peer node's host memory over the scale-out
fabric and persists to the file system rarely (Gemini, Wang et al. SOSP'23), and restarts from the
peer copy.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal, cast

from wanka.errors import SpecError
from wanka.spec import ModelSpec, Scenario
from wanka.storage.params import parameter_count
from wanka.storage.system import StorageSystem, storage_system
from wanka.workload.shapes import LayerKind, muon_param_elems

__all__ = [
    "CheckpointIO",
    "CheckpointLayout",
    "CheckpointSize",
    "checkpoint_io",
    "checkpoint_layout",
    "checkpoint_size",
    "coordination_s",
    "muon_param_count",
]

Mode = Literal["sync", "async", "in_memory"]
_MODES: tuple[str, ...] = ("sync", "async", "in_memory")
_WIDE = ("fp32", "tf32")


@dataclass(frozen=True)
class CheckpointSize:
    """What a checkpoint holds, in bytes."""

    params: int
    weights_bytes: float
    master_bytes: float
    optimizer_bytes: float
    grads_bytes: float

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.master_bytes + self.optimizer_bytes + self.grads_bytes


@dataclass(frozen=True)
class CheckpointLayout:
    """Which ranks write and on how many nodes."""

    writers: int
    writer_nodes: int
    job_nodes: int

    @property
    def writers_per_node(self) -> int:
        return math.ceil(self.writers / self.writer_nodes)


@dataclass(frozen=True)
class CheckpointIO:
    """One checkpoint's I/O in SI units (bytes, B/s, s). See the module docstring for the model."""

    mode: str
    sharded: bool
    size_bytes: float
    weights_bytes: float
    master_bytes: float
    optimizer_bytes: float
    grads_bytes: float
    params: int
    writers: int
    writer_nodes: int
    write_bandwidth: float  # B/s aggregate the save uses
    read_bandwidth: float  # B/s aggregate a restart's read uses
    limited_by: str  # servers | storage network | client streams
    save_s: float  # until the checkpoint is safe (in peer memory for in_memory)
    blocking_s: float  # training stalled
    drain_s: float  # writing it to the parallel file system
    load_s: float  # reading it back on restart
    assumptions: tuple[str, ...] = ()
    coordination_s: float = 0.0  # planning, barriers, metadata inside blocking_s
    host_copy_s: float = 0.0  # device-to-host (or peer) copy inside blocking_s
    data_read_bytes_per_s: float = 0.0  # storage bandwidth the data loader keeps while the save drains

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["assumptions"] = list(self.assumptions)
        return d


def checkpoint_size(scenario: Scenario) -> CheckpointSize:
    """Bytes of one full checkpoint of ``scenario.model`` (see module docstring)."""
    if scenario.model is None:
        raise SpecError("a checkpoint needs a model; add a model block", field="model")
    total, _ = parameter_count(scenario.model)
    precision = scenario.training.precision if scenario.training is not None else "bf16"
    wide = precision in _WIDE
    weights = total * (4.0 if wide else 2.0)
    if not scenario.checkpoint.include_optimizer:
        return CheckpointSize(total, weights, 0.0, 0.0, 0.0)
    master = 0.0 if wide else 4.0 * total  # fp32 master copy of 16-bit (or fp8) training
    optimizer = scenario.training.optimizer if scenario.training is not None else "adam"
    if optimizer == "muon":
        # Muon keeps one fp32 moment (its momentum) for the matrices it orthogonalizes, AdamW two for the rest
        muon = min(muon_param_count(scenario.model), float(total))
        return CheckpointSize(total, weights, master, 4.0 * muon + 8.0 * (total - muon), 0.0)
    return CheckpointSize(total, weights, master, 8.0 * total, 0.0)  # Adam m, v in fp32


def muon_param_count(model: ModelSpec) -> float:
    """Parameters Muon orthogonalizes (every layer's 2-D matrices, routed experts' each; not the embedding, LM
    head, norms or biases: :func:`wanka.workload.shapes.muon_matrices`), the rest stepping with AdamW."""
    n_dense, n_moe = model.stack_layers

    def per_layer(kind: LayerKind) -> float:
        return muon_param_elems(model, kind) + muon_param_elems(model, kind, routed=True)

    return n_dense * per_layer("dense") + (n_moe * per_layer("moe") if n_moe else 0.0)


def checkpoint_layout(scenario: Scenario, *, sharded: bool | None = None) -> CheckpointLayout:
    """Writers and writer nodes (ranks placed tp-innermost, pipeline stages on separate nodes)."""
    sharded = scenario.checkpoint.sharded if sharded is None else sharded
    g = scenario.cluster.gpus_per_node
    gpus = scenario.gpus
    job_nodes = math.ceil(gpus / g)
    p = scenario.parallel
    if not sharded:
        stages = p.pp if p is not None else 1
        return CheckpointLayout(stages, min(job_nodes, stages), job_nodes)
    if p is None or p.zero >= 1:
        return CheckpointLayout(gpus, job_nodes, job_nodes)
    per_stage = p.tp * p.ep
    return CheckpointLayout(per_stage * p.pp, min(job_nodes, p.pp * math.ceil(per_stage / g)), job_nodes)


def coordination_s(scenario: Scenario, ranks: int, *, mode: str) -> tuple[float, str | None]:
    """Seconds a save blocks on for planning, barriers and metadata, and the assumption when defaulted."""
    given = scenario.checkpoint.coordination_s
    if given is not None:
        return float(given), None
    from wanka.storage.system import defaults

    c = defaults()["checkpoint_coordination"]
    base, per = float(c["base_s"]), float(c["per_doubling_s"])
    if mode == "in_memory":
        return base, f"checkpoint coordination {base:g} s per in-memory save (a barrier; no file-system metadata)"
    t = base + per * math.log2(max(ranks, 1))
    return t, (
        f"checkpoint coordination {t:.2g} s per save = {base:g} s + {per:g} s × log2({ranks:,} ranks) "
        "(published async-save blocking: PyTorch DCP, Megatron async, ByteCheckpoint; set checkpoint.coordination_s)"
    )


def checkpoint_io(
    scenario: Scenario,
    *,
    mode: str | None = None,
    system: StorageSystem | None = None,
    data_read_bytes_per_s: float = 0.0,
) -> CheckpointIO:
    """Size, save, stall and restart time of one checkpoint of ``scenario``.

    ``mode`` overrides ``scenario.checkpoint.mode``; ``system`` overrides the storage resolved from
    ``scenario.cluster`` (for sweeps and tests); ``data_read_bytes_per_s`` is the training-data
    read the servers keep serving while a save drains (the save gets the rest).

    >>> from wanka.spec import parse_scenario
    >>> s = parse_scenario({"cluster": {"accelerator": "H100", "nodes": 4},
    ...     "model": {"n_layers": 2, "hidden": 1024, "n_heads": 8, "n_kv_heads": 8, "ffn_hidden": 4096,
    ...               "vocab": 32000, "seq_len": 2048}})
    >>> checkpoint_io(s, mode="sync").blocking_s == checkpoint_io(s, mode="sync").save_s
    True
    """
    m = scenario.checkpoint.mode if mode is None else mode
    if m not in _MODES:
        raise SpecError(f"= {m!r}: must be one of {', '.join(_MODES)}", field="checkpoint.mode")
    m = cast(Mode, m)
    size = checkpoint_size(scenario)
    lay = checkpoint_layout(scenario)
    sys_ = storage_system(scenario.cluster) if system is None else system
    nbytes = size.total_bytes
    if not (math.isfinite(data_read_bytes_per_s) and data_read_bytes_per_s >= 0):
        raise SpecError(f"= {data_read_bytes_per_s!r}: must be ≥ 0 B/s", field="data_read_bytes_per_s")
    wbw, limit = sys_.bandwidth(lay.writer_nodes, lay.writers_per_node, write=True)
    server_read = sys_.servers * sys_.share * sys_.read_per_server
    if data_read_bytes_per_s > 0 and server_read > 0:
        left = max(0.05, 1.0 - data_read_bytes_per_s / server_read)  # the loader keeps its share of the servers
        server_w = sys_.servers * sys_.share * sys_.write_per_server * left
        if server_w < wbw:
            wbw, limit = server_w, "servers (after data loading)"
    ranks_per_node = min(scenario.cluster.gpus_per_node, scenario.gpus)
    rbw, _ = sys_.bandwidth(lay.job_nodes, ranks_per_node, write=False)  # every rank reads its shard
    drain = nbytes / wbw
    pfs_load = nbytes / rbw
    notes = list(sys_.assumptions)
    coord, coord_note = coordination_s(scenario, lay.writers, mode=m)
    if coord_note is not None:
        notes.append(coord_note)
    if m == "sync":
        copy = drain
        blocking = drain + coord
        save = blocking
        load = pfs_load
    elif m == "async":
        copy = min(nbytes / lay.writers / sys_.host_copy_bandwidth, drain)  # each writer stages its shard
        blocking = copy + coord
        save = blocking + drain
        load = pfs_load
    else:  # in_memory: each writer node sends its share to a peer's host memory over the fabric
        per_node = nbytes / lay.writer_nodes
        peer = max(per_node / sys_.node_fabric_bandwidth, nbytes / lay.writers / sys_.host_copy_bandwidth)
        copy = min(peer, drain)
        blocking = save = copy + coord
        load = min(per_node / sys_.node_fabric_bandwidth, pfs_load)
        notes.append(
            "in_memory: restart reads the peer copy; a failure losing a node and its peer reads the "
            "parallel file system (drain_s/ read at read_bandwidth)"
        )
    notes.append("optimizer: Adam (m, v in fp32); gradients are not checkpointed")
    return CheckpointIO(
        mode=m,
        sharded=scenario.checkpoint.sharded,
        size_bytes=nbytes,
        weights_bytes=size.weights_bytes,
        master_bytes=size.master_bytes,
        optimizer_bytes=size.optimizer_bytes,
        grads_bytes=size.grads_bytes,
        params=size.params,
        writers=lay.writers,
        writer_nodes=lay.writer_nodes,
        write_bandwidth=wbw,
        read_bandwidth=rbw,
        limited_by=limit,
        save_s=save,
        blocking_s=blocking,
        drain_s=drain,
        load_s=load,
        assumptions=tuple(notes),
        coordination_s=coord,
        host_copy_s=copy,
        data_read_bytes_per_s=data_read_bytes_per_s,
    )
