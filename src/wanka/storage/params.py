"""Parameter count of a transformer from its :class:`~wanka.spec.ModelSpec` (total and active per token).

The canonical count lives in :func:`wanka.workload.parameter_count`; this function is the
``(total, active)`` view that ``storage`` and ``facility`` use.

What is counted (weights only; biases are left out — under 0.1 % for the models wanka describes):

* embeddings ``vocab·hidden``, plus an output head of the same size unless ``tied_embeddings``;
* attention per layer — MHA/GQA: ``Q`` and ``O`` are ``hidden × n_heads·d``, ``K`` and ``V`` are
  ``hidden × n_kv_heads·d`` (Ainslie et al. 2023, GQA); MLA per DeepSeek-V2/V3 (DeepSeek-AI 2024,
  §2.1.2): ``W_DQ`` ``hidden×q_lora``, ``W_UQ`` ``q_lora × heads·(nope+rope)`` (or ``W_Q`` directly
  when ``q_lora_rank`` = 0), ``W_DKV`` ``hidden × (kv_lora+rope)``, ``W_UKV`` ``kv_lora ×
  heads·(nope+v)``, ``W_O`` ``heads·v × hidden``, and RMSNorms on the two latents;
* FFN — SwiGLU three ``hidden × ffn`` matrices (Shazeer 2020), GeLU two;
* MoE layers — ``n_experts`` routed and ``n_shared_experts`` shared expert FFNs of size
  ``expert_ffn_hidden`` and a ``hidden × n_experts`` router (GShard; DeepSeek-V3 §2.1); the first
  ``n_dense_layers`` keep a dense FFN of ``ffn_hidden``;
* norms — two per layer and a final one, ``hidden`` each;
* MTP modules (DeepSeek-V3 §2.2) — one more transformer layer each (MoE when the model is), a
  ``2·hidden × hidden`` projection and two norms; embeddings and head are shared.

Active parameters per token replace the routed experts by ``top_k`` of them.

>>> from wanka.spec import parse_model
>>> m = parse_model(dict(n_layers=70, hidden=14336, n_heads=112, n_kv_heads=112, ffn_hidden=57344,
...                      ffn_act="gelu", vocab=250880, seq_len=2048, tied_embeddings=True))
>>> round(parameter_count(m)[0] / 1e9, 1)  # BLOOM-176B (176,247 M reported, biases included)
176.2
"""

from __future__ import annotations

from wanka.spec.model import ModelSpec
from wanka.workload import parameter_count as _count

__all__ = ["parameter_count"]


def parameter_count(model: ModelSpec) -> tuple[int, int]:
    """(total, active-per-token) parameters of ``model``."""
    p = _count(model)
    return p.total, p.active
