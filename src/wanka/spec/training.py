"""Training job and parallel strategy specs."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveInt, model_validator

from wanka.spec.base import FieldError, Spec

__all__ = ["CpCommType", "ParallelSpec", "Precision", "Recompute", "TrainingSpec"]

Precision = Literal["fp32", "tf32", "fp16", "bf16", "fp8", "fp4"]
Recompute = Literal["none", "selective", "full"]
CpCommType = Literal["p2p", "all_gather", "a2a", "a2a+p2p"]


class TrainingSpec(Spec):
    """What to train: tokens, batch, precision."""

    tokens: float = Field(1e12, gt=0, le=1e17, description="tokens to train on")
    global_batch_seqs: PositiveInt = Field(le=100_000_000)
    micro_batch: PositiveInt = Field(1, le=65_536)
    seq_len: PositiveInt | None = Field(None, description="None = the model's seq_len")
    precision: Precision = "bf16"
    precision_recipe: (
        Literal["fp8_current_scaling", "fp8_delayed_scaling", "mxfp8", "fp8_blockwise", "fp8_unspecified"] | None
    ) = None
    optimizer: Literal["adam", "muon"] = Field(
        "adam",
        description="adam = AdamW on every parameter (fp32 master, two moments); muon = Muon on the 2-D hidden "
        "matrices (momentum, then 5 Newton-Schulz iterations in BF16, each matrix orthogonalized whole on one "
        "data-parallel rank) and AdamW on embeddings, LM head and norms, as Megatron-Core runs it (emerging "
        "optimizers; with zero 1 its layer-wise distributed optimizer: gradients all-reduced, updated "
        "parameters all-gathered after the step; zero 0 every rank runs the whole step)",
    )


class ParallelSpec(Spec):
    """A parallel strategy (Megatron-LM vocabulary). tp·pp·dp·cp must equal the job's GPU count."""

    tp: PositiveInt = 1
    sp: bool = Field(True, description="sequence parallelism alongside tp (Korthikanti et al. 2022)")
    pp: PositiveInt = 1
    vpp: PositiveInt = Field(1, description="virtual stages per pipeline rank (interleaved 1F1B)")
    dp: PositiveInt = 1
    cp: PositiveInt = 1
    cp_comm_type: CpCommType = Field(
        "p2p",
        description="how context-parallel attention exchanges K/V (Megatron-Core / Transformer Engine "
        "cp_comm_type): p2p = ring of K/V blocks overlapped with attention; all_gather = all-gather K/V "
        "then attend, exposed (Llama 3 paper Sec. 3.3.2); a2a = DeepSpeed-Ulysses all-to-all of Q/K/V/O "
        "heads, exposed, needs attention and KV heads per tp rank divisible by cp; a2a+p2p = all-to-all "
        "inside groups of cp_a2a_size ranks, ring across them (hierarchical CP)",
    )
    cp_a2a_size: PositiveInt | None = Field(
        None,
        description="a2a+p2p only: ranks of the inner all-to-all group (Megatron-Core "
        "hierarchical_context_parallel_sizes[0]); must divide cp. None = the cp ranks that share one "
        "scale-up domain",
    )
    ep: PositiveInt = Field(
        1,
        description="expert parallel group: inside dp·cp (experts split over tp like dense layers), or "
        "beyond it, folded over the tp ranks with whole experts (Megatron-Core MoE parallel folding)",
    )
    zero: int = Field(1, ge=0, le=3, description="0 none, 1 distributed optimizer, 2 +grads, 3 +params (FSDP)")
    zero_shard_group: PositiveInt | None = Field(
        None,
        description="ranks a ZeRO stage shards over: states sharded inside groups of this many data-parallel "
        "ranks and replicated (gradients all-reduced once per step) across groups, as FSDP HYBRID_SHARD, "
        "MiCS and Megatron-Core partial distributed optimizer; None = all dp·cp ranks",
    )
    recompute: Literal["none", "selective", "full"] = "selective"
    recompute_layers: int | None = Field(
        None,
        ge=0,
        description="recompute full only: the first N layers of every model chunk (each pipeline stage, each "
        "virtual stage with interleaving) are recomputed in full and the others keep their activations as "
        "with recompute none (Megatron-Core --recompute-method block --recompute-num-layers N; a chunk of "
        "fewer layers recomputes them all). None = every layer",
    )
    offload_layers: int = Field(
        0,
        ge=0,
        description="transformer layers whose saved activations are offloaded to host memory in the forward "
        "and reloaded in the backward, the copies overlapped with compute (Megatron-Core "
        "cpu_offloading_num_layers through Transformer Engine's CPU offload context); needs pp = 1, "
        "recompute none and fewer layers than the model has. 0 = no offloading",
    )
    tp_comm_overlap: bool = True
    dp_comm_overlap: bool = True
    flash_attention: bool = Field(True, description="fused attention kernel (Dao et al. 2022); False = unfused softmax")
    attention_kernel: Literal["native", "fa2"] = Field(
        "native",
        description="with flash_attention: native = the accelerator's best fused kernel (FlashAttention-2 on "
        "Ampere, cuDNN / FlashAttention-3 on Hopper, cuDNN on Blackwell); fa2 = FlashAttention-2 everywhere "
        "(PyTorch SDPA, flash-attn 2), 35% of peak on H100 (Shah et al. 2024)",
    )
    pp_comm_overlap: bool = Field(
        True,
        description="pipeline send/recv run asynchronously beside the next chunk's compute (Megatron-Core "
        "interleaved 1F1B, overlap_p2p_comm); False = blocking p2p on the critical path",
    )
    pp_scatter_gather: bool = Field(
        True,
        description="each tensor-parallel rank sends its 1/tp slice across a pipeline boundary (Megatron "
        "scatter/gather, Narayanan et al. 2021 Sec. 4.1); False = every rank sends the whole activation "
        "(DeepSpeed's PipelineEngine)",
    )
    ep_comm_overlap: bool = Field(False, description="hide MoE all-to-all behind compute (DualPipe, MCore 0.14+)")
    ep_shared_overlap: bool = Field(
        False,
        description="the shared experts run on a side stream beside the dispatch and combine all-to-alls (their "
        "FC1 and activation beside the dispatch, FC2 beside the combine, forward and backward), so up to their "
        "compute time of the all-to-all is hidden: Megatron-Core --moe-shared-expert-overlap (all-to-all or flex "
        "dispatcher, not with overlap_moe_expert_parallel_comm), DeepSeek-V2's HAI-LLM (report Sec. 3.1.3). "
        "No effect on a model without shared experts",
    )
    cuda_graphs: bool = Field(False, description="CUDA graphs capture layer kernels (cuts launch/host cost)")
    cuda_graphs_moe: bool = Field(
        True,
        description="with cuda_graphs, the MoE block's token dispatch, expert GEMMs and combine are captured too "
        "(whole-layer or full-iteration graphs); False = a partial scope that captures the attention block and "
        "the MoE router and preprocessing only (Megatron-Core cuda_graph_scope attn, moe_router, moe_preprocess), "
        "so dispatch, experts and combine keep their launch cost",
    )
    ep_dispatch: Literal["alltoall", "deepep", "hybridep", "einsum"] = Field(
        "alltoall",
        description="MoE dispatch: alltoall = a copy per expert rank; deepep = one copy per destination node "
        "forwarded over NVLink (DeepEP's normal kernels; DeepSeek-V3 Sec. 3.2.2); hybridep = the same "
        "node-deduplicated exchange by NVIDIA's HybridEP (Megatron-Core flex dispatcher backend hybridep), "
        "whose RDMA path between NVLink domains runs at its own measured share of the NIC line rate; "
        "einsum = GShard's dense dispatch of DeepSpeed-MoE and its ports (MindSpeed / ModelLink 2024): "
        "one-hot [tokens, experts x capacity] masks multiplied with the tokens, experts on capacity-padded "
        "buffers",
    )
    pp_schedule: Literal["1f1b", "dualpipe", "zero_bubble"] = Field(
        "1f1b",
        description="1f1b (interleaved when vpp > 1), DualPipe (DeepSeek-V3 Sec. 3.2.1) or zero_bubble: ZB-H1 "
        "(Qi et al. 2023, Zero Bubble Pipeline Parallelism, ICLR 2024), which splits the backward into its "
        "input-gradient and weight-gradient halves and fills the cool-down with the weight gradients: bubble "
        "(pp - 1)(F + B - W) instead of (pp - 1)(F + B + W), at 1F1B's peak memory; no interleaving (vpp 1)",
    )
    grad_reduce_fp32: bool = Field(
        True,
        description="gradients accumulated and reduced in fp32 (Megatron-Core DDP grad_reduce_in_fp32: a 4-byte "
        "main-grad buffer per parameter); False = in the parameters' bf16, 2 bytes of memory and traffic",
    )
    mlp_op_fuser: bool = Field(
        False,
        description="the FFN's FC1, activation (with its clamp) and FC2 (with its bias) run as one fused op "
        "(Transformer Engine op fuser: Megatron-Core use_transformer_engine_op_fuser, 0.18+); under MXFP8 the "
        "routed experts' fused grouped MLP also quantizes FC2's input and FC1's output gradient in its GEMM "
        "epilogues (FC1/FC2 dims multiples of 256); False = the clamp and the experts' bias run as separate kernels",
    )
    sp_gather_fp8: bool = Field(
        True,
        description="under an FP8 recipe the sequence-parallel all-gathers carry the quantized FP8 operand "
        "(Transformer Engine quantizes the local shard before it gathers); False = they carry BF16 and the "
        "gathered operand is quantized whole",
    )
    ep_dispatch_fp8: bool = Field(
        False,
        description="under an FP8 recipe the DeepEP / HybridEP dispatch (ep_dispatch deepep or hybridep) "
        "sends FP8 activations with their scales and the combine BF16 (DeepSeek-V3 Sec. 3.3); False = the "
        "dispatch carries BF16, as Megatron-Core passes its hidden states to DeepEP / HybridEP",
    )
    expandable_segments: bool = Field(
        False,
        description="PyTorch's caching allocator runs with expandable segments (PYTORCH_CUDA_ALLOC_CONF="
        "expandable_segments:True): free 20 MiB pages are unmapped and remapped at a segment's end, so "
        "little of the bytes freed every step stays unusable; False = PyTorch's default, fixed segments "
        "split into blocks (fragmentation margin allocator_fragmentation)",
    )
    activation_offload: bool = Field(
        True,
        description="the framework can offload saved activations to host memory (Megatron-Core 0.5+ "
        "cpu_offloading_num_layers through Transformer Engine's CPU offload context); False = it has no such "
        "mechanism (torchtitan, llm-foundry, DeepSpeed and older Megatron-LM in the software table), so "
        "offload_layers must be 0 and neither search nor validate tries it",
    )
    sp_regather: bool = Field(
        True,
        description="with sequence parallelism the backward all-gathers each column-parallel GEMM's input "
        "again for its weight gradient, beside the data-gradient GEMM (Megatron-LM / Megatron-Core "
        "LinearWithGradAccumulationAndAsyncCommunication, Transformer Engine ln_out_needs_gather / bulk "
        "dgrad overlap; Korthikanti et al. 2022 Sec. 4.2.2), and saves only the local shard; False = the "
        "gathered input is saved for the backward (DTensor / torch async TP), memory instead of traffic",
    )
    fp8_attention: bool = Field(
        False,
        description="under an FP8 recipe the attention core runs in FP8 as well (Transformer Engine "
        "fp8_dot_product_attention, cuDNN FP8 SDPA): the forward at the BF16 kernel's pace, the backward "
        "over a sliding-window layer's whole causal triangle (cuDNN's FP8 backward masks the band instead "
        "of skipping its tiles); False = attention in BF16",
    )
    fp8_output_proj: bool = Field(
        False,
        description="under an MXFP8 recipe the LM-head output projection runs as a Transformer Engine linear in "
        "MXFP8 (Megatron-Core fp8_output_proj, TELinearCrossEntropyModule): its GEMMs at the FP8 rate, its "
        "input and output gradient quantized; False = the head in BF16 (Megatron-Core's plain "
        "ColumnParallelLinear), as under every other recipe",
    )
    fp8_param_gather: bool = Field(
        False,
        description="under an FP8 recipe the layers' GEMM weights are FP8 parameters (Megatron-Core "
        "fp8_param_gather, Transformer Engine fp8_model_init / quantized_model_init): the FP8 data (with its "
        "column-wise copy where the GEMMs need one) is the weight, with no BF16 copy, the distributed "
        "optimizer keeps the fp32 master, and the parameter all-gather moves 1 byte per FP8 weight under "
        "per-tensor or blockwise scaling (under MXFP8 Megatron-Core gathers BF16 through the gradient buffer "
        "and quantizes after); False = BF16 weights, gathered in BF16",
    )
    fp8_weight_cache: bool = Field(
        True,
        description="under an FP8 recipe without FP8 parameters each GEMM weight's FP8 copy (row-wise and "
        "column-wise) is made on the first micro-batch and kept for the rest of the step (Transformer Engine "
        "weight workspaces, which Megatron-Core's TE layers ask for with is_first_microbatch): a persistent "
        "buffer beside the BF16 weights; False = the weight is cast inside every forward and the FP8 copy is "
        "transient (torchao Float8Linear)",
    )

    @model_validator(mode="after")
    def _check(self) -> ParallelSpec:
        if (self.tp * self.dp * self.cp) % self.ep:
            raise FieldError(
                "ep",
                f"ep = {self.ep} must divide tp × dp × cp = {self.tp * self.dp * self.cp} "
                "(inside dp × cp, or folded over the tp ranks with whole experts)",
            )
        if self.zero_shard_group is not None and (self.dp * self.cp) % self.zero_shard_group:
            raise ValueError(f"zero_shard_group = {self.zero_shard_group} must divide dp × cp = {self.dp * self.cp}")
        if self.cp_a2a_size is not None:
            if self.cp_comm_type != "a2a+p2p":
                raise FieldError(
                    "cp_a2a_size",
                    f"= {self.cp_a2a_size} is used only with cp_comm_type a2a+p2p, not {self.cp_comm_type}",
                )
            if self.cp % self.cp_a2a_size:
                raise FieldError("cp_a2a_size", f"= {self.cp_a2a_size} must divide cp = {self.cp}")
        if self.vpp > 1 and self.pp == 1:
            raise FieldError("vpp", f"vpp = {self.vpp} needs pp > 1")
        if self.recompute_layers is not None and self.recompute != "full":
            raise FieldError(
                "recompute_layers",
                f"= {self.recompute_layers} needs recompute full, not {self.recompute} (Megatron-Core's "
                "block method recomputes whole layers)",
            )
        if self.offload_layers and self.pp > 1:
            raise FieldError(
                "offload_layers",
                f"= {self.offload_layers} needs pp = 1 (Megatron-Core offloads activations without pipelining)",
            )
        if self.offload_layers and not self.activation_offload:
            raise FieldError(
                "offload_layers",
                f"= {self.offload_layers} needs a framework that offloads activations (activation_offload: "
                "true; Megatron-Core 0.5+); this one has no such mechanism, so set offload_layers 0",
            )
        if self.ep_shared_overlap and self.ep_comm_overlap:
            raise FieldError(
                "ep_shared_overlap",
                "cannot be combined with ep_comm_overlap (Megatron-Core: 'disable moe_shared_expert_overlap when "
                "enabling overlap_moe_expert_parallel_comm'; the batch-level overlap already hides the all-to-all); "
                "set one of them false",
            )
        if self.ep_shared_overlap and self.ep_dispatch == "einsum":
            raise FieldError(
                "ep_shared_overlap",
                "needs the all-to-all or DeepEP dispatch (Megatron-Core's alltoall or flex dispatcher), not "
                "ep_dispatch einsum; set ep_shared_overlap false or another ep_dispatch",
            )
        if self.offload_layers and self.recompute != "none":
            raise FieldError(
                "offload_layers",
                f"= {self.offload_layers} needs recompute none, not {self.recompute} (Megatron-Core does not "
                "combine CPU offloading with activation recomputation)",
            )
        return self

    @property
    def world_size(self) -> int:
        return self.tp * self.pp * self.dp * self.cp
