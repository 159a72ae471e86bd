"""What one transformer layer does per token: GEMM shapes, attention-core FLOPs, memory traffic,
stored activations. The engine turns these into time for a given parallel strategy.

GEMM shapes are given as (n, k) of ``Y[m, n] = X[m, k] · W[k, n]`` with ``m`` the tokens; which
dimension tensor parallelism splits is recorded (Megatron column/row parallel linear layers,
Shoeybi et al. 2019). Forward FLOPs of a GEMM are ``2·m·n·k``; backward is twice that (input and
weight gradients).

Hybrid stacks (``ModelSpec.layer_pattern``) are described by their *mean layer*: each mixer's GEMMs
appear once with ``share`` = the fraction of layers that have them, folded into ``tokens``, so the
FLOPs of ``L`` mean layers are those of the real stack; per-layer attention-core FLOPs, memory
traffic and stored activations are likewise means over the layers (MTP modules count as global
attention layers). For a uniform all-global stack every function returns what it always did.

Attention cost per layer kind, forward, per query token, in the non-causal-equivalent context
``c`` that :func:`attention_core_flops_per_token` multiplies (a causal kernel executes half):

- global: ``c = s`` (PaLM's ``12·L·h·s`` convention, Chowdhery et al. 2022, App. B);
- sliding window ``w``: token ``i`` sees ``min(i+1, w)`` keys, a mean of ``w - w²/(2s)`` for
  ``w < s``, so ``c = 2w - w²/s`` -- linear in ``s`` where global is quadratic (Beltagy et al. 2020,
  Longformer Sec. 3: "O(n·w)"; FlashAttention-2's local-window kernel skips the masked blocks, and
  so does cuDNN's SDPA with a left diagonal bound: BF16 forward and backward in time linear in ``s``,
  NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results, gpt_oss on GB200 / GB300 with
  cuDNN 9.22 and on H200 with 9.19);
  Under FP8 attention (Transformer Engine ``fp8_dot_product_attention``) cuDNN's backward does not skip
  them: NVIDIA's cudnn-frontend ``benchmark/attention_training/results/gpt_oss/gb200`` (cuDNN 9.27, window
  128) time the FP8 / MXFP8 backward quadratic in ``s`` (2.07 ms at 4k, 107 ms at 32k; BF16 0.463 and
  3.66 ms), as ``gb200_919_only_cudnn/gpt_oss`` did with cuDNN 9.19 (window 1,024: 43.9 vs 4.1 ms at
  32k), while the FP8 forward keeps the BF16 one's linear time: the ``banded=False`` costs;
- chunked ``C``: causal inside each chunk, so ``c = min(C, s)`` (Llama 4's local layers);
- linear attention / SSM: no softmax context; their per-token core cost is
  :func:`mixer_core_flops_per_token` (chunkwise algorithms: Yang et al. 2024, Gated DeltaNet,
  ``O(s·C·d + s·d²)``; Dao & Gu 2024, SSD Sec. 6, ``O(s·Q·(N+P) + s·N·P)`` per head).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from wanka.spec.model import ModelSpec
from wanka.workload.params import ffn_matrices

__all__ = [
    "Gemm",
    "LayerKind",
    "activation_elems_per_token",
    "attention_core_flops_per_token",
    "attention_head_dims",
    "attention_key_spans",
    "attention_output_elems_per_token",
    "clamp_fwd_elems_per_token",
    "eager_mlp_elems_per_token",
    "eager_rope_elems_per_token",
    "effective_context",
    "elementwise_elems_per_token",
    "expert_bias_fp32_probs_bytes_per_token",
    "kv_width_per_layer",
    "layer_gemms",
    "layer_shares",
    "logit_gemm",
    "mixer_core_flops_per_token",
    "model_flops_per_token",
    "muon_matrices",
    "routed_activation_elems_per_token",
    "selective_recompute_elems_per_token",
]

LayerKind = Literal["dense", "moe"]


@dataclass(frozen=True)
class Gemm:
    """One weight GEMM of a layer, per token: ``n`` output and ``k`` input features.

    ``split`` is the dimension tensor parallelism divides ("n" column-parallel, "k" row-parallel,
    None replicated); ``tokens`` multiplies the token count (top-k for routed experts); ``expert``
    marks routed-expert GEMMs (run grouped, one GEMM per local expert).
    """

    name: str
    n: int
    k: int
    split: Literal["n", "k"] | None
    tokens: float = 1.0
    expert: bool = False
    share: float = 1.0  # fraction of layers that have this GEMM (hybrid stacks); already in ``tokens``


_SOFTMAX = ("global", "sliding", "chunked")


def layer_shares(model: ModelSpec) -> dict[str, float]:
    """Fraction of all layers (MTP modules included, as global) of each mixer kind."""
    counts = model.layer_kind_counts()
    total = float(sum(counts.values()))
    return {k: n / total for k, n in counts.items()}


def softmax_share(model: ModelSpec) -> float:
    """Fraction of all layers that are softmax attention (global, sliding or chunked); 1 for a stack
    without a layer pattern."""
    if model.layer_pattern is None:
        return 1.0
    return sum(f for k, f in layer_shares(model).items() if k in _SOFTMAX)


def kv_width_per_layer(model: ModelSpec) -> float:
    """``d_qk + d_v`` of one head, averaged over the layers: the softmax layers (global, sliding,
    chunked) exchange their keys and values across the context-parallel ranks, linear-attention and
    SSM layers none (they pass a state). Not derived from the attention FLOPs, whose mean context
    shrinks with every sliding or chunked layer although their K/V blocks do not."""
    dqk, dv = attention_head_dims(model)
    return float(dqk + dv) * softmax_share(model)


def effective_context(model: ModelSpec, kind: str, seq_len: int, banded: bool = True) -> float:
    """Non-causal-equivalent softmax context of one layer of ``kind`` (module docstring); 0 for
    linear-attention and SSM layers. ``banded=False``: a kernel that runs a sliding layer's whole causal
    triangle, masking what lies outside the window instead of skipping it (FP8 backward)."""
    s = float(seq_len)
    if kind == "global" or (kind == "sliding" and not banded):
        return s
    if kind == "sliding":
        assert model.sliding_window is not None
        w = float(model.sliding_window)
        return s if w >= s else 2.0 * w - w * w / s
    if kind == "chunked":
        assert model.attention_chunk is not None
        return min(float(model.attention_chunk), s)
    return 0.0


def attention_key_spans(model: ModelSpec, seq_len: int, banded: bool = True) -> tuple[tuple[float, float], ...]:
    """``(share, span)`` per softmax layer kind: ``share`` of the stack's forward attention-core FLOPs
    (:func:`attention_core_flops_per_token`) and ``span``, the widest run of keys one query attends
    to -- ``s`` causal global, the window ``w`` sliding, the chunk ``C`` chunked (each capped at
    ``s``). A fused kernel loops each query tile over its span's key tiles and no further (the band's
    outer tiles are skipped: cuDNN SDPA with a left diagonal bound runs in time linear in ``s``,
    NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results/gpt_oss and h200_919_only_cudnn),
    so the span is the key length whose fixed per-tile and pipeline start-up work the engine's short-
    key efficiency charges. Empty for a stack without softmax layers. ``banded=False``: the sliding
    layers at the causal span and FLOPs of a kernel that masks the band instead (FP8 backward)."""
    s = float(seq_len)
    spans = {"global": s}
    if model.sliding_window is not None:
        spans["sliding"] = min(float(model.sliding_window), s) if banded else s
    if model.attention_chunk is not None:
        spans["chunked"] = min(float(model.attention_chunk), s)
    shares = layer_shares(model) if model.layer_pattern is not None else {"global": 1.0}
    work = {k: f * effective_context(model, k, seq_len, banded) for k, f in shares.items() if k in _SOFTMAX}
    total = sum(work.values())
    return tuple((c / total, spans[k]) for k, c in work.items() if c > 0) if total > 0 else ()


def mixer_core_flops_per_token(model: ModelSpec, kind: str) -> float:
    """Forward FLOPs per token of a linear-attention or SSM layer's sequence mixing (not its GEMMs).

    Gated DeltaNet, chunkwise form with chunk ``C`` (Yang et al. 2024, Sec. 3): per value head the
    state read-out and update (``q·S``, ``kᵀ·v`` and the delta correction, ~``6·d_k·d_v``) and the
    intra-chunk causal attention and WY transform (~``2·C·(2·d_k + d_v)``). Mamba-2 SSD (Dao & Gu
    2024, Sec. 6) per head: ``6·N·P`` for the states and ``2·Q·(N + P)`` within a chunk of ``Q``.
    Mamba-1 selective scan (Gu & Dao 2023, Sec. 3.3): ~``9·d_inner·N``. 0 for softmax layers.
    """
    if kind == "linear" and model.linear_attention is not None:
        la = model.linear_attention
        dk, dv, c = float(la.qk_head_dim), float(la.v_head_dim), float(la.chunk_size)
        return la.n_v_heads * (6.0 * dk * dv + 2.0 * c * (2.0 * dk + dv))
    if kind == "ssm" and model.ssm is not None:
        sm = model.ssm
        di = float(sm.expand * model.hidden)
        n = float(sm.d_state)
        if sm.kind == "mamba2":
            p = float(sm.head_dim)
            heads = di / p
            return heads * (6.0 * n * p + 2.0 * sm.chunk_size * (n + p))
        return 9.0 * di * n
    return 0.0


def _attention_gemms(model: ModelSpec) -> list[Gemm]:
    h = model.hidden
    a = model.attention
    if a is not None:  # MLA, DeepSeek-V3 Sec. 2.1.1
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        g: list[Gemm] = []
        if a.q_lora_rank:
            g.append(Gemm("q_down", a.q_lora_rank, h, None))
            g.append(Gemm("q_up", model.n_heads * qk, a.q_lora_rank, "n"))
        else:
            g.append(Gemm("q_proj", model.n_heads * qk, h, "n"))
        g.append(Gemm("kv_down", a.kv_lora_rank + a.qk_rope_head_dim, h, None))
        g.append(Gemm("kv_up", model.n_heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank, "n"))
        g.append(Gemm("o_proj", h, model.n_heads * a.v_head_dim, "k"))
        return g
    d = model.kv_channels
    q_heads = model.n_heads * (2 if model.attention_output_gate else 1)  # gated attention: q and gate
    return [
        Gemm("qkv_proj", (q_heads + 2 * model.n_kv_heads) * d, h, "n"),
        Gemm("o_proj", h, model.n_heads * d, "k"),
    ]


def _mixer_gemms(model: ModelSpec, kind: str) -> list[Gemm]:
    """Projection GEMMs of a linear-attention or SSM layer (see :func:`wanka.workload.mixer_params`)."""
    h = model.hidden
    if kind == "linear":
        la = model.linear_attention
        assert la is not None
        kd, vd = la.n_qk_heads * la.qk_head_dim, la.n_v_heads * la.v_head_dim
        return [
            Gemm("lin_in_proj", 2 * kd + 2 * vd + 2 * la.n_v_heads, h, "n"),
            Gemm("lin_out_proj", h, vd, "k"),
        ]
    sm = model.ssm
    assert sm is not None
    di = sm.expand * h
    if sm.kind == "mamba2":
        heads = max(1, di // sm.head_dim)
        return [
            Gemm("ssm_in_proj", 2 * di + 2 * sm.n_groups * sm.d_state + heads, h, "n"),
            Gemm("ssm_out_proj", h, di, "k"),
        ]
    r = sm.dt_rank if sm.dt_rank is not None else -(-h // 16)
    return [
        Gemm("ssm_in_proj", 2 * di, h, "n"),
        Gemm("ssm_x_proj", r + 2 * sm.d_state, di, None),
        Gemm("ssm_dt_proj", di, r, None),
        Gemm("ssm_out_proj", h, di, "k"),
    ]


def _mixer_layer_gemms(model: ModelSpec) -> list[Gemm]:
    """Token-mixer GEMMs of the mean layer: each mixer's GEMMs weighted by its share of layers."""
    if model.layer_pattern is None:
        return _attention_gemms(model)
    shares = layer_shares(model)
    soft = softmax_share(model)
    g = [replace(x, tokens=x.tokens * soft, share=soft) for x in _attention_gemms(model)] if soft > 0 else []
    for kind in ("linear", "ssm"):
        if shares.get(kind):
            f = shares[kind]
            g += [replace(x, tokens=x.tokens * f, share=f) for x in _mixer_gemms(model, kind)]
    return g


def layer_gemms(model: ModelSpec, kind: LayerKind) -> list[Gemm]:
    """The weight GEMMs of one (mean, for a hybrid stack) layer of FFN ``kind``."""
    h = model.hidden
    mats = ffn_matrices(model)
    g = _mixer_layer_gemms(model)
    if kind == "dense" or model.moe is None:
        g.append(Gemm("fc1", (mats - 1) * model.ffn_hidden, h, "n"))
        g.append(Gemm("fc2", h, model.ffn_hidden, "k"))
        return g
    m = model.moe
    g.append(Gemm("router", m.n_experts, h, None))
    g.append(Gemm("expert_fc1", (mats - 1) * m.expert_ffn_hidden, h, None, tokens=m.top_k, expert=True))
    g.append(Gemm("expert_fc2", h, m.expert_ffn_hidden, None, tokens=m.top_k, expert=True))
    if m.n_shared_experts:
        f = m.shared_ffn_hidden
        g.append(Gemm("shared_fc1", (mats - 1) * f, h, "n"))
        g.append(Gemm("shared_fc2", h, f, "k"))
    return g


def muon_matrices(model: ModelSpec, kind: LayerKind) -> list[Gemm]:
    """The weight matrices of one (mean) layer of FFN ``kind`` that Muon orthogonalizes, each an
    ``n`` x ``k`` matrix split over tensor parallelism as its GEMM is.

    Megatron-Core routes every 2-D parameter that is not the embedding or the output layer to Muon
    and the rest (norms, biases, embedding, LM head) to Adam (NVIDIA/Megatron-LM
    megatron/core/optimizer/emerging_optimizers.py ``_is_nonlinear_or_embedding``,
    layer_wise_optimizer.py ``is_managed_by_layer_wise_optimizer``): the projections of the token
    mixer, the router, the shared experts and each routed expert's FC1 and FC2 (Transformer Engine's
    grouped linear keeps one 2-D weight per expert). A fused QKV projection is orthogonalized as its
    q, k and v parts (OptimizerConfig ``muon_split_qkv`` True by default); a SwiGLU FC1 stays one
    fused gate+up matrix (only linear_qkv is split).
    """
    out: list[Gemm] = []
    for g in layer_gemms(model, kind):
        if g.name == "qkv_proj":
            d = model.kv_channels
            q = g.n - 2 * model.n_kv_heads * d
            out += [replace(g, name="q_proj", n=q), replace(g, name="k_proj", n=model.n_kv_heads * d)]
            out.append(replace(g, name="v_proj", n=model.n_kv_heads * d))
        else:
            out.append(g)
    return out


def muon_param_elems(model: ModelSpec, kind: LayerKind, *, routed: bool = False) -> float:
    """Parameters of one (mean) layer of FFN ``kind`` that Muon steps (:func:`muon_matrices`): its
    non-expert matrices, or with ``routed`` every routed expert's."""
    experts = float(model.moe.n_experts) if model.moe is not None else 1.0
    return float(
        sum(
            g.share * g.n * g.k * (experts if g.expert else 1.0)
            for g in muon_matrices(model, kind)
            if g.expert == routed
        )
    )


def logit_gemm(model: ModelSpec) -> Gemm:
    """The output layer (vocab-parallel under tp)."""
    return Gemm("logits", model.vocab, model.hidden, "n")


def attention_head_dims(model: ModelSpec) -> tuple[int, int]:
    """Per-head query/key and value widths ``(d_qk, d_v)`` the attention kernel works on (MLA: the
    no-RoPE + RoPE query/key width and the value width)."""
    a = model.attention
    if a is not None:
        return a.qk_nope_head_dim + a.qk_rope_head_dim, a.v_head_dim
    return model.kv_channels, model.kv_channels


def attention_output_elems_per_token(model: ModelSpec) -> float:
    """Elements per token of a softmax-attention layer's output (heads x value head dim), the input of
    its output projection; 0 for hybrid stacks (``layer_pattern``), whose mixers differ by layer."""
    _, dv = attention_head_dims(model)
    return float(model.n_heads * dv) if model.layer_pattern is None else 0.0


def attention_core_flops_per_token(model: ModelSpec, seq_len: int, banded: bool = True) -> float:
    """Forward FLOPs per token of softmax(QKᵀ)V over a full (non-causal) ``seq_len`` context.

    ``2·s·n_heads·(d_qk + d_v)``; a causal kernel (FlashAttention-2) executes about half. For a
    stack with sliding-window, chunked, linear-attention or SSM layers, the mean over all layers of
    ``2·c·n_heads·(d_qk + d_v)`` with each layer's non-causal-equivalent context ``c``
    (:func:`effective_context`; 0 for linear/SSM layers, whose core is
    :func:`mixer_core_flops_per_token`), so "half of it" stays the causal cost. ``banded=False``: what a
    kernel that does not skip the sliding window's outer tiles executes (:func:`effective_context`).
    """
    dqk, dv = attention_head_dims(model)
    if model.layer_pattern is None:
        return 2.0 * seq_len * model.n_heads * (dqk + dv)
    ctx = sum(f * effective_context(model, k, seq_len, banded) for k, f in layer_shares(model).items())
    return 2.0 * ctx * model.n_heads * (dqk + dv)


def _hybrid_mixer_elems(model: ModelSpec, softmax_elems: float) -> tuple[float, float]:
    """Mean over a hybrid stack's layers of the token mixer's memory-bound traffic and of its stored
    activations, per token: ``softmax_elems`` (the caller's rotary traffic or q/k/v/o inventory) for
    softmax layers; for Gated DeltaNet the causal convolution over q, k, v (read + write), the L2
    norms of q and k, and the gated output norm (read o and z, write), storing the projections, the
    convolution output, the output and its normed value; for Mamba the same over x, B, C and y.
    Returns ``(traffic, stored)`` elements.
    """
    traffic = stored = 0.0
    for kind, f in layer_shares(model).items():
        if kind in _SOFTMAX:
            traffic += f * softmax_elems
            stored += f * softmax_elems
        elif kind == "linear" and model.linear_attention is not None:
            la = model.linear_attention
            kd, vd = float(la.n_qk_heads * la.qk_head_dim), float(la.n_v_heads * la.v_head_dim)
            conv = 2.0 * kd + vd
            traffic += f * (2.0 * conv + 4.0 * kd + 3.0 * vd)
            stored += f * ((2.0 * kd + 2.0 * vd + 2.0 * la.n_v_heads) + conv + 2.0 * vd)
        elif kind == "ssm" and model.ssm is not None:
            sm = model.ssm
            di = float(sm.expand * model.hidden)
            bc = 2.0 * sm.n_groups * sm.d_state if sm.kind == "mamba2" else 2.0 * sm.d_state
            conv = di + (bc if sm.kind == "mamba2" else 0.0)
            traffic += f * (2.0 * conv + 3.0 * di)
            stored += f * (2.0 * di + bc + conv + 2.0 * di)
    return traffic, stored


def elementwise_elems_per_token(model: ModelSpec, kind: LayerKind) -> float:
    """Elements read + written per token by memory-bound kernels of one layer, forward.

    Two norms (read+write h), two residual adds (3h), rotary on q and k, the FFN activation
    (SwiGLU reads 2f writes f; GeLU reads f writes f), and for MoE the token permutation and
    un-permutation (read + write k·h each) and the router softmax/top-k.
    """
    h = model.hidden
    dqk, _ = attention_head_dims(model)
    kv_heads = model.n_heads if model.attention is not None else model.n_kv_heads
    rope = 2.0 * (model.n_heads + kv_heads) * dqk
    e = 4.0 * h + 6.0 * h + (rope if model.layer_pattern is None else _hybrid_mixer_elems(model, rope)[0])
    if kind == "dense" or model.moe is None:
        f = model.ffn_hidden
        return e + (3.0 * f if model.ffn_act == "swiglu" else 2.0 * f)
    m = model.moe
    f = m.expert_ffn_hidden
    act = (3.0 if model.ffn_act == "swiglu" else 2.0) * f * (m.top_k + m.n_shared_experts)
    return e + act + 4.0 * m.top_k * h + 4.0 * m.n_experts


def routed_activation_elems_per_token(model: ModelSpec) -> float:
    """Elements read + written per token, forward, by the gated activation of an MoE layer's routed experts
    alone (SwiGLU reads 2f writes f per routed copy: 3f x top_k), the share of
    :func:`elementwise_elems_per_token` that a grouped-GEMM epilogue can absorb; 0 for a dense model or a
    non-gated activation."""
    m = model.moe
    if m is None or model.ffn_act != "swiglu":
        return 0.0
    return 3.0 * float(m.expert_ffn_hidden) * float(m.top_k)


def eager_mlp_elems_per_token(model: ModelSpec, kind: LayerKind) -> tuple[float, float]:
    """Memory-bound work per token of one layer that the FFN's clamp and expert biases add when the
    framework runs them as separate (eager) kernels: ``(elements read + written, forward-equivalent,
    extra elements stored for the backward)``; ``(0, 0)`` for a model with neither.

    As Megatron-Core's ``TEGroupedMLP`` runs them (core 0.15-0.19, ``weighted_bias_quick_geglu_impl``
    and ``_apply_bias``) unless the Transformer Engine op fuser fuses FC1, activation and FC2:

    - ``ffn_act_clamp``: the FC1 output is split, each half clamped (read + write f each) and the halves
      concatenated again (read + write 2f) before the fused activation: 8f forward; the backward masks
      each half's gradient (read gradient and input, write: 3f each) and concatenates them (4f): 10f.
      The clamp keeps its input, the FC1 output (2f), for the backward beside the activation's own input.
    - ``moe.expert_bias``: the FC2 bias is added per expert after the grouped GEMM, scaled by the
      routing probability (bias x prob written, added to the output: read 2h write h, the per-expert
      pieces concatenated: read + write h): 6h per routed copy; the backward reduces the gradient
      times the probability over tokens (bias gradient) and times the bias over features (probability
      gradient), 6h, and concatenates the per-expert gradient pieces of the output (the backward of
      ``torch.split``: read + write h), 8h in all. Counted in the activation dtype (the router's
      probabilities are in the input's dtype unless ``moe_router_dtype`` says fp32; DeepEP / HybridEP
      dispatch makes them fp32: :func:`expert_bias_fp32_probs_bytes_per_token`).

    The engine charges the backward twice the forward's memory-bound time, so the forward-equivalent
    traffic is (forward + backward) / 3.
    """
    f = _token_ffn_width(model, kind)
    m = model.moe
    bias = (6.0 + 8.0) * m.top_k * float(model.hidden) if m is not None and kind == "moe" and m.expert_bias else 0.0
    clamp = _clamped(model)
    traffic = ((8.0 + 10.0) * f if clamp else 0.0) + bias
    return traffic / 3.0, (2.0 * f if clamp else 0.0)


def _token_ffn_width(model: ModelSpec, kind: LayerKind) -> float:
    """FFN width one token's activation runs over in a layer: ffn_hidden, or in an MoE layer the widths of
    its top-k routed and its shared experts."""
    if model.moe is not None and kind == "moe":
        m = model.moe
        return float(m.expert_ffn_hidden * (m.top_k + m.n_shared_experts))
    return float(model.ffn_hidden)


def _clamped(model: ModelSpec) -> bool:
    """The gated activation clamps its inputs (``ffn_act_clamp``), as a separate kernel when eager."""
    return model.ffn_act_clamp is not None and model.ffn_act == "swiglu"


def clamp_fwd_elems_per_token(model: ModelSpec, kind: LayerKind) -> float:
    """Elements read + written per token by the forward of an eager FFN clamp (``ffn_act_clamp`` on a
    gated activation): split, clamp each half and concatenate, 8f (:func:`eager_mlp_elems_per_token`);
    0 without a clamp. Recomputing the activation (Megatron-Core recompute module ``moe_act`` / ``mlp``:
    the checkpointed ``bias_act_func`` holds the clamp) runs it again in the backward."""
    return 8.0 * _token_ffn_width(model, kind) if _clamped(model) else 0.0


def expert_bias_fp32_probs_bytes_per_token(model: ModelSpec, kind: LayerKind, act_bytes: float) -> float:
    """HBM bytes per token, forward-equivalent, that the eager FC2 expert bias moves beyond
    :func:`eager_mlp_elems_per_token`'s count when the routing probabilities are fp32 (4 bytes) rather
    than the activation dtype (``act_bytes``); 0 for a layer without biased experts.

    Megatron-Core's DeepEP and HybridEP managers cast the probabilities to fp32 before the dispatch
    (token_dispatcher.py ``_DeepepManager`` / ``_HybridEPManager.setup_metadata``: ``token_probs.float()``,
    core 0.15-0.17), so ``TEGroupedMLP._apply_bias``'s ``t + b * p`` promotes to fp32: per routed copy of
    h features the forward writes ``b * p`` (4h), adds it to the output (read 2h + 4h, write 4h),
    concatenates the experts' pieces (read + write 4h) and casts back (read 4h, write 2h): 28h bytes
    against 12h in bf16; the backward casts the gradient up (read 2h, write 4h) and back for the output's
    gradient (read 4h, write 2h), runs both reductions on the fp32 gradient (3 x 4h each) and
    concatenates the output's gradient pieces (read + write 2h): 40h bytes against 16h. With activation
    bytes A and probability bytes P = 4 the excess is (6P - 4A) h forward and (8P - 4A) h backward per
    routed copy, charged as forward-equivalent (forward + backward) / 3 like the eager passes.
    """
    m = model.moe
    if m is None or kind != "moe" or not m.expert_bias:
        return 0.0
    p, a = 4.0, float(act_bytes)
    if a >= p:
        return 0.0
    per_copy = (6.0 * p - 4.0 * a) + (8.0 * p - 4.0 * a)
    return per_copy * m.top_k * float(model.hidden) / 3.0


def eager_rope_elems_per_token(model: ModelSpec) -> float:
    """Elements read + written per token, forward-equivalent, that an unfused rotary embedding adds over
    the fused one :func:`elementwise_elems_per_token` counts (read + write q and k once); 0 for plain RoPE
    (``rope_attention_factor`` 1) and for MLA, whose rotary part runs its own path.

    Megatron-Core hands the rotary embedding to Transformer Engine's fused kernel only for a factor of 1:
    with YaRN's attention factor (``mscale`` != 1) ``apply_rotary_pos_emb`` falls back to
    ``_apply_rotary_pos_emb_bshd`` (models/common/embeddings/rope_utils.py, core 0.15-0.17; attention.py
    passes ``_yarn_get_concentration_factor_from_config``), and Megatron-Bridge turns ``apply_rope_fusion``
    off for ``position_embedding_type`` "yarn" anyway (gpt_provider.py ``validate_rope_fusion_compatibility``).
    Per q or k tensor of n elements the eager forward multiplies by cos (read + write n), negates half
    (read + write n/2) and concatenates the rotated halves (read + write n), multiplies by sin (2n), adds
    (read 2n, write n) and concatenates the rotary part with the (empty) pass-through part (2n): 12n. The
    backward multiplies the gradient by sin and by cos (2n each), negates half (n), concatenates the
    halves' gradients (the chunk's backward, 2n), writes the empty pass-through slice's gradient as a
    zeroed full-size tensor (n) and sums the input's three gradient contributions (2 x 3n): 14n (the
    rotary slice, the whole last dimension, is the input itself: PyTorch's indexing returns it unsliced).
    The fused kernel reads and writes n each way, which the layer's elementwise count charges as 2n
    forward and 4n backward; the excess, (12n + 14n - 6n) / 3 forward-equivalent, applies to the softmax
    layers' share (q and k of every head; cos and sin per position are per-sequence work, left out).
    """
    if model.rope_attention_factor == 1.0 or model.attention is not None:
        return 0.0
    dqk, _ = attention_head_dims(model)
    n = float((model.n_heads + model.n_kv_heads) * dqk)
    return softmax_share(model) * (12.0 + 14.0 - 6.0) * n / 3.0


def activation_elems_per_token(model: ModelSpec, kind: LayerKind) -> float:
    """Elements stored for backward per token of one layer, no recompute, FlashAttention.

    Follows the tensor inventory of Korthikanti et al. 2022 (Sec. 4.1; 34·s·b·h bytes for GPT with
    dropout) without dropout masks and without the s² attention scores that FlashAttention never
    stores: norm inputs and outputs, q/k/v, attention output, FFN input, fc1 output, activation
    output; for MoE the permuted tokens and per-expert intermediates for top-k (+ shared) experts.
    """
    h = model.hidden
    dqk, dv = attention_head_dims(model)
    kv_heads = model.n_heads if model.attention is not None else model.n_kv_heads
    mix = float(model.n_heads * dqk + kv_heads * (dqk + dv) + model.n_heads * dv)
    if model.attention is not None:
        a = model.attention
        mix += a.q_lora_rank + a.kv_lora_rank  # compressed latents
    attn = 2.0 * h + (mix if model.layer_pattern is None else _hybrid_mixer_elems(model, mix)[1])
    mats = 3.0 if model.ffn_act == "swiglu" else 2.0
    if kind == "dense" or model.moe is None:
        ffn = 2.0 * h + mats * model.ffn_hidden
        return attn + ffn
    m = model.moe
    t = m.top_k + m.n_shared_experts
    ffn = 2.0 * h + m.top_k * h + mats * m.expert_ffn_hidden * t
    return attn + ffn


def gemm_input_elems_per_token(model: ModelSpec, kind: LayerKind) -> float:
    """Elements of :func:`activation_elems_per_token` that are saved only as the input of a GEMM.

    With FP8 GEMMs the framework keeps these in FP8 (one byte) for the weight-gradient GEMM instead of
    bf16: Transformer Engine's ``Linear``/``LayerNormLinear`` save the quantized input, and DeepSeek-V3
    (Sec. 3.3.3) caches the inputs of its Linear layers in FP8. They are the two norm outputs (inputs of
    the QKV and FC1 GEMMs), the attention output (input of the output projection), the FFN activation
    output (input of FC2) and, for MoE, the permuted tokens (input of the expert FC1).
    """
    h = float(model.hidden)
    attn_out = attention_output_elems_per_token(model)
    if kind == "dense" or model.moe is None:
        return 2.0 * h + attn_out + float(model.ffn_hidden)
    m = model.moe
    return 2.0 * h + attn_out + m.top_k * h + float(m.expert_ffn_hidden * (m.top_k + m.n_shared_experts))


def selective_recompute_elems_per_token(model: ModelSpec, kind: LayerKind) -> tuple[float, float]:
    """What fine-grained ("selective") recompute drops and re-reads per token of one layer.

    With a fused attention kernel there are no attention scores to drop (Korthikanti et al.'s
    selective recompute), so frameworks recompute the cheap modules instead (Megatron-Core
    ``recompute_modules``: layernorm, the MLP activation, MLA up-projections; DeepSeek-V3 Sec.
    3.2.3 recomputes RMSNorm and the MLA up-projections): the two norm outputs, the activation
    function's output, and for MLA the up-projected q and k/v. Returns ``(elements no longer
    stored, elements read + written again by the recomputed memory-bound kernels)``; the MLA
    up-projection GEMMs are re-run on top (see :func:`layer_gemms`, names ``q_up`` and ``kv_up``).
    """
    h = model.hidden
    if kind == "dense" or model.moe is None:
        f = float(model.ffn_hidden)
    else:
        f = float(model.moe.expert_ffn_hidden * (model.moe.top_k + model.moe.n_shared_experts))
    gated = model.ffn_act == "swiglu"
    saved = 2.0 * h + f
    traffic = 4.0 * h + (3.0 if gated else 2.0) * f  # two norms (read + write) and the activation
    a = model.attention
    if a is not None:
        saved += model.n_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim)  # q_up output
        saved += model.n_heads * (a.qk_nope_head_dim + a.v_head_dim)  # kv_up output
        # the per-head keys' rotary part is one shared 64-wide key broadcast over the heads (DeepSeek-V2
        # Sec. 2.1.3, decoupled RoPE): the recomputed up-projection rebuilds the per-head copy from the
        # stored latent, so only the shared key is kept
        saved += (model.n_heads - 1) * a.qk_rope_head_dim
    return saved, traffic


def model_flops_per_token(model: ModelSpec, seq_len: int) -> float:
    """Model FLOPs per token for MFU: ``6·N + 6·attention`` (PaLM, Chowdhery et al. 2022, App. B).

    ``N`` counts the parameters a token touches except the input embedding (active experts only
    for MoE; the LM head counts, it is a GEMM); the attention term is PaLM's ``12·L·h·s`` written for
    any head dimensions (non-causal, as PaLM and Megatron count it). Sliding-window and chunked
    layers count their own context (:func:`effective_context`); linear-attention and SSM layers
    add three times their forward core (:func:`mixer_core_flops_per_token`).
    """
    from wanka.workload.params import parameter_count

    p = parameter_count(model)
    layers = model.n_layers + model.mtp_layers
    flops = 6.0 * p.active_non_embedding + 3.0 * layers * attention_core_flops_per_token(model, seq_len)
    if model.layer_pattern is not None:  # linear-attention / SSM sequence mixing, forward + backward
        counts = model.layer_kind_counts()
        flops += 3.0 * sum(n * mixer_core_flops_per_token(model, k) for k, n in counts.items())
    return flops
