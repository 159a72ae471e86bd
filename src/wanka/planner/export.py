"""Launch arguments of a scenario's strategy in a framework's own names: Megatron-LM (``pretrain_gpt.py``
flags) and NeMo 2.0 (``nemo llm pretrain`` recipe overrides).

Names follow Megatron-LM's ``megatron/training/arguments.py`` (core_r0.12) and NeMo 2.0's
``MegatronStrategy`` / ``MegatronOptimizerModule`` / ``PreTrainingDataModule`` fields. Data-parallel
size is never an argument in either: it is the world size over tp·pp·cp.
"""

from __future__ import annotations

import math

from wanka.errors import SpecError
from wanka.spec import Scenario

__all__ = ["EXPORT_FORMATS", "launch_args"]

EXPORT_FORMATS = ("megatron", "nemo")


def _iters(sc: Scenario) -> int:
    assert sc.training is not None
    return max(1, math.ceil(sc.training.tokens / (sc.training.global_batch_seqs * sc.seq_len)))


def _cp_a2a(sc: Scenario) -> int:
    """The all-to-all group of hierarchical CP: as given, or the cp ranks of one scale-up domain (the
    engine's rule, :func:`wanka.engine.feasibility.cp_a2a_size`)."""
    p = sc.parallel
    assert p is not None
    if p.cp_a2a_size:
        return p.cp_a2a_size
    return math.gcd(p.cp, min(p.cp, max(1, sc.cluster.scale_up.domain_size // p.tp)))


# CUDA graphs that leave the MoE block eager (``cuda_graphs_moe: false``): Transformer Engine graphs of
# the attention, the router and the dispatcher's preprocessing (Megatron-Core 0.14+ ``--cuda-graph-impl
# transformer_engine --cuda-graph-scope``, as Megatron-Bridge's GPT-OSS GB300 / B300 presets set them)
_PARTIAL_SCOPE = ("attn", "moe_router", "moe_preprocess")


def _partial_graphs(sc: Scenario) -> bool:
    p, m = sc.parallel, sc.model
    assert p is not None and m is not None
    return not p.cuda_graphs_moe and m.moe is not None


def _full_recompute(sc: Scenario) -> tuple[str, int] | None:
    """Megatron-Core's method and layer count of full recompute: ``uniform`` over one-layer groups for
    every layer, ``block`` for the first ``recompute_layers`` of each model chunk; None when no layer is
    recomputed in full (recompute none or selective, or ``recompute_layers`` 0)."""
    p = sc.parallel
    assert p is not None
    if p.recompute != "full" or p.recompute_layers == 0:
        return None
    return ("uniform", 1) if p.recompute_layers is None else ("block", p.recompute_layers)


def _megatron(sc: Scenario) -> list[str]:
    m, t, p = sc.model, sc.training, sc.parallel
    assert m is not None and t is not None and p is not None
    a = [
        f"--tensor-model-parallel-size {p.tp}",
        f"--pipeline-model-parallel-size {p.pp}",
    ]
    if p.vpp > 1:
        a.append(f"--num-layers-per-virtual-pipeline-stage {max(1, m.n_layers // (p.pp * p.vpp))}")
    if p.cp > 1:
        a += [f"--context-parallel-size {p.cp}", f"--cp-comm-type {p.cp_comm_type}"]
        if p.cp_comm_type == "a2a+p2p":
            inner = _cp_a2a(sc)
            a.append(f"--hierarchical-context-parallel-sizes {inner} {p.cp // inner}")
    if m.moe is not None:
        a += [
            f"--expert-model-parallel-size {p.ep}",
            f"--num-experts {m.moe.n_experts}",
            f"--moe-router-topk {m.moe.top_k}",
            f"--moe-ffn-hidden-size {m.moe.expert_ffn_hidden}",
        ]
        if m.moe.n_shared_experts:
            a.append(f"--moe-shared-expert-intermediate-size {m.moe.n_shared_experts * m.moe.expert_ffn_hidden}")
            if p.ep_shared_overlap:
                a.append("--moe-shared-expert-overlap")
        if p.ep_dispatch == "deepep":
            a += ["--moe-token-dispatcher-type flex", "--moe-enable-deepep"]
        elif p.ep_dispatch == "hybridep":
            # Megatron-Core's flex dispatcher backend (TransformerConfig.moe_flex_dispatcher_backend)
            a += ["--moe-token-dispatcher-type flex", "--moe-flex-dispatcher-backend hybridep"]
        else:
            a.append("--moe-token-dispatcher-type alltoall")
    if p.sp and p.tp > 1:
        a.append("--sequence-parallel")
    if p.zero >= 3:
        a.append("--use-torch-fsdp2")
    elif p.zero >= 1:
        a.append("--use-distributed-optimizer")
    if p.recompute == "selective":
        a.append("--recompute-granularity selective")
    elif full := _full_recompute(sc):
        a += ["--recompute-granularity full", f"--recompute-method {full[0]}", f"--recompute-num-layers {full[1]}"]
    if p.offload_layers:
        # Megatron-Core ModelParallelConfig.cpu_offloading_num_layers (its flag; arguments.py turns
        # cpu_offloading on when it is > 0): the first N layers' saved activations go to host memory
        a.append(f"--cpu-offloading-num-layers {p.offload_layers}")
    if p.tp_comm_overlap and p.tp > 1:
        a.append("--tp-comm-overlap")
    muon = t.optimizer == "muon"
    if muon:
        # Megatron-LM arguments.py: --optimizer muon with --use-distributed-optimizer runs the layer-wise
        # distributed optimizer (the engine times its parameter all-gather exposed, as Megatron-Bridge's
        # Muon presets run it with overlap_param_gather False)
        a.append("--optimizer muon")
    if p.dp_comm_overlap:
        a += ["--overlap-grad-reduce"] if muon else ["--overlap-grad-reduce", "--overlap-param-gather"]
    if p.flash_attention:
        a.append("--use-flash-attn")
    if p.cuda_graphs and _partial_graphs(sc):
        a += ["--cuda-graph-impl transformer_engine", f"--cuda-graph-scope {' '.join(_PARTIAL_SCOPE)}"]
    elif p.cuda_graphs:
        a.append("--enable-cuda-graph")
    a += [
        f"--micro-batch-size {t.micro_batch}",
        f"--global-batch-size {t.global_batch_seqs}",
        f"--seq-length {sc.seq_len}",
        f"--max-position-embeddings {max(sc.seq_len, m.seq_len)}",
        f"--num-layers {m.n_layers}",
        f"--hidden-size {m.hidden}",
        f"--ffn-hidden-size {m.ffn_hidden}",
        f"--num-attention-heads {m.n_heads}",
    ]
    if m.n_kv_heads != m.n_heads:
        a += ["--group-query-attention", f"--num-query-groups {m.n_kv_heads}"]
    if m.head_dim is not None:
        a.append(f"--kv-channels {m.head_dim}")
    if m.ffn_act == "swiglu":
        a.append("--swiglu")
    if not m.tied_embeddings:
        a.append("--untie-embeddings-and-output-weights")
    if t.precision in ("bf16", "fp8", "fp4"):
        a.append("--bf16")
    elif t.precision == "fp16":
        a.append("--fp16")
    if t.precision == "fp8":
        a += ["--fp8-format hybrid"] + (["--fp8-recipe mxfp8"] if t.precision_recipe == "mxfp8" else [])
        if p.fp8_param_gather:
            # FP8 parameters (megatron/training/arguments.py --fp8-param-gather); under MXFP8 Megatron-Core
            # gathers them through the gradient buffer, which needs --reuse-grad-buf-for-mxfp8-param-ag
            # (Megatron-Bridge's bf16_with_mxfp8_mixed sets both)
            a.append("--fp8-param-gather")
            if t.precision_recipe == "mxfp8":
                a.append("--reuse-grad-buf-for-mxfp8-param-ag")
    a.append(f"--train-iters {_iters(sc)}")
    return a


def _nemo(sc: Scenario) -> list[str]:
    m, t, p = sc.model, sc.training, sc.parallel
    assert m is not None and t is not None and p is not None
    s = "trainer.strategy"
    a = [
        f"{s}.tensor_model_parallel_size={p.tp}",
        f"{s}.pipeline_model_parallel_size={p.pp}",
        f"{s}.virtual_pipeline_model_parallel_size={p.vpp if p.vpp > 1 else 'null'}",
        f"{s}.context_parallel_size={p.cp}",
        f"{s}.expert_model_parallel_size={p.ep}",
        f"{s}.sequence_parallel={'true' if p.sp and p.tp > 1 else 'false'}",
        f"optim.config.use_distributed_optimizer={'true' if p.zero >= 1 and t.optimizer == 'adam' else 'false'}",
        f"data.micro_batch_size={t.micro_batch}",
        f"data.global_batch_size={t.global_batch_seqs}",
        f"data.seq_length={sc.seq_len}",
        f"trainer.max_steps={_iters(sc)}",
        f"trainer.num_nodes={math.ceil(sc.gpus / sc.cluster.gpus_per_node)}",
        f"trainer.devices={min(sc.gpus, sc.cluster.gpus_per_node)}",
        "trainer.plugins.precision=" + ("16-mixed" if t.precision == "fp16" else "bf16-mixed"),
    ]
    if t.optimizer == "muon":
        # Megatron-Bridge: optimizer "dist_muon" is Muon under the layer-wise distributed optimizer, with
        # use_distributed_optimizer off (recipes/kimi/kimi_k2.py, v0.5.0)
        a.append(f"optim.config.optimizer={'dist_muon' if p.zero >= 1 else 'muon'}")
    if p.cp > 1:
        a.append(f"model.config.cp_comm_type={p.cp_comm_type}")
        if p.cp_comm_type == "a2a+p2p":
            inner = _cp_a2a(sc)
            a.append(f"model.config.hierarchical_context_parallel_sizes=[{inner},{p.cp // inner}]")
    if p.zero >= 3:
        a.append(f"{s}.fsdp=megatron")
    if p.recompute == "selective":
        a.append("model.config.recompute_granularity=selective")
    elif full := _full_recompute(sc):
        a += [
            "model.config.recompute_granularity=full",
            f"model.config.recompute_method={full[0]}",
            f"model.config.recompute_num_layers={full[1]}",
        ]
    if p.offload_layers:
        # Megatron-Bridge scripts/performance/utils/overrides.py (--activation_offload_layers): activations
        # only, not weights
        a += [
            "model.config.cpu_offloading=true",
            "model.config.cpu_offloading_weights=false",
            f"model.config.cpu_offloading_num_layers={p.offload_layers}",
        ]
    if p.ep_shared_overlap and m.moe is not None and m.moe.n_shared_experts:
        a.append("model.config.moe_shared_expert_overlap=true")
    if p.tp_comm_overlap and p.tp > 1:
        a.append("model.config.tp_comm_overlap=true")
    if p.dp_comm_overlap:
        a += [f"{s}.ddp.overlap_grad_reduce=true", f"{s}.ddp.overlap_param_gather=true"]
    if t.precision == "fp8":
        a += ["trainer.plugins.fp8=hybrid"] + (
            ["trainer.plugins.fp8_recipe=mxfp8"] if t.precision_recipe == "mxfp8" else []
        )
        # NeMo 2.0's MegatronMixedPrecision plugin takes fp8_param_gather (its FP8 presets set it)
        a.append(f"trainer.plugins.fp8_param_gather={'true' if p.fp8_param_gather else 'false'}")
    if p.cuda_graphs and _partial_graphs(sc):
        a += [
            "model.config.cuda_graph_impl=transformer_engine",
            f"model.config.cuda_graph_scope=[{','.join(_PARTIAL_SCOPE)}]",
        ]
    elif p.cuda_graphs:
        a.append("model.config.enable_cuda_graph=true")
    return a


def launch_args(scenario: Scenario, framework: str) -> list[str]:
    """The strategy, batch, model shape and precision as ``framework`` arguments (one per item)."""
    if framework not in EXPORT_FORMATS:
        raise SpecError(f"= {framework!r} — must be one of {', '.join(EXPORT_FORMATS)}", field="--export")
    if scenario.parallel is None or scenario.training is None or scenario.model is None:
        raise SpecError("the scenario has no training job to export (model, training)", field="--export")
    schedule = scenario.parallel.pp_schedule
    if schedule != "1f1b" and scenario.parallel.pp > 1:
        # Megatron-LM and NeMo run 1F1B (interleaved with vpp > 1); DualPipe is DeepSeek's HAI-LLM and
        # deepseek-ai/DualPipe, ZB-H1 sail-sg/zero-bubble-pipeline-parallelism (and Megatron-DeepSpeed's examples)
        raise SpecError(
            f"= {schedule!r} has no {framework} launch argument (Megatron-LM and NeMo run 1F1B, interleaved "
            "with vpp > 1); set pp_schedule 1f1b to export this layout",
            field="parallel.pp_schedule",
        )
    return _megatron(scenario) if framework == "megatron" else _nemo(scenario)
