"""What the engine needs from a scenario, resolved once: hardware peaks, model shapes, batch.

A :class:`Context` is independent of the parallel strategy, so one context serves a batch of
thousands of strategies (:func:`wanka.engine.estimate_many`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wanka.calibration import Calibration, default_calibration
from wanka.catalog import Accelerator, accelerator, node_or_default
from wanka.catalog.software import PipelineSplits, cudnn_frontend_version, kernel_time_factor, pipeline_splits
from wanka.errors import InfeasibleError, SpecError
from wanka.network.groups import fabric_slowdowns, scale_out_bw, scale_up_bw
from wanka.spec.cluster import ClusterSpec
from wanka.spec.model import ModelSpec
from wanka.spec.scenario import Scenario
from wanka.spec.training import TrainingSpec
from wanka.workload import (
    Gemm,
    ParamCount,
    activation_elems_per_token,
    attention_core_flops_per_token,
    attention_key_spans,
    eager_mlp_elems_per_token,
    eager_rope_elems_per_token,
    elementwise_elems_per_token,
    expert_bias_fp32_probs_bytes_per_token,
    gemm_input_elems_per_token,
    kv_width_per_layer,
    layer_gemms,
    logit_gemm,
    model_flops_per_token,
    parameter_count,
    routed_activation_elems_per_token,
    selective_recompute_elems_per_token,
)

__all__ = ["Context", "make_context"]


@dataclass(frozen=True)
class Context:
    """Strategy-independent inputs of the step model (SI units)."""

    model: ModelSpec
    cluster: ClusterSpec
    training: TrainingSpec
    acc: Accelerator
    gpus: int
    seq_len: int
    global_batch_seqs: int
    precision: str
    gemm_peak: float  # FLOP/s for weight GEMMs at the training precision
    bf16_peak: float  # attention core and anything not run in fp8
    mfu_peak: float  # the peak MFU is quoted against (the training precision's dense peak)
    fp8: bool
    act_bytes: float  # bytes per activation element (bf16/fp16: 2)
    hbm_bw: float
    hbm_bytes: float
    scale_up_bw: float
    scale_out_bw: float
    params: ParamCount
    dense_gemms: tuple[Gemm, ...]
    moe_gemms: tuple[Gemm, ...]
    logits: Gemm
    attn_flops_per_token: float  # forward, non-causal
    attn_key_spans: tuple[tuple[float, float], ...]  # (share of attn FLOPs, key span) per softmax kind
    # the same for a kernel that runs sliding layers over their whole causal triangle (FP8 backward)
    attn_flops_per_token_unbanded: float
    attn_key_spans_unbanded: tuple[tuple[float, float], ...]
    kv_width: float  # d_qk + d_v per head, over the layers that exchange K/V in context parallelism
    elem_dense: float
    elem_moe: float
    act_dense: float
    act_moe: float
    sel_dense: tuple[float, float]  # selective recompute with fused attention: (dropped, re-read) elements
    sel_moe: tuple[float, float]
    model_flops_per_token: float
    n_dense_layers: int
    n_moe_layers: int
    ring_contention: float  # fabric slowdown of ring collectives (flow model)
    a2a_contention: float  # fabric slowdown of all-to-all (flow model)
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    cal: Calibration = field(default_factory=default_calibration)  # the global constants used
    # elements per token of one layer saved only as a GEMM input (kept in FP8 with FP8 GEMMs)
    gemm_in_dense: float = 0.0
    gemm_in_moe: float = 0.0
    # the FFN clamp's and expert biases' eager kernels: (forward-equivalent traffic, stored) elements
    eager_mlp_dense: tuple[float, float] = (0.0, 0.0)
    eager_mlp_moe: tuple[float, float] = (0.0, 0.0)
    # routed experts' gated activation, forward elements per token (routed_activation_elems_per_token)
    act_routed_moe: float = 0.0
    # an unfused (YaRN-scaled) rotary embedding's excess traffic per token, and the fp32-probability excess
    # bytes of the eager expert bias (workload.eager_rope_elems_per_token, expert_bias_fp32_probs_bytes_per_token)
    eager_rope: float = 0.0
    eager_bias_fp32_moe: float = 0.0
    # the pipeline splits the scenario's software release can build (feasibility rules; current by default)
    splits: PipelineSplits = field(default_factory=pipeline_splits)
    # time factor of the fused grouped MLP's FC2-dgrad + dGLU kernel when FC1 has a bias, from the cuDNN frontend
    # the software pins (catalog kernel_regressions; 1 = no published regression)
    dglu_dbias_factor: float = 1.0
    # host memory (DRAM, or a Grace superchip's LPDDR5X) per GPU: the node's, shared by its GPUs; what
    # activation offload may fill (inf where the cluster names no catalog node and its accelerator none)
    host_memory_per_gpu: float = float("inf")

    @property
    def hbm_usable(self) -> float:
        """HBM a process can allocate (the driver keeps a share): the capacity ``fits`` is judged by."""
        return self.hbm_bytes * self.cal.usable_hbm_fraction


def _host_memory_per_gpu(cluster: ClusterSpec, acc: Accelerator) -> float:
    """The node's host memory over the GPUs that share it (its catalog node, else the accelerator's
    default node; inf when neither is known)."""
    nd = node_or_default(cluster.node, acc.name)
    return nd.host_memory_bytes / cluster.gpus_per_node if nd is not None else float("inf")


def make_context(scenario: Scenario, cal: Calibration | None = None) -> Context:
    """Resolve a scenario's model, cluster and training into a :class:`Context`.

    ``cal`` is the calibration the engine uses (default: the shipped ``data/calibration.yaml``).
    """
    if scenario.model is None or scenario.training is None:
        raise InfeasibleError(f"scenario {scenario.name!r} has no training job; add `model:` and `training:` sections")
    model, cluster, training = scenario.model, scenario.cluster, scenario.training
    acc = accelerator(cluster.accelerator)
    s = scenario.seq_len
    notes: list[str] = []
    prec = training.precision
    act_bytes = 4.0 if prec == "fp32" else 2.0
    fp8 = prec in ("fp8", "fp4") and acc.has_native(prec)
    if prec in ("fp8", "fp4") and not fp8:
        notes.append(f"{acc.name} has no native {prec}: GEMMs run at its bf16/fp16 peak")
    half = acc.peak("bf16") if "bf16" in acc.peak_flops else acc.peak("fp16")
    if prec in ("fp32", "tf32"):
        gemm_peak = acc.peak("tf32")
        half = gemm_peak
    else:
        gemm_peak = acc.peak(prec) if fp8 else half
    # a power limit below the TDP lowers the tensor-core clock; MFU stays quoted against the datasheet
    mfu_peak = gemm_peak
    try:
        clock = acc.clock_fraction(cluster.power_limit_w)
    except ValueError as e:
        raise SpecError(str(e), field="cluster.power_limit_w") from None
    if clock < 1.0:
        gemm_peak, half = gemm_peak * clock, half * clock
        notes.append(
            f"power limit {cluster.power_limit_w:g} W of {acc.tdp_w:g} W TDP: tensor-core clock at {clock:.0%} "
            "(dynamic power ~ f^3 above the idle draw)"
        )
    params = parameter_count(model)
    ring_c, a2a_c, note = fabric_slowdowns(cluster, all_to_all=model.moe is not None)
    if note:
        notes.append(note)
    dglu, dglu_note = _dglu_dbias(scenario, model)
    if dglu_note and training.precision_recipe == "mxfp8":  # the fused grouped MLP runs only under MXFP8
        notes.append(dglu_note)
    n_dense, n_moe = model.stack_layers
    return Context(
        model=model,
        cluster=cluster,
        training=training,
        acc=acc,
        gpus=scenario.gpus,
        seq_len=s,
        global_batch_seqs=training.global_batch_seqs,
        precision=prec,
        gemm_peak=gemm_peak,
        bf16_peak=half,
        mfu_peak=mfu_peak,
        fp8=fp8,
        act_bytes=act_bytes,
        hbm_bw=acc.hbm_bandwidth,
        hbm_bytes=acc.hbm_bytes,
        scale_up_bw=scale_up_bw(cluster),
        scale_out_bw=scale_out_bw(cluster),
        params=params,
        dense_gemms=tuple(layer_gemms(model, "dense")),
        moe_gemms=tuple(layer_gemms(model, "moe")) if model.moe is not None else (),
        logits=logit_gemm(model),
        attn_flops_per_token=attention_core_flops_per_token(model, s),
        attn_key_spans=attention_key_spans(model, s),
        attn_flops_per_token_unbanded=attention_core_flops_per_token(model, s, banded=False),
        attn_key_spans_unbanded=attention_key_spans(model, s, banded=False),
        kv_width=kv_width_per_layer(model),
        elem_dense=elementwise_elems_per_token(model, "dense"),
        elem_moe=elementwise_elems_per_token(model, "moe") if model.moe is not None else 0.0,
        act_dense=activation_elems_per_token(model, "dense"),
        act_moe=activation_elems_per_token(model, "moe") if model.moe is not None else 0.0,
        sel_dense=selective_recompute_elems_per_token(model, "dense"),
        sel_moe=selective_recompute_elems_per_token(model, "moe") if model.moe is not None else (0.0, 0.0),
        model_flops_per_token=model_flops_per_token(model, s),
        n_dense_layers=n_dense,
        n_moe_layers=n_moe,
        ring_contention=ring_c,
        a2a_contention=a2a_c,
        assumptions=tuple(notes),
        cal=default_calibration() if cal is None else cal,
        gemm_in_dense=gemm_input_elems_per_token(model, "dense"),
        gemm_in_moe=gemm_input_elems_per_token(model, "moe") if model.moe is not None else 0.0,
        eager_mlp_dense=eager_mlp_elems_per_token(model, "dense"),
        eager_mlp_moe=eager_mlp_elems_per_token(model, "moe") if model.moe is not None else (0.0, 0.0),
        eager_rope=eager_rope_elems_per_token(model),
        act_routed_moe=routed_activation_elems_per_token(model),
        eager_bias_fp32_moe=expert_bias_fp32_probs_bytes_per_token(model, "moe", act_bytes),
        splits=_splits(scenario),
        dglu_dbias_factor=dglu,
        host_memory_per_gpu=_host_memory_per_gpu(cluster, acc),
    )


def _dglu_dbias(scenario: Scenario, model: ModelSpec) -> tuple[float, str | None]:
    """The fused grouped MLP's FC2-dgrad + dGLU kernel time factor where the routed experts' FC1 has a bias
    (the kernel then reduces the bias gradient) under the cuDNN frontend the software pins, or that the
    scenario's ``software.cudnn_frontend`` names; with a note naming the version and the regression's source."""
    sw = scenario.software
    if sw is None or model.moe is None or not model.moe.expert_bias:
        return 1.0, None
    version = sw.cudnn_frontend or cudnn_frontend_version(sw.framework, sw.release)[0]
    factor, source = kernel_time_factor("grouped_gemm_dglu_dbias", version)
    if source is None:
        return 1.0, None
    note = (
        f"cuDNN frontend {version}: the MXFP8 fused grouped MLP's FC2-dgrad + dGLU kernel with the experts' FC1 "
        f"bias runs {factor:.2f}x its time once fixed ({source.split(' (')[0]})"
    )
    return factor, note


def _splits(scenario: Scenario) -> PipelineSplits:
    """The pipeline splits of the scenario's software release (no ``software:``: the current release)."""
    sw = scenario.software
    return pipeline_splits() if sw is None else pipeline_splits(sw.framework, sw.release)
