"""Cluster specs (基础设施层): accelerators, nodes, scale-up domains, scale-out fabric, storage."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PositiveInt, model_validator

from wanka.spec.base import FieldError, Spec

__all__ = ["ClusterSpec", "FabricSpec", "ScaleUpSpec", "StorageSpec"]

MAX_ACCELERATORS = 2_000_000  # the largest cluster wanka accepts; 10^12 GPUs is a typo, not a plan


class ScaleUpSpec(Spec):
    """GPUs joined by NVLink/HCCS-class links: an 8-GPU board, an NVL72 rack, a 384-NPU supernode.

    ``fabric`` names a catalog scale-up fabric (``wanka catalog --kind scale_up_fabrics``): its domain
    size, per-GPU bandwidth, switch reduction, topology (switched or full mesh) and upper-tier latency
    and taper. ``domain_size``, ``gbytes_per_s_per_direction`` and ``in_switch_reduction`` given here
    override the fabric's. Without a fabric a domain is ``domain_size`` GPUs on one switched tier at the
    accelerator's catalog bandwidth (the behaviour of scenarios written before fabrics existed).
    """

    fabric: str | None = Field(
        None,
        description="catalog scale-up fabric (NVL72, NVL576, UB-CloudMatrix384, UB-node-8, HCCS-910B-mesh-8, "
        "xGMI-MI300X-mesh-8, ...); None = domain_size GPUs, one switched tier, the accelerator's bandwidth",
    )
    domain_size: PositiveInt = Field(
        8, le=100_000, description="GPUs per scale-up domain; not given = the fabric's (else 8)"
    )
    gbytes_per_s_per_direction: float | None = Field(
        None, gt=0, le=100_000, description="per GPU; None = the fabric's, else the accelerator's catalog value"
    )
    in_switch_reduction: bool = Field(
        False,
        description="NVLink SHARP (NVLS): the NVSwitch reduces all-reduce data (NVSwitch gen 3+); "
        "not given = the fabric's",
    )
    link_efficiency: float | None = Field(
        None,
        gt=0,
        le=1.0,
        description="measured ring busbw / link rate inside the domain (wanka collective --calibrate); "
        "None = the accelerator's link technology (catalog scale_up_link_efficiency), else the "
        "calibration's scale_up_efficiency",
    )
    nvls_efficiency: float | None = Field(
        None,
        gt=0,
        le=1.0,
        description="measured NVLS all-reduce algbw / link rate (wanka collective --calibrate); None = the model's",
    )

    @model_validator(mode="before")
    @classmethod
    def _from_fabric(cls, data: Any) -> Any:
        """Fill the domain size and switch reduction from the named fabric where the spec leaves them."""
        if not isinstance(data, dict) or data.get("fabric") is None:
            return data
        from wanka.catalog import catalog

        name = data["fabric"]
        table = catalog().scale_up_fabrics
        if not isinstance(name, str) or name not in table:
            known = ", ".join(f.name for f in table)
            raise FieldError("fabric", f"fabric = {name!r} is not a catalog scale-up fabric; known: {known}")
        fab = table[name]
        out = dict(data)
        out["fabric"] = fab.name
        out.setdefault("domain_size", fab.domain_size)
        out.setdefault("in_switch_reduction", fab.in_switch_reduction)
        return out


class FabricSpec(Spec):
    """The scale-out network (RDMA over InfiniBand or RoCE)."""

    kind: Literal["infiniband", "roce", "ethernet"] = "infiniband"
    tiers: int = Field(2, ge=1, le=4)
    oversubscription: float = Field(1.0, ge=1.0, le=64.0, description="downlink:uplink ratio at the leaf")
    spine_oversubscription: float = Field(
        1.0,
        ge=1.0,
        le=64.0,
        description="downlink:uplink ratio at the spine (3 tiers): what the pods share of the core/aggregation "
        "layer (Meta's RoCE cluster: 7)",
    )
    gpus_per_leaf: PositiveInt | None = Field(
        None, le=100_000, description="GPUs under one leaf (ToR); None = as many as the leaf's down-ports take"
    )
    gpus_per_pod: PositiveInt | None = Field(
        None, le=2_000_000, description="GPUs per pod (3 tiers); None = as many as a spine's down-ports take"
    )
    spine_switch: str | None = Field(None, description="catalog switch of the spine tier; None = fabric.switch")
    core_switch: str | None = Field(None, description="catalog switch of the core tier; None = fabric.switch")
    nic_gbps_per_gpu: float = Field(400.0, gt=0, le=100_000)
    rail_optimized: bool = True
    planes: PositiveInt = Field(1, le=16)
    switch: str | None = Field(None, description="catalog switch name; None = a typical one for the kind")
    nic: str | None = Field(None, description="catalog NIC name; None = a typical one for the speed and kind")
    sharp: bool = Field(False, description="in-network reduction (InfiniBand SHARP) available")
    routing: Literal["ecmp", "adaptive"] | None = Field(
        None, description="None = adaptive for InfiniBand, ECMP for RoCE/Ethernet"
    )
    qps_per_connection: int = Field(
        1, ge=1, le=64, description="separately hashed flows per connection (NCCL_IB_QPS_PER_CONNECTION)"
    )
    link_efficiency: float | None = Field(
        None,
        gt=0,
        le=1.0,
        description="measured busbw / NIC line rate per GPU (wanka collective --calibrate); "
        "None = calibration.SCALE_OUT_EFFICIENCY",
    )


class StorageSpec(Spec):
    """Shared parallel file system (and optional local NVMe) serving checkpoints and training data."""

    kind: Literal["parallel_fs", "object", "nfs"] = "parallel_fs"
    servers: PositiveInt = Field(16, le=100_000)
    server: str | None = Field(None, description="catalog storage building block; None = generic")
    read_gbytes_per_s_per_server: float | None = Field(None, gt=0, le=10_000)
    write_gbytes_per_s_per_server: float | None = Field(None, gt=0, le=10_000)
    capacity_tb: float | None = Field(None, gt=0)
    local_nvme_tb_per_node: float = Field(0.0, ge=0)
    share: float = Field(
        1.0, gt=0, le=1, description="share of a shared file system that serves this cluster (power, bandwidth)"
    )


class ClusterSpec(Spec):
    """A training cluster: what hardware, how many, how joined."""

    name: str = "custom"
    accelerator: str
    nodes: PositiveInt = Field(le=MAX_ACCELERATORS)
    gpus_per_node: PositiveInt = Field(8, le=256)
    node: str | None = Field(None, description="catalog server platform; None = the accelerator's default")
    power_limit_w: float | None = Field(
        None,
        gt=0,
        le=10_000,
        description="power limit set on each accelerator (nvidia-smi -pl), W; None = the catalog TDP. Below the "
        "TDP the tensor-core clock drops to fit it (dynamic power ~ f^3)",
    )
    scale_up: ScaleUpSpec = ScaleUpSpec()
    fabric: FabricSpec = FabricSpec()
    storage: StorageSpec = StorageSpec()

    @model_validator(mode="after")
    def _check(self) -> ClusterSpec:
        if self.nodes * self.gpus_per_node > MAX_ACCELERATORS:
            raise FieldError(
                "nodes",
                f"nodes × gpus_per_node = {self.nodes * self.gpus_per_node:,} accelerators; "
                f"at most {MAX_ACCELERATORS:,} are allowed",
            )
        d = self.scale_up.domain_size
        if d > self.gpus_per_node and d % self.gpus_per_node:
            raise FieldError(
                "scale_up.domain_size",
                f"scale_up.domain_size = {d} must be a multiple of gpus_per_node = {self.gpus_per_node}",
            )
        if d < self.gpus_per_node and self.gpus_per_node % d:
            raise FieldError(
                "scale_up.domain_size", f"scale_up.domain_size = {d} must divide gpus_per_node = {self.gpus_per_node}"
            )
        return self

    @property
    def accelerators(self) -> int:
        return self.nodes * self.gpus_per_node
