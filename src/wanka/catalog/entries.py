"""Catalog entries: the file schema (units in key names) and the SI records built from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt

from wanka.units import GIB, GIGA, TERA

__all__ = [
    "Accelerator",
    "AcceleratorEntry",
    "Nic",
    "NicEntry",
    "Node",
    "NodeEntry",
    "Optic",
    "OpticEntry",
    "ScaleUpFabric",
    "ScaleUpFabricEntry",
    "StorageServer",
    "StorageServerEntry",
    "Switch",
    "SwitchEntry",
]

DTYPES = ("fp4", "fp8", "bf16", "fp16", "tf32", "fp32", "fp64")


class _Entry(BaseModel):
    # validators built on first use: a catalog read from its cache (loader.py) validates nothing
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
    name: str
    aliases: list[str] = []
    source: str = Field(min_length=5, description="datasheet or paper the figures come from")
    notes: str = ""


# ---------------------------------------------------------------- accelerators
# PCIe Gen5 x16, one direction: 32 GT/s x 16 lanes x 128/130 encoding / 8 = 63 GB/s (PCI-SIG PCIe 5.0
# base specification); the host link assumed for an accelerator whose entry gives none
PCIE5_X16_BYTES_PER_S = 63.0e9


class AcceleratorEntry(_Entry):
    vendor: str
    architecture: str = ""
    dense_tflops: dict[Literal["fp4", "fp8", "bf16", "fp16", "tf32", "fp32", "fp64"], float]
    hbm_gib: float = Field(gt=0)
    hbm_tbytes_per_s: float = Field(gt=0, description="HBM bandwidth, 10^12 bytes/s")
    scale_up_gbytes_per_s_per_direction: float = Field(gt=0, description="per GPU, one direction, 10^9 B/s")
    scale_up_domains: list[PositiveInt] = Field(min_length=1)
    scale_up_link: str = ""
    scale_up_link_efficiency: float | None = Field(
        None,
        gt=0,
        le=1,
        description="large-message all-reduce bus bandwidth / scale-up link rate measured on this link "
        "technology; None = the calibration's scale_up_efficiency (NVLink, DGX A100 / H100)",
    )
    scale_up_nvls_efficiency: float | None = Field(
        None,
        gt=0,
        le=1,
        description="NVLink SHARP (NVLS) all-reduce algbw / scale-up link rate on 8 ranks, measured on this "
        "NVSwitch generation; None = NVLink 4's (the collective model's fit on DGX H100)",
    )
    tdp_w: float = Field(gt=0)
    idle_w: float = Field(gt=0)
    matmul_fraction: float = Field(0.8, gt=0, le=1, description="achievable / peak on large GEMMs")
    attention_fraction: float = Field(0.5, gt=0, le=1, description="fused attention fwd+bwd / BF16 peak")
    attention_fraction_fa2: float | None = Field(
        None, gt=0, le=1, description="FlashAttention-2 fwd+bwd / BF16 peak; None = attention_fraction"
    )
    exp_tera_per_s: float | None = Field(
        None,
        gt=0,
        description="special-function-unit exponential rate (MUFU.EX2), 10^12 results/s at the clock the BF16 "
        "peak is quoted; None = not public (attention's softmax share is then assumed as on the reference GPU)",
    )
    fp8_attention_time: dict[Literal["fp8", "mxfp8"], list[tuple[float, float, float]]] = Field(
        {},
        description="FP8 fused attention (Transformer Engine fp8_dot_product_attention, cuDNN) time over the BF16 "
        "kernel's, per scaling (fp8 = per-tensor, mxfp8 = block-scaled): rows (d_qk + d_v, forward, backward), "
        "causal; between head dims linear, outside them the nearest row; absent = the BF16 kernel's time",
    )
    fp8_gemm_any_layout: bool = Field(
        False,
        description="FP8 GEMMs take either operand in either layout, so a per-tensor FP8 tensor serves the "
        "forward and the transposed backward GEMMs from one copy; False = FP8 GEMMs need both operands "
        "K-major (TN), so a weight's backward use needs a second, transposed FP8 copy",
    )
    host_link_gbytes_per_s_per_direction: float | None = Field(
        None,
        gt=0,
        description="GPU <-> host memory copy bandwidth per GPU, one direction, 10^9 B/s (the lesser of the "
        "link and the GPU's share of host memory bandwidth); None = PCIe Gen5 x16 (63 GB/s), an assumption",
    )
    host_link_line_gbytes_per_s_per_direction: float | None = Field(
        None,
        gt=0,
        description="the GPU's host link itself, one direction, 10^9 B/s, where it is faster than the copies "
        "(a Grace superchip's NVLink-C2C, whose copies the Grace memory bounds); GPUDirect RDMA traffic of the "
        "NICs crosses this link beside the copies. None = the copy bandwidth (a PCIe link bounds both)",
    )
    default_node: str | None = None
    assumptions: list[str] = []


@dataclass(frozen=True)
class Accelerator:
    """One accelerator in SI units: FLOP/s, bytes, bytes/s, watts."""

    name: str
    vendor: str
    architecture: str
    peak_flops: dict[str, float]  # dense, per dtype
    hbm_bytes: float
    hbm_bandwidth: float
    scale_up_bandwidth: float  # per GPU, one direction
    scale_up_domains: tuple[int, ...]
    scale_up_link: str
    tdp_w: float
    idle_w: float
    default_node: str | None
    source: str
    notes: str = ""
    assumptions: tuple[str, ...] = ()
    aliases: tuple[str, ...] = field(default_factory=tuple)
    matmul_fraction: float = 0.8
    attention_fraction: float = 0.5
    attention_fraction_fa2: float = 0.5
    exp_rate: float | None = None  # special-function exp results/s (MUFU.EX2); None = not public
    # FP8 / BF16 fused-attention time per scaling: ((d_qk + d_v, forward, backward), ...)
    fp8_attention_time: dict[str, tuple[tuple[float, float, float], ...]] = field(default_factory=dict)
    fp8_gemm_any_layout: bool = False  # FP8 GEMMs in any operand layout (no transposed FP8 copy needed)
    host_link_bandwidth: float = PCIE5_X16_BYTES_PER_S  # GPU <-> host copies, one direction
    host_link_assumed: bool = True  # the catalog entry gives no host-link figure
    # the host link the copies share with the NICs' GPUDirect RDMA traffic, one direction (>= the copies')
    host_link_capacity: float = PCIE5_X16_BYTES_PER_S
    # achieved all-reduce busbw / scale-up link rate on this link technology; None = the calibration's
    scale_up_link_efficiency: float | None = None
    # NVLS all-reduce algbw / scale-up link rate on 8 ranks of this switch generation; None = NVLink 4's
    scale_up_nvls_efficiency: float | None = None

    @classmethod
    def from_entry(cls, e: AcceleratorEntry) -> Accelerator:
        gb = e.host_link_gbytes_per_s_per_direction
        copy_bw = PCIE5_X16_BYTES_PER_S if gb is None else gb * GIGA
        return cls(
            name=e.name,
            vendor=e.vendor,
            architecture=e.architecture,
            peak_flops={k: v * TERA for k, v in e.dense_tflops.items()},
            hbm_bytes=e.hbm_gib * GIB,
            hbm_bandwidth=e.hbm_tbytes_per_s * TERA,
            scale_up_bandwidth=e.scale_up_gbytes_per_s_per_direction * GIGA,
            scale_up_domains=tuple(e.scale_up_domains),
            scale_up_link=e.scale_up_link,
            tdp_w=e.tdp_w,
            idle_w=e.idle_w,
            default_node=e.default_node,
            source=e.source,
            notes=e.notes,
            assumptions=tuple(e.assumptions),
            aliases=tuple(e.aliases),
            matmul_fraction=e.matmul_fraction,
            attention_fraction=e.attention_fraction,
            attention_fraction_fa2=(
                e.attention_fraction if e.attention_fraction_fa2 is None else e.attention_fraction_fa2
            ),
            exp_rate=None if e.exp_tera_per_s is None else e.exp_tera_per_s * TERA,
            fp8_attention_time={k: tuple(sorted(v)) for k, v in e.fp8_attention_time.items()},
            fp8_gemm_any_layout=e.fp8_gemm_any_layout,
            host_link_bandwidth=copy_bw,
            host_link_assumed=gb is None,
            host_link_capacity=max(copy_bw, (e.host_link_line_gbytes_per_s_per_direction or 0.0) * GIGA),
            scale_up_link_efficiency=e.scale_up_link_efficiency,
            scale_up_nvls_efficiency=e.scale_up_nvls_efficiency,
        )

    def peak(self, dtype: str) -> float:
        """Dense peak FLOP/s for ``dtype``; fp8/fp4 fall back to the next wider type the chip has."""
        order = {"fp4": ("fp4", "fp8", "bf16"), "fp8": ("fp8", "bf16"), "fp32": ("fp32", "tf32")}
        for d in (*order.get(dtype, (dtype,)), "bf16", "fp16"):
            if d in self.peak_flops:
                return self.peak_flops[d]
        raise KeyError(dtype)

    def clock_fraction(self, power_limit_w: float | None) -> float:
        """Share of the datasheet tensor-core clock that a power limit below the TDP leaves.

        Dense GEMM training draws the board's TDP at full clock; the rest of the draw above idle is
        dynamic power, C·V²·f with the voltage scaling with the clock under DVFS, so it goes as f³
        (Hennessy & Patterson, Computer Architecture, 6th ed., Sec. 1.5). A limit at or above the TDP
        changes nothing; HBM bandwidth is a separate clock domain and is not scaled.
        """
        if power_limit_w is None or power_limit_w >= self.tdp_w:
            return 1.0
        if power_limit_w <= self.idle_w:
            raise ValueError(
                f"power limit {power_limit_w:g} W is at or below {self.name}'s idle draw {self.idle_w:g} W; "
                f"allowed: above {self.idle_w:g} W (TDP {self.tdp_w:g} W)"
            )
        return float(((power_limit_w - self.idle_w) / (self.tdp_w - self.idle_w)) ** (1.0 / 3.0))

    def has_native(self, dtype: str) -> bool:
        return dtype in self.peak_flops


# ---------------------------------------------------------------- server nodes
class NodeEntry(_Entry):
    vendor: str = ""
    accelerator: str
    gpus: PositiveInt
    cpus: PositiveInt = 2
    cpu_tdp_w: float = Field(gt=0, description="per CPU socket")
    host_memory_gib: float = Field(gt=0)
    scale_out_nics: int = Field(ge=0, description="NICs on the compute fabric")
    other_w: float = Field(ge=0, description="fans, NVSwitch, drives, DPUs, storage NICs, VR losses at full load")
    idle_other_w: float = Field(ge=0, description="the same at idle")
    max_power_w: float | None = Field(None, gt=0, description="published system maximum")
    rack_units: float | None = Field(None, gt=0)
    local_nvme_tb: float = Field(0.0, ge=0)
    storage_gbps: float = Field(0.0, ge=0, description="front-end/storage network per node, Gbit/s")


@dataclass(frozen=True)
class Node:
    name: str
    vendor: str
    accelerator: str
    gpus: int
    cpus: int
    cpu_tdp_w: float
    host_memory_bytes: float
    scale_out_nics: int
    other_w: float
    idle_other_w: float
    max_power_w: float | None
    rack_units: float | None
    local_nvme_bytes: float
    storage_bandwidth: float  # B/s
    source: str
    notes: str = ""
    aliases: tuple[str, ...] = ()

    @classmethod
    def from_entry(cls, e: NodeEntry) -> Node:
        return cls(
            name=e.name,
            vendor=e.vendor,
            accelerator=e.accelerator,
            gpus=e.gpus,
            cpus=e.cpus,
            cpu_tdp_w=e.cpu_tdp_w,
            host_memory_bytes=e.host_memory_gib * GIB,
            scale_out_nics=e.scale_out_nics,
            other_w=e.other_w,
            idle_other_w=e.idle_other_w,
            max_power_w=e.max_power_w,
            rack_units=e.rack_units,
            local_nvme_bytes=e.local_nvme_tb * TERA,
            storage_bandwidth=e.storage_gbps * GIGA / 8,
            source=e.source,
            notes=e.notes,
            aliases=tuple(e.aliases),
        )


# ---------------------------------------------------------------- network
class NicEntry(_Entry):
    vendor: str = ""
    protocol: Literal["infiniband", "roce", "ethernet", "vpi"]
    gbps: float = Field(gt=0)
    ports: PositiveInt = 1
    power_w: float = Field(gt=0)


@dataclass(frozen=True)
class Nic:
    name: str
    vendor: str
    protocol: str
    bandwidth: float  # B/s, all ports
    ports: int
    power_w: float
    source: str
    notes: str = ""
    aliases: tuple[str, ...] = ()

    @classmethod
    def from_entry(cls, e: NicEntry) -> Nic:
        return cls(
            e.name,
            e.vendor,
            e.protocol,
            e.gbps * GIGA / 8,
            e.ports,
            e.power_w,
            e.source,
            e.notes,
            tuple(e.aliases),
        )


class SwitchEntry(_Entry):
    vendor: str = ""
    protocol: Literal["infiniband", "ethernet", "nvlink"]
    ports: PositiveInt = Field(description="radix at port_gbps")
    port_gbps: float = Field(gt=0)
    power_w: float = Field(gt=0, description="typical/max with optics excluded")
    latency_ns: float = Field(gt=0)
    sharp: bool = False
    rack_units: float | None = None


@dataclass(frozen=True)
class Switch:
    name: str
    vendor: str
    protocol: str
    radix: int
    port_bandwidth: float  # B/s
    power_w: float
    latency_s: float
    sharp: bool
    source: str
    notes: str = ""
    aliases: tuple[str, ...] = ()

    @classmethod
    def from_entry(cls, e: SwitchEntry) -> Switch:
        return cls(
            e.name,
            e.vendor,
            e.protocol,
            e.ports,
            e.port_gbps * GIGA / 8,
            e.power_w,
            e.latency_ns * 1e-9,
            e.sharp,
            e.source,
            e.notes,
            tuple(e.aliases),
        )


class OpticEntry(_Entry):
    form_factor: str = ""
    gbps: float = Field(gt=0)
    reach_m: float = Field(gt=0)
    power_w: float = Field(gt=0)
    kind: Literal["optical", "aoc", "dac", "acc"] = "optical"


@dataclass(frozen=True)
class Optic:
    name: str
    form_factor: str
    bandwidth: float  # B/s
    reach_m: float
    power_w: float
    kind: str
    source: str
    notes: str = ""
    aliases: tuple[str, ...] = ()

    @classmethod
    def from_entry(cls, e: OpticEntry) -> Optic:
        return cls(
            e.name,
            e.form_factor,
            e.gbps * GIGA / 8,
            e.reach_m,
            e.power_w,
            e.kind,
            e.source,
            e.notes,
            tuple(e.aliases),
        )


# ---------------------------------------------------------------- storage
class StorageServerEntry(_Entry):
    vendor: str = ""
    kind: Literal["parallel_fs", "object", "nfs", "nvme"] = "parallel_fs"
    read_gbytes_per_s: float = Field(gt=0)
    write_gbytes_per_s: float = Field(gt=0)
    capacity_tb: float = Field(gt=0)
    power_w: float = Field(gt=0)
    rack_units: float | None = None


@dataclass(frozen=True)
class StorageServer:
    name: str
    vendor: str
    kind: str
    read_bandwidth: float  # B/s
    write_bandwidth: float  # B/s
    capacity_bytes: float
    power_w: float
    rack_units: float | None
    source: str
    notes: str = ""
    aliases: tuple[str, ...] = ()

    @classmethod
    def from_entry(cls, e: StorageServerEntry) -> StorageServer:
        return cls(
            e.name,
            e.vendor,
            e.kind,
            e.read_gbytes_per_s * GIGA,
            e.write_gbytes_per_s * GIGA,
            e.capacity_tb * TERA,
            e.power_w,
            e.rack_units,
            e.source,
            e.notes,
            tuple(e.aliases),
        )


# ---------------------------------------------------------------- scale-up fabrics (supernodes)
class ScaleUpFabricEntry(_Entry):
    """A scale-up domain described by its fabric: NVLink switch trays, a UB Clos, an HCCS/xGMI mesh."""

    vendor: str = ""
    kind: Literal["nvlink", "ub", "hccs", "xgmi", "mtlink"]
    topology: Literal["switched", "full_mesh"] = Field(
        description="switched: every GPU reaches every peer at its full bandwidth; full_mesh: one direct "
        "link per peer, so a GPU's bandwidth divides over its domain_size - 1 peers"
    )
    domain_size: PositiveInt = Field(le=100_000)
    gbytes_per_s_per_direction: float = Field(gt=0, description="per GPU, one direction, 10^9 B/s")
    first_tier_size: PositiveInt | None = Field(
        None, description="GPUs joined by the first switch tier (a node or a rack); None = the whole domain"
    )
    upper_tier_latency_us: float = Field(
        0.0, ge=0, le=100, description="latency a hop adds when it crosses the upper switch tier, µs"
    )
    upper_tier_bandwidth_fraction: float = Field(
        1.0, gt=0, le=1, description="per-GPU bandwidth across the upper tier / within the first tier"
    )
    in_switch_reduction: bool = Field(False, description="the switches reduce all-reduce data (NVLink SHARP)")
    accelerators: list[str] = Field(default_factory=list, description="catalog accelerators built with it")
    assumptions: list[str] = []


@dataclass(frozen=True)
class ScaleUpFabric:
    name: str
    vendor: str
    kind: str
    topology: str
    domain_size: int
    bandwidth: float  # B/s per GPU, one direction
    first_tier_size: int
    upper_tier_latency_s: float
    upper_tier_bandwidth_fraction: float
    in_switch_reduction: bool
    accelerators: tuple[str, ...]
    source: str
    notes: str = ""
    assumptions: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()

    @classmethod
    def from_entry(cls, e: ScaleUpFabricEntry) -> ScaleUpFabric:
        first = e.first_tier_size or e.domain_size
        if first > e.domain_size or e.domain_size % first:
            raise ValueError(f"first_tier_size = {first} must divide domain_size = {e.domain_size}")
        if e.topology == "full_mesh" and first != e.domain_size:
            raise ValueError("a full_mesh has one tier: first_tier_size must equal domain_size")
        return cls(
            e.name,
            e.vendor,
            e.kind,
            e.topology,
            e.domain_size,
            e.gbytes_per_s_per_direction * GIGA,
            first,
            e.upper_tier_latency_us * 1e-6,
            e.upper_tier_bandwidth_fraction,
            e.in_switch_reduction,
            tuple(e.accelerators),
            e.source,
            e.notes,
            tuple(e.assumptions),
            tuple(e.aliases),
        )
