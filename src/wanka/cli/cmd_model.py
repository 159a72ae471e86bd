"""``wanka model import config.json`` (Hugging Face -> model spec) and ``wanka model show NAME``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from wanka.cli.app import app, check_output_path, console, emit_json, print_table, write_text_atomic
from wanka.cli.lang import tr, tx
from wanka.errors import SpecError
from wanka.spec import ModelSpec, dump_json, dump_yaml, load_model
from wanka.spec.hf_import import load_hf_config

__all__ = ["approx_parameters"]

model_app = typer.Typer(help="Model specs: import a Hugging Face config.json, show a preset.", no_args_is_help=True)
app.add_typer(model_app, name="model")


def approx_parameters(m: ModelSpec) -> tuple[float, float]:
    """(total, active per token) parameter counts from the architecture, MTP modules excluded.

    Attention: Q/K/V/O projections (GQA) or the MLA low-rank projections (DeepSeek-V2 paper, Sec. 2.1);
    FFN: 3·h·f (gated) or 2·h·f (GeLU); MoE: every expert plus the router, active = top-k + shared;
    embeddings (and an untied output layer); RMSNorm weights. Biases are ignored. The engine owns the
    exact counts; this is a display figure.
    """
    h, d = m.hidden, m.kv_channels
    if m.attention is not None:
        a = m.attention
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        q = h * a.q_lora_rank + a.q_lora_rank * m.n_heads * qk if a.q_lora_rank else h * m.n_heads * qk
        kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank * m.n_heads * (
            a.qk_nope_head_dim + a.v_head_dim
        )
        attn = q + kv + m.n_heads * a.v_head_dim * h + a.q_lora_rank + a.kv_lora_rank
    else:
        attn = 2 * h * m.n_heads * d + 2 * h * m.n_kv_heads * d
    mats = 3 if m.ffn_act == "swiglu" else 2
    dense_ffn = mats * h * m.ffn_hidden
    norms = 2 * h
    n_dense = m.n_layers - m.n_moe_layers
    total = active = float(m.n_layers * (attn + norms) + n_dense * dense_ffn)
    if m.moe is not None:
        expert = mats * h * m.moe.expert_ffn_hidden
        router = h * m.moe.n_experts
        total += m.n_moe_layers * ((m.moe.n_experts + m.moe.n_shared_experts) * expert + router)
        active += m.n_moe_layers * ((m.moe.top_k + m.moe.n_shared_experts) * expert + router)
    emb = m.vocab * h * (1 if m.tied_embeddings else 2) + h
    return total + emb, active + emb


@model_app.command("import")
def import_cmd(
    config: Annotated[Path, typer.Argument(help="a Hugging Face config.json")],
    name: Annotated[str | None, typer.Option("--name", help="model name (default: the folder or file name)")] = None,
    seq_len: Annotated[int | None, typer.Option("--seq-len", help="training sequence length override")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="write the spec to this .yaml/.json file")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print JSON instead of YAML")] = False,
) -> None:
    """Convert a config.json (Llama, Mistral, Mixtral, Qwen2/3, Qwen-MoE, DeepSeek-V2/V3) to a model spec."""
    if seq_len is not None and seq_len < 1:
        raise SpecError(f"= {seq_len!r}: must be a positive integer", field="--seq-len")
    check_output_path(out, field="--out")
    m = load_hf_config(config, name=name, seq_len=seq_len)
    text = dump_json(m) if json_out or (out is not None and out.suffix == ".json") else dump_yaml(m)
    if out is not None:
        write_text_atomic(out, text if text.endswith("\n") else text + "\n", field="--out")
    if json_out:
        emit_json(m.model_dump(mode="json"))
    elif out is None:
        console.print(text, markup=False, highlight=False, end="")
    else:
        console.print(f"wrote {out}", markup=False)


@model_app.command("show")
def show_cmd(
    model: Annotated[str, typer.Argument(help="model preset name or a model .yaml file")],
    json_out: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """A model spec with approximate total and active parameter counts."""
    m = load_model(model)
    total, active = approx_parameters(m)
    if json_out:
        emit_json({**m.model_dump(mode="json"), "params_total": total, "params_active": active})
        return
    t = Table(show_header=False, box=None)
    t.add_column(style="bold")
    t.add_column(overflow="fold")
    t.add_row("model", f"{m.name} ({m.type})")
    t.add_row(
        tx("parameters"),
        tr(
            f"{total / 1e9:,.1f} B total · {active / 1e9:,.1f} B active per token (approx.)",
            f"总计 {total / 1e9:,.1f} B · 每 token 激活 {active / 1e9:,.1f} B (近似)",
        ),
    )
    heads = f"heads {m.n_heads} (kv {m.n_kv_heads}" + (f", head dim {m.kv_channels})" if m.attention is None else ")")
    t.add_row(
        "shape",
        f"{m.n_layers} layers · hidden {m.hidden} · {heads} · FFN {m.ffn_hidden} {m.ffn_act} · "
        f"vocab {m.vocab:,} · seq {m.seq_len:,}",
    )
    if m.moe is not None:
        t.add_row(
            "MoE",
            f"{m.moe.n_experts} experts top-{m.moe.top_k} + {m.moe.n_shared_experts} shared, expert FFN "
            f"{m.moe.expert_ffn_hidden}, {m.moe.n_dense_layers} dense layers",
        )
    if m.attention is not None:
        a = m.attention
        t.add_row(
            "MLA",
            f"q rank {a.q_lora_rank} · kv rank {a.kv_lora_rank} · qk {a.qk_nope_head_dim}+"
            f"{a.qk_rope_head_dim} · v {a.v_head_dim}",
        )
    if m.mtp_layers:
        t.add_row("MTP", f"{m.mtp_layers} module(s) (not in the counts)")
    t.add_row("source", m.source)
    if m.notes:
        t.add_row("notes", m.notes)
    print_table(t)
