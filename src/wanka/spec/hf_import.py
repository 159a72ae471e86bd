"""Turn a Hugging Face ``config.json`` into a :class:`~wanka.spec.ModelSpec`.

Supported architectures (``architectures[0]`` or ``model_type``): Llama / Mistral / Qwen2 / Qwen3
(dense, gated SiLU FFN), Mixtral (sparse MoE), Qwen2-MoE / Qwen3-MoE, DeepSeek-V2 / V3 (MLA + MoE with
shared experts and leading dense layers, multi-token prediction, group-limited routing), GPT-OSS
(alternating sliding-window / full attention from ``layer_types``, attention sinks), Qwen3-Next
(Gated DeltaNet linear attention in 3 of 4 layers, gated attention); ``layer_types`` of any
supported architecture become ``layer_pattern``.

The sequence length is the model's *pre-training* context: ``rope_scaling.original_max_position_embeddings``
when the config extends the context with YaRN/linear scaling (DeepSeek-V3: 4096), else
``max_position_embeddings``; pass ``seq_len`` to override.

>>> from wanka.spec.hf_import import model_from_hf_config
>>> model_from_hf_config({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
...     "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
...     "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192,
...     "hidden_act": "silu"}, name="llama3-8b").n_kv_heads
8
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wanka import fileio
from wanka.errors import SpecError
from wanka.spec.io import parse_model
from wanka.spec.model import ModelSpec

__all__ = ["SUPPORTED_ARCHITECTURES", "load_hf_config", "model_from_hf_config"]

_FAMILY = {
    "LlamaForCausalLM": "dense",
    "MistralForCausalLM": "dense",
    "Qwen2ForCausalLM": "dense",
    "Qwen3ForCausalLM": "dense",
    "MixtralForCausalLM": "mixtral",
    "Qwen2MoeForCausalLM": "qwen_moe",
    "Qwen3MoeForCausalLM": "qwen_moe",
    "DeepseekV2ForCausalLM": "deepseek",
    "DeepseekV3ForCausalLM": "deepseek",
    "GptOssForCausalLM": "gpt_oss",
    "Qwen3NextForCausalLM": "qwen_moe",
}
_MODEL_TYPES = {
    "llama": "LlamaForCausalLM",
    "mistral": "MistralForCausalLM",
    "qwen2": "Qwen2ForCausalLM",
    "qwen3": "Qwen3ForCausalLM",
    "mixtral": "MixtralForCausalLM",
    "qwen2_moe": "Qwen2MoeForCausalLM",
    "qwen3_moe": "Qwen3MoeForCausalLM",
    "deepseek_v2": "DeepseekV2ForCausalLM",
    "deepseek_v3": "DeepseekV3ForCausalLM",
    "gpt_oss": "GptOssForCausalLM",
    "qwen3_next": "Qwen3NextForCausalLM",
}
SUPPORTED_ARCHITECTURES = tuple(sorted(_FAMILY))
_MAX_INT = 100_000_000  # no dimension of a real model comes near this; bounds every loop and allocation
_MAX_LAYERS = 10_000
_MAX_SEQ = 100_000_000
# The gated FFN of these families is act(x W_gate) * (x W_up) W_down; with SiLU that is SwiGLU.
_GATED_ACTS = {"silu": "swiglu", "swish": "swiglu"}


class _Cfg:
    """Typed reads from the raw config; every problem names the key and the file."""

    def __init__(self, data: Mapping[str, Any], source: str | None) -> None:
        self.data = data
        self.source = source

    def _err(self, key: str, msg: str) -> SpecError:
        return SpecError(msg, field=key, source=self.source)

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def int(self, key: str, default: int | None = None, *, minimum: int = 1, maximum: int = _MAX_INT) -> int:
        if key not in self.data or self.data[key] is None:
            if default is None:
                raise self._err(key, "required key is missing from config.json")
            return default
        v = self.data[key]
        if isinstance(v, bool) or not isinstance(v, int):
            raise self._err(key, f"= {v!r}: must be an integer")
        if not minimum <= v <= maximum:
            raise self._err(key, f"= {v!r}: must be between {minimum:,} and {maximum:,}")
        return v

    def number(self, key: str, *, maximum: float) -> float:
        """A positive finite number (int or float in the JSON)."""
        v = self.data.get(key)
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 < v <= maximum:
            raise self._err(key, f"= {v!r}: must be a positive number up to {maximum:g}")
        return float(v)

    def bool(self, key: str, default: bool) -> bool:
        v = self.data.get(key, default)
        if v is None:
            return default
        if not isinstance(v, bool):
            raise self._err(key, f"= {v!r}: must be true or false")
        return v


def _architecture(cfg: _Cfg) -> str:
    archs = cfg.data.get("architectures")
    if archs is not None:
        if not isinstance(archs, list) or not archs or not all(isinstance(a, str) for a in archs):
            raise cfg._err("architectures", f"= {archs!r}: must be a non-empty list of class names")
        for a in archs:
            if a in _FAMILY:
                return a
        raise cfg._err(
            "architectures",
            f"= {archs!r}: unsupported; supported: {', '.join(SUPPORTED_ARCHITECTURES)}",
        )
    mt = cfg.data.get("model_type")
    if isinstance(mt, str) and mt in _MODEL_TYPES:
        return _MODEL_TYPES[mt]
    raise cfg._err(
        "architectures",
        f"missing, and model_type = {mt!r} is not one of {', '.join(sorted(_MODEL_TYPES))}",
    )


def _ffn_act(cfg: _Cfg) -> str:
    act = cfg.data.get("hidden_act", "silu")
    if not isinstance(act, str) or act not in _GATED_ACTS:
        raise cfg._err("hidden_act", f"= {act!r}: only a gated SiLU FFN (silu) is supported for these models")
    return _GATED_ACTS[act]


def _seq_len(cfg: _Cfg, override: int | None) -> tuple[int, str]:
    """The pre-training context and a note saying where it came from.

    ``rope_scaling`` extends a model's context after pre-training. YaRN, Llama 3.1 ("llama3") and
    LongRoPE configs name the pre-training length as ``original_max_position_embeddings`` (DeepSeek-V3:
    4096 of 163840; Llama 3.1: 8192 of 131072). Linear and dynamic NTK scaling leave
    ``max_position_embeddings`` at the trained length and stretch it by ``factor`` at inference.
    """
    if override is not None:
        return override, ""
    scaling = cfg.data.get("rope_scaling")
    if scaling is None:
        return cfg.int("max_position_embeddings", maximum=_MAX_SEQ), ""
    if not isinstance(scaling, Mapping):
        raise cfg._err("rope_scaling", f"= {scaling!r}: must be a mapping (or null)")
    kind = scaling.get("rope_type", scaling.get("type"))
    orig = scaling.get("original_max_position_embeddings")
    if orig is not None:
        if isinstance(orig, bool) or not isinstance(orig, int) or not 1 <= orig <= _MAX_SEQ:
            raise cfg._err(
                "rope_scaling.original_max_position_embeddings", f"= {orig!r}: must be an integer 1 .. {_MAX_SEQ:,}"
            )
        ext = cfg.data.get("max_position_embeddings")
        return orig, f"seq_len {orig:,}: pre-training context from rope_scaling ({kind}; extended to {ext})."
    n = cfg.int("max_position_embeddings", maximum=_MAX_SEQ)
    factor = scaling.get("factor")
    return n, f"seq_len {n:,}: max_position_embeddings, which {kind} rope_scaling (factor {factor}) extends at use."


def _yarn_attention_factor(cfg: _Cfg) -> float | None:
    """YaRN's attention factor on the rotary cos/sin from ``rope_scaling`` (``rope_type`` "yarn"); None
    for any other scaling or none.

    ``attention_factor`` when given; otherwise ``m(factor, mscale) / m(factor, mscale_all_dim)`` when
    both are given (DeepSeek-V3: 1.0), else ``m(factor, 1)``, with ``m(s, a) = 0.1 a ln(s) + 1`` for
    ``s > 1`` and 1 otherwise (Peng et al. 2023, Sec. 3.4; transformers ``_compute_yarn_parameters``;
    Megatron-Core ``_yarn_get_concentration_factor``, core 0.15-0.17).
    """
    scaling = cfg.data.get("rope_scaling")
    if not isinstance(scaling, Mapping) or scaling.get("rope_type", scaling.get("type")) != "yarn":
        return None

    def num(key: str, default: float | None) -> float | None:
        v = scaling.get(key, default)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 < v <= 1e6:
            raise cfg._err(f"rope_scaling.{key}", f"= {v!r}: must be a positive number up to 1e+06")
        return float(v)

    given = num("attention_factor", None)
    if given is not None:
        return given
    factor = num("factor", 1.0)
    assert factor is not None

    def m(a: float) -> float:
        return 0.1 * a * math.log(factor) + 1.0 if factor > 1.0 else 1.0

    mscale, mscale_all = num("mscale", None), num("mscale_all_dim", None)
    if mscale is not None and mscale_all is not None:
        return m(mscale) / m(mscale_all)
    return m(1.0)


def _moe_block(cfg: _Cfg, family: str, n_layers: int) -> tuple[dict[str, Any] | None, str]:
    """The ``moe`` mapping and a note on anything approximated."""
    if family in ("mixtral", "gpt_oss"):
        return {
            "n_experts": cfg.int("num_local_experts"),
            "top_k": cfg.int("num_experts_per_tok"),
            "n_shared_experts": 0,
            "expert_ffn_hidden": cfg.int("intermediate_size"),
            "n_dense_layers": 0,
            # GPT-OSS experts carry biases (transformers GptOssExperts gate_up_proj_bias / down_proj_bias)
            **({"expert_bias": True} if family == "gpt_oss" else {}),
        }, ""
    if family == "qwen_moe":
        expert = cfg.int("moe_intermediate_size")
        note = ""
        shared = 0
        if cfg.has("shared_expert_intermediate_size"):
            s = cfg.int("shared_expert_intermediate_size", minimum=0)
            shared = round(s / expert)
            if shared * expert != s:
                note += f"shared expert of {s} counted as {shared} x {expert}. "
        step = cfg.int("decoder_sparse_step", 1)
        dense_only = cfg.data.get("mlp_only_layers") or []
        if not isinstance(dense_only, list) or not all(isinstance(i, int) for i in dense_only):
            raise cfg._err("mlp_only_layers", f"= {dense_only!r}: must be a list of layer indices")
        moe_layers = [i for i in range(n_layers) if i not in dense_only and (i + 1) % step == 0]
        n_dense = n_layers - len(moe_layers)
        if n_dense and moe_layers != list(range(n_dense, n_layers)):
            note += f"{n_dense} dense layers are interleaved in the source, modelled as leading layers. "
        return {
            "n_experts": cfg.int("num_experts"),
            "top_k": cfg.int("num_experts_per_tok"),
            "n_shared_experts": shared,
            "expert_ffn_hidden": expert,
            "n_dense_layers": n_dense,
        }, note
    if family == "deepseek":
        freq = cfg.int("moe_layer_freq", 1)
        note = ""
        if freq != 1:
            note = f"moe_layer_freq = {freq} not modelled (all layers after the dense ones are MoE). "
        return {
            "n_experts": cfg.int("n_routed_experts"),
            "top_k": cfg.int("num_experts_per_tok"),
            "n_shared_experts": cfg.int("n_shared_experts", 0, minimum=0),
            "expert_ffn_hidden": cfg.int("moe_intermediate_size"),
            "n_dense_layers": cfg.int("first_k_dense_replace", 0, minimum=0),
        }, note
    return None, ""


# ------------------------------------------------ layer patterns, sinks, hybrid mixers, routing groups
# Hugging Face ``layer_types`` names (transformers' ``layer_type_validation``) -> ModelSpec mixers.
_LAYER_TYPES = {
    "full_attention": "global",
    "sliding_attention": "sliding",
    "chunked_attention": "chunked",
    "linear_attention": "linear",
    "mamba": "ssm",
}
# Architectures whose every attention layer carries a learned sink logit per head (GPT-OSS model card).
_SINK_ARCHS = frozenset({"GptOssForCausalLM"})
# Architectures whose full-attention output is gated by a projection of x (Qwen3-Next "gated attention").
_GATED_ATTENTION_ARCHS = frozenset({"Qwen3NextForCausalLM"})


def _period(kinds: list[str]) -> list[str]:
    """The shortest prefix whose cyclic repetition gives ``kinds``."""
    n = len(kinds)
    for p in range(1, n + 1):
        if all(kinds[i] == kinds[i % p] for i in range(n)):
            return kinds[:p]
    return kinds


def _layer_types(cfg: _Cfg, n_layers: int) -> list[str] | None:
    """The per-layer mixers from ``layer_types`` or Qwen3-Next's ``full_attention_interval``."""
    raw = cfg.data.get("layer_types")
    if raw is not None:
        if not isinstance(raw, list) or len(raw) != n_layers or not all(isinstance(t, str) for t in raw):
            raise cfg._err("layer_types", f"must be a list of num_hidden_layers = {n_layers} layer-type names")
        bad = sorted({t for t in raw if t not in _LAYER_TYPES})
        if bad:
            raise cfg._err("layer_types", f"unsupported layer type(s) {bad}; supported: {', '.join(_LAYER_TYPES)}")
        return [_LAYER_TYPES[t] for t in raw]
    if cfg.has("full_attention_interval") and cfg.has("linear_num_value_heads"):
        k = cfg.int("full_attention_interval")
        return ["global" if (i + 1) % k == 0 else "linear" for i in range(n_layers)]
    return None


def _layer_mix(cfg: _Cfg, arch: str, spec: dict[str, Any]) -> str:
    """Add layer pattern, window, sinks, linear-attention and routing-group fields to ``spec``;
    returns a note on anything inferred."""
    note = ""
    kinds = _layer_types(cfg, int(spec["n_layers"]))
    uses_window = cfg.data.get("use_sliding_window") is not False
    if kinds is None and uses_window and cfg.has("sliding_window") and _FAMILY[arch] in ("dense", "mixtral"):
        kinds = ["sliding"] * int(spec["n_layers"])  # Mistral-style: every layer windowed
    if kinds is not None and set(kinds) != {"global"}:
        spec["layer_pattern"] = _period(kinds)
        if "sliding" in kinds:
            spec["sliding_window"] = cfg.int("sliding_window")
        if "chunked" in kinds:
            spec["attention_chunk"] = cfg.int("attention_chunk_size")
        if "linear" in kinds:
            spec["linear_attention"] = {
                "kind": "gated_deltanet",
                "n_qk_heads": cfg.int("linear_num_key_heads"),
                "n_v_heads": cfg.int("linear_num_value_heads"),
                "qk_head_dim": cfg.int("linear_key_head_dim"),
                "v_head_dim": cfg.int("linear_value_head_dim"),
                "conv_kernel": cfg.int("linear_conv_kernel_dim", 4),
            }
    if arch in _SINK_ARCHS:
        spec["attention_sinks"] = True
    if arch in _GATED_ATTENTION_ARCHS:
        spec["attention_output_gate"] = True
    moe = spec.get("moe")
    if moe is not None and cfg.int("n_group", 1) > 1:
        moe["n_groups"] = cfg.int("n_group")
        moe["topk_groups"] = cfg.int("topk_group", moe["n_groups"])
        note += (
            f"group-limited routing: experts in {moe['n_groups']} groups, a token picks from {moe['topk_groups']}; "
            "with one group per node this is node-limited routing (DeepSeek-V3 Sec. 2.1.2, M = topk_group). "
        )
    return note


def model_from_hf_config(
    data: Any, *, name: str | None = None, seq_len: int | None = None, source: str | None = None
) -> ModelSpec:
    """A ModelSpec from a parsed ``config.json`` mapping; bad or unsupported input is a SpecError."""
    if not isinstance(data, Mapping):
        raise SpecError(
            f"expected a JSON object at the top level, got {type(data).__name__}", field="(top level)", source=source
        )
    cfg = _Cfg(data, source)
    arch = _architecture(cfg)
    family = _FAMILY[arch]
    hidden = cfg.int("hidden_size")
    n_heads = cfg.int("num_attention_heads")
    n_layers = cfg.int("num_hidden_layers", maximum=_MAX_LAYERS)
    seq, seq_note = _seq_len(cfg, seq_len)
    spec: dict[str, Any] = {
        "name": name or str(data.get("_name_or_path") or "imported").rstrip("/").split("/")[-1],
        "type": "dense",
        "n_layers": n_layers,
        "hidden": hidden,
        "n_heads": n_heads,
        "n_kv_heads": cfg.int("num_key_value_heads", n_heads),
        "ffn_hidden": cfg.int("intermediate_size"),
        "ffn_act": _ffn_act(cfg),
        "vocab": cfg.int("vocab_size"),
        "seq_len": seq,
        "tied_embeddings": cfg.bool("tie_word_embeddings", False),
    }
    if family != "deepseek" and cfg.has("head_dim"):
        hd = cfg.int("head_dim")
        if hd * n_heads != hidden:
            spec["head_dim"] = hd
    if family == "gpt_oss" and cfg.has("swiglu_limit"):
        spec["ffn_act_clamp"] = cfg.number("swiglu_limit", maximum=1e6)
    yarn = _yarn_attention_factor(cfg)
    if yarn is not None and yarn != 1.0:
        spec["rope_attention_factor"] = yarn
    moe, note = _moe_block(cfg, family, n_layers)
    if moe is not None:
        spec["type"] = "moe"
        spec["moe"] = moe
    if family == "deepseek":
        spec["attention"] = {
            "kind": "mla",
            "q_lora_rank": cfg.int("q_lora_rank", 0, minimum=0),
            "kv_lora_rank": cfg.int("kv_lora_rank"),
            "qk_nope_head_dim": cfg.int("qk_nope_head_dim"),
            "qk_rope_head_dim": cfg.int("qk_rope_head_dim"),
            "v_head_dim": cfg.int("v_head_dim"),
        }
        spec["mtp_layers"] = cfg.int("num_nextn_predict_layers", 0, minimum=0)
    note += _layer_mix(cfg, arch, spec)
    spec["source"] = f"Hugging Face config.json ({arch})" + (f": {source}" if source else "")
    spec["notes"] = (seq_note + " " + note).strip()
    return parse_model(spec, source)


def load_hf_config(path: str | Path, *, name: str | None = None, seq_len: int | None = None) -> ModelSpec:
    """Read a ``config.json`` file; malformed JSON is a SpecError with the line number."""
    p = Path(path)
    data = fileio.read_json(p, field="config")
    if name is None and p.stem == "config" and p.parent.name:
        name = p.parent.name
    elif name is None:
        name = p.stem
    return model_from_hf_config(data, name=name, seq_len=seq_len, source=str(p))
