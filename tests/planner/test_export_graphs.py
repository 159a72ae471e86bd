"""CUDA-graph flags in the exported launch arguments: full per-layer graphs, or the partial Transformer
Engine scope (attention, router, dispatcher preprocessing) that leaves the MoE block eager."""

from wanka.planner.export import launch_args
from wanka.spec import Scenario, parse_scenario


def _sc(model: str, **parallel: object) -> Scenario:
    ep = 8 if model == "gpt-oss-120b" else 1
    return parse_scenario(
        {
            "cluster": {"accelerator": "GB300", "nodes": 2},
            "model": model,
            "training": {"global_batch_seqs": 64, "micro_batch": 1, "seq_len": 4096, "precision": "bf16"},
            "parallel": {"tp": 1, "pp": 1, "dp": 8, "ep": ep, "zero": 1, **parallel},
        }
    )


def test_partial_scope_exports_the_transformer_engine_graph_scope() -> None:
    sc = _sc("gpt-oss-120b", cuda_graphs=True, cuda_graphs_moe=False)
    mg, nm = launch_args(sc, "megatron"), launch_args(sc, "nemo")
    assert "--cuda-graph-impl transformer_engine" in mg
    assert "--cuda-graph-scope attn moe_router moe_preprocess" in mg
    assert "--enable-cuda-graph" not in mg
    assert "model.config.cuda_graph_scope=[attn,moe_router,moe_preprocess]" in nm
    assert "model.config.enable_cuda_graph=true" not in nm


def test_full_graphs_and_dense_models_keep_the_plain_switch() -> None:
    for sc in (_sc("gpt-oss-120b", cuda_graphs=True), _sc("llama3-8b", cuda_graphs=True, cuda_graphs_moe=False)):
        mg, nm = launch_args(sc, "megatron"), launch_args(sc, "nemo")
        assert "--enable-cuda-graph" in mg and not any("cuda-graph-scope" in a for a in mg)
        assert "model.config.enable_cuda_graph=true" in nm
    off = _sc("gpt-oss-120b", cuda_graphs=False, cuda_graphs_moe=False)
    assert not any("cuda" in a for a in launch_args(off, "megatron") + launch_args(off, "nemo"))


def test_activation_offload_is_exported_for_megatron_and_nemo() -> None:
    # Megatron-Core's flag (cpu_offloading_num_layers > 0 turns cpu_offloading on) and Megatron-Bridge's
    # activation-only override: a plan that fits only by offloading must not export a launch that OOMs
    sc = _sc("llama3-8b", recompute="none", offload_layers=16)
    assert "--cpu-offloading-num-layers 16" in launch_args(sc, "megatron")
    nm = launch_args(sc, "nemo")
    assert "model.config.cpu_offloading=true" in nm and "model.config.cpu_offloading_num_layers=16" in nm
    assert "model.config.cpu_offloading_weights=false" in nm
    plain = _sc("llama3-8b", recompute="none")
    assert not any("offload" in a for a in launch_args(plain, "megatron") + launch_args(plain, "nemo"))
