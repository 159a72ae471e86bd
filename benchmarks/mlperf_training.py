"""MLPerf Training submissions as validation cases: ``benchmarks/extra_runs/mlperf_training.yaml`` is generated here.

Each row names a submission's result folder and launch config in an MLPerf Training results repository
(mlcommons/training_results_vX.Y). Its steady-state throughput is read from the submission's own MLLOG result
files, which time training apart from evaluation in one of three ways:

- ``train_step_time`` records (``tracked_stats``, v5.x): every step's time; the first five of a run are dropped
  (warm-up, CUDA-graph capture);
- ``block_start`` .. ``block_stop`` (v3.1-v5.1): the training between two evaluations, of ``epoch_count``
  tokens (or ``samples_count`` sequences); the first block of a run is dropped;
- ``eval_stop`` .. the next ``eval_start`` (v3.0, whose logs open one block for the whole run), of the
  ``epoch_num`` step between evaluations; the span before the first evaluation is dropped.

The case's tokens/s is the median over all runs' spans; the layout, precision and software come from the
row's config (recorded below with what each implies, in every case's notes). The logged global batch and
gradient accumulation must agree with the row's layout (an assertion).

    python -m benchmarks.mlperf_training --repos DIR            # regenerate and compare with the file
    python -m benchmarks.mlperf_training --repos DIR --write    # rewrite the file

``DIR`` holds the results repositories, each as a plain checkout ``DIR/training_results_vX.Y`` or a bare git
directory ``DIR/mlcommons+training_results_vX.Y/repo`` (read with ``git show``). Nothing is downloaded.
Hand-written: the log format is a few JSON-lines keys, and which spans count as steady state is this
project's judgement, documented per case.
"""

# ruff: noqa: E501  (a data table: rows and notes read best whole)
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).resolve().parent / "extra_runs" / "mlperf_training.yaml"

# fmt: off
GPT3: dict[str, object] = dict(type="dense", n_layers=96, hidden=12288, n_heads=96, n_kv_heads=96, ffn_hidden=49152, ffn_act="gelu",
            vocab=50688, seq_len=2048, tied_embeddings=True, moe=None, attention=None)
L405: dict[str, object] = dict(type="dense", n_layers=126, hidden=16384, n_heads=128, n_kv_heads=8, ffn_hidden=53248, ffn_act="swiglu",
            vocab=32768, seq_len=8192, tied_embeddings=False, moe=None, attention=None)
L8: dict[str, object] = dict(type="dense", n_layers=32, hidden=4096, n_heads=32, n_kv_heads=8, ffn_hidden=14336, ffn_act="swiglu",
          vocab=128256, seq_len=8192, tied_embeddings=False, moe=None, attention=None)
L8_NOTE = ("Llama 3.1 8B (32 x 4096, 32 heads, 8 KV heads, FFN 14336 SwiGLU, untied; NeMo's Llama31Config8B) at the benchmark's "
           "seq 8192 with the Llama 3.1 tokenizer (vocab 128,256; the benchmark's llama-3-1-8b-tokenizer). ")
GPT3_NOTE = ("GPT-3 175B as the MLPerf benchmark defines it (the submission's NeMo model config, conf/*.yaml: "
             "96 x 12288, 96 heads, FFN 4h GeLU, seq 2048, shared embeddings); vocab: the benchmark's SentencePiece C4 model, 50,257 "
             "entries (the reference's PassThroughVocabulary(size=50257)), padded by NeMo to a multiple of 128 x TP = 512 -> 50,688. ")
L405_NOTE = ("Llama 3.1 405B as the MLPerf benchmark defines it (126 x 16384, 128 heads, 8 KV heads, FFN 53248 SwiGLU, seq 8192, "
             "untied) with the Mixtral 8x22B tokenizer (vocab 32,768) in place of the paper's (submission README Sec. 3.3.2). "
             "ASYM_PP_EMBED / ASYM_PP_LOSS: the embedding and the loss count as pipeline layers (126 + 2 over PP x VP chunks). ")
# id, version, results dir, implementation config, gpu, nodes, gpus/node, domain, nic, tp, pp, cp, vpp, mbs, release, model, fabric note
R: list[tuple[Any, ...]] = [
 ("mlperf30_gpt3_175b_h100_512g", "v3.0", "NVIDIA/results/dgxh100_n64_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_64x8x128x4x8_mbs1.sh", "H100-SXM5-80GB", 64, 8, 8, 400, 4, 8, 1, 12, 1, "23.04", "gpt3", "dgx30"),
 ("mlperf30_gpt3_175b_h100_768g", "v3.0", "NVIDIA/results/dgxh100_n96_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_96x8x128x4x8_mbs1.sh", "H100-SXM5-80GB", 96, 8, 8, 400, 4, 8, 1, 12, 1, "23.04", "gpt3", "dgx30"),
 ("mlperf30_gpt3_175b_h100_cw_768g", "v3.0", "NVIDIA_CoreWeave/results/coreweave_hgxh100_n96_ngc23.04_pytorch/gpt3", "NVIDIA_CoreWeave/benchmarks/gpt3/implementations/pytorch/config_DGXH100_96x8x128x4x8_mbs1.sh", "H100-SXM5-80GB", 96, 8, 8, 400, 4, 8, 1, 12, 1, "23.04", "gpt3", "coreweave"),
 ("mlperf30_gpt3_175b_h100_cw_1536g", "v3.0", "NVIDIA_CoreWeave/results/coreweave_hgxh100_n192_ngc23.04_pytorch/gpt3", "NVIDIA_CoreWeave/benchmarks/gpt3/implementations/pytorch/config_DGXH100_192x8x64x4x8_mbs1.sh", "H100-SXM5-80GB", 192, 8, 8, 400, 4, 8, 1, 12, 1, "23.04", "gpt3", "coreweave"),
 ("mlperf30_gpt3_175b_h100_cw_3584g", "v3.0", "NVIDIA_CoreWeave/results/coreweave_hgxh100_n448_ngc23.04_pytorch/gpt3", "NVIDIA_CoreWeave/benchmarks/gpt3/implementations/pytorch/config_DGXH100_448x8x24x4x8_mbs1.sh", "H100-SXM5-80GB", 448, 8, 8, 400, 4, 8, 1, 12, 1, "23.04", "gpt3", "coreweave"),
 ("mlperf31_gpt3_175b_h100_512g", "v3.1", "NVIDIA/results/eos_n64_ngc23.09_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_64x8x192x4x8_mbs1.sh", "H100-SXM5-80GB", 64, 8, 8, 400, 4, 8, 1, 12, 1, "23.09", "gpt3", "eos"),
 ("mlperf31_gpt3_175b_h100_768g", "v3.1", "NVIDIA/results/eos_n96_ngc23.09_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_96x8x128x4x8_mbs1.sh", "H100-SXM5-80GB", 96, 8, 8, 400, 4, 8, 1, 12, 1, "23.09", "gpt3", "eos"),
 ("mlperf31_gpt3_175b_h100_4096g", "v3.1", "NVIDIA/results/eos-dfw_n512_ngc23.09_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_512x8x16x4x8_mbs1.sh", "H100-SXM5-80GB", 512, 8, 8, 400, 4, 8, 1, 12, 1, "23.09", "gpt3", "eos"),
 ("mlperf31_gpt3_175b_h100_6144g", "v3.1", "NVIDIA/results/eos-dfw_n768_ngc23.09_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_768x8x16x4x8_mbs1.sh", "H100-SXM5-80GB", 768, 8, 8, 400, 4, 8, 1, 12, 1, "23.09", "gpt3", "eos"),
 ("mlperf31_gpt3_175b_h100_8192g", "v3.1", "NVIDIA/results/eos-dfw_n1024_ngc23.09_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_1024x8x16x4x8_mbs1.sh", "H100-SXM5-80GB", 1024, 8, 8, 400, 4, 8, 1, 12, 1, "23.09", "gpt3", "eos"),
 ("mlperf31_gpt3_175b_h100_10240g", "v3.1", "NVIDIA/results/eos-dfw_n1280_ngc23.09_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_1280x8x8x4x8_mbs1.sh", "H100-SXM5-80GB", 1280, 8, 8, 400, 4, 8, 1, 12, 1, "23.09", "gpt3", "eos"),
 ("mlperf31_gpt3_175b_h100_10752g", "v3.1", "NVIDIA/results/eos-dfw_n1344_ngc23.09_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_1344x8x8x4x8_mbs1.sh", "H100-SXM5-80GB", 1344, 8, 8, 400, 4, 8, 1, 12, 1, "23.09", "gpt3", "eos"),
 ("mlperf31_gpt3_175b_h100_azure_10752g", "v3.1", "Azure+NVIDIA/results/ND_H100_v5_n1344_pytorch/gpt3", "Azure+NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_1344x8x8x4x8_mbs1.sh", "H100-SXM5-80GB", 1344, 8, 8, 400, 4, 8, 1, 12, 1, "23.09", "gpt3", "azure"),
 ("mlperf40_gpt3_175b_h100_512g", "v4.0", "NVIDIA/results/eos_n64_ngc24.04_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/nemo/config_DGXH100_64x8x128x4x8_mbs2.sh", "H100-SXM5-80GB", 64, 8, 8, 400, 4, 8, 1, 4, 2, "24.04", "gpt3", "eos"),
 ("mlperf40_gpt3_175b_h100_10752g", "v4.0", "NVIDIA/results/eos-dfw_n1344_ngc24.04_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/nemo/config_DGXH100_1344x8x6x4x6_mbs1_cg.sh", "H100-SXM5-80GB", 1344, 8, 8, 400, 4, 6, 1, 8, 1, "24.04", "gpt3", "eos"),
 ("mlperf40_gpt3_175b_h100_11616g", "v4.0", "NVIDIA/results/eos-dfw_n1452_ngc24.04_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/nemo/config_DGXH100_1452x8x6x4x6_mbs1_cg.sh", "H100-SXM5-80GB", 1452, 8, 8, 400, 4, 6, 1, 8, 1, "24.04", "gpt3", "eos"),
 ("mlperf41_gpt3_175b_h100_256g", "v4.1", "NVIDIA/results/eos_n32_ngc24.09_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/eos_n32_ngc24.09_nemo/config_DGXH100_32x8x256x4x8_mbs2.sh", "H100-SXM5-80GB", 32, 8, 8, 400, 4, 8, 1, 6, 2, "24.09", "gpt3", "eos"),
 ("mlperf41_gpt3_175b_h100_512g", "v4.1", "NVIDIA/results/eos_n64_ngc24.09_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/eos_n64_ngc24.09_nemo/config_DGXH100_64x8x128x4x8_mbs2.sh", "H100-SXM5-80GB", 64, 8, 8, 400, 4, 8, 1, 6, 2, "24.09", "gpt3", "eos"),
 ("mlperf41_gpt3_175b_h100_oci_1536g", "v4.1", "Oracle/results/1536xBM.GPU.H100.8/gpt3", "Oracle/benchmarks/gpt3/DGXH100_128x8x64x4x8_mbs2/config_DGXH100_192x8x64x4x8_mbs2.sh", "H100-SXM5-80GB", 192, 8, 8, 400, 4, 8, 1, 4, 2, "24.09", "gpt3", "oci"),
 ("mlperf41_gpt3_175b_h100_oci_3072g", "v4.1", "Oracle/results/3072xBM.GPU.H100.8/gpt3", "Oracle/benchmarks/gpt3/DGXH100_128x8x64x4x8_mbs2/config_DGXH100_384x8x32x4x8_mbs2.sh", "H100-SXM5-80GB", 384, 8, 8, 400, 4, 8, 1, 4, 2, "24.09", "gpt3", "oci"),
 ("mlperf41_gpt3_175b_b200_64g", "v4.1", "NVIDIA/results/b200_n8_preview_nemo/gpt3", "NVIDIA/benchmarks/gpt3/implementations/b200_n8_preview_nemo/config_DGXB200_8x8x1024x4x8_mbs2_cg.sh", "B200", 8, 8, 8, 400, 4, 8, 1, 6, 2, "24.09", "gpt3", "b200"),
 ("mlperf50_llama31_405b_h100_512g", "v5.0", "NVIDIA/results/eos-dfw_n64_ngc25.01_nemo/llama31_405b", "NVIDIA/benchmarks/llama31_405b/implementations/eos-dfw_n64_ngc25.01_nemo/config_DGXH100_64x8x288xtp8pp8cp2.sh", "H100-SXM5-80GB", 64, 8, 8, 400, 8, 8, 2, 8, 1, "25.02", "l405", "eos"),
 ("mlperf50_llama31_405b_h100_2048g", "v5.0", "NVIDIA/results/eos-dfw_n256_ngc25.01_nemo/llama31_405b", "NVIDIA/benchmarks/llama31_405b/implementations/eos-dfw_n256_ngc25.01_nemo/config_DGXH100_256x8x72xtp8pp8cp2.sh", "H100-SXM5-80GB", 256, 8, 8, 400, 8, 8, 2, 8, 1, "25.02", "l405", "eos"),
 ("mlperf50_llama31_405b_h100_2432g", "v5.0", "NVIDIA/results/eos-dfw_n304_ngc25.01_nemo/llama31_405b", "NVIDIA/benchmarks/llama31_405b/implementations/eos-dfw_n304_ngc25.01_nemo/config_DGXH100_304x8x64xtp8pp8cp2.sh", "H100-SXM5-80GB", 304, 8, 8, 400, 8, 8, 2, 8, 1, "25.02", "l405", "eos"),
 ("mlperf50_llama31_405b_h100_2560g", "v5.0", "NVIDIA/results/eos-dfw_n320_ngc25.01_nemo/llama31_405b", "NVIDIA/benchmarks/llama31_405b/implementations/eos-dfw_n320_ngc25.01_nemo/config_DGXH100_320x8x56xtp8pp8cp2.sh", "H100-SXM5-80GB", 320, 8, 8, 400, 8, 8, 2, 8, 1, "25.02", "l405", "eos"),
 ("mlperf50_llama31_405b_h100_8192g", "v5.0", "NVIDIA/results/eos-dfw_n1024_ngc25.01_nemo/llama31_405b", "NVIDIA/benchmarks/llama31_405b/implementations/eos-dfw_n1024_ngc25.01_nemo/config_DGXH100_1024x8x24xtp8pp8cp2.sh", "H100-SXM5-80GB", 1024, 8, 8, 400, 8, 8, 2, 8, 1, "25.02", "l405", "eos"),
 ("mlperf50_llama31_405b_h200_512g", "v5.0", "Nebius/results/nebius_soperator_8xH200_n64_ngc25.01_nemo/llama31_405b", "Nebius/benchmarks/llama31_405b/implementations/nebius_soperator_8xH200_n64_ngc25.01_nemo/config_DGXH200_64x8x144xtp4pp8cp2.sh", "H200", 64, 8, 8, 400, 4, 8, 2, 8, 1, "25.02", "l405", "nebius"),
 ("mlperf50_llama31_405b_h200_1024g", "v5.0", "Nebius/results/nebius_soperator_8xH200_n128_ngc25.01_nemo/llama31_405b", "Nebius/benchmarks/llama31_405b/implementations/nebius_soperator_8xH200_n128_ngc25.01_nemo/config_DGXH200_128x8x72xtp4pp8cp2.sh", "H200", 128, 8, 8, 400, 4, 8, 2, 8, 1, "25.02", "l405", "nebius"),
 ("mlperf50_llama31_405b_gb200_256g", "v5.0", "NVIDIA/results/tyche_ngpu256_ngc25.04_nemo/llama31_405b", "NVIDIA/benchmarks/llama31_405b/implementations/tyche_ngpu256_ngc25.04_nemo/config_GB200_64x4x112xtp4pp8cp2_cg.sh", "GB200", 64, 4, 72, 400, 4, 8, 2, 8, 1, "25.04", "l405", "tyche"),
 ("mlperf50_llama31_405b_gb200_512g", "v5.0", "NVIDIA/results/tyche_ngpu512_ngc25.04_nemo/llama31_405b", "NVIDIA/benchmarks/llama31_405b/implementations/tyche_ngpu512_ngc25.04_nemo/config_GB200_128x4x112xtp4pp8cp2_cg_dplast.sh", "GB200", 128, 4, 72, 400, 4, 8, 2, 8, 1, "25.04", "l405", "tyche"),
 ("mlperf50_llama31_405b_gb200_cw_512g", "v5.0", "IBM+CoreWeave+NVIDIA/results/carina_ngpu512_ngc25.04_nemo/llama31_405b", "IBM+CoreWeave+NVIDIA/benchmarks/llama31_405b/implementations/carina_ngpu512_ngc25.04_nemo/config_GB200_128x4x112xtp4pp8cp2.sh", "GB200", 128, 4, 72, 400, 4, 8, 2, 8, 1, "25.04", "l405", "carina"),
 ("mlperf50_llama31_405b_gb200_cw_1024g", "v5.0", "IBM+CoreWeave+NVIDIA/results/carina_ngpu1024_ngc25.04_nemo/llama31_405b", "IBM+CoreWeave+NVIDIA/benchmarks/llama31_405b/implementations/carina_ngpu1024_ngc25.04_nemo/config_GB200_256x4x48xtp4pp8cp2.sh", "GB200", 256, 4, 72, 400, 4, 8, 2, 8, 1, "25.04", "l405", "carina"),
 ("mlperf50_llama31_405b_gb200_cw_1536g", "v5.0", "IBM+CoreWeave+NVIDIA/results/carina_ngpu1536_ngc25.04_nemo/llama31_405b", "IBM+CoreWeave+NVIDIA/benchmarks/llama31_405b/implementations/carina_ngpu1536_ngc25.04_nemo/config_GB200_384x4x48xtp4pp8cp2.sh", "GB200", 384, 4, 72, 400, 4, 8, 2, 8, 1, "25.04", "l405", "carina"),
 ("mlperf50_llama31_405b_gb200_cw_2048g", "v5.0", "IBM+CoreWeave+NVIDIA/results/carina_ngpu2048_ngc25.04_nemo/llama31_405b", "IBM+CoreWeave+NVIDIA/benchmarks/llama31_405b/implementations/carina_ngpu2048_ngc25.04_nemo/config_GB200_512x4x40xtp4pp8cp2.sh", "GB200", 512, 4, 72, 400, 4, 8, 2, 8, 1, "25.04", "l405", "carina"),
 ("mlperf50_llama31_405b_gb200_cw_2496g", "v5.0", "IBM+CoreWeave+NVIDIA/results/carina_ngpu2496_ngc25.04_nemo/llama31_405b", "IBM+CoreWeave+NVIDIA/benchmarks/llama31_405b/implementations/carina_ngpu2496_ngc25.04_nemo/config_GB200_624x4x32xtp4pp8cp2.sh", "GB200", 624, 4, 72, 400, 4, 8, 2, 8, 1, "25.04", "l405", "carina"),
 ("mlperf51_llama31_405b_b200_256g", "v5.1", "University-of-Florida/results/hpg.dgxb200x8.n32/llama31_405b", "University-of-Florida/benchmarks/llama31_405b/implementations/b200_nemo/config_DGXB200_64x8x144xtp4pp8cp2_cg.sh", "B200", 32, 8, 8, 400, 4, 8, 2, 8, 1, "25.09", "l405", "uf"),
 ("mlperf51_llama31_405b_b200_448g", "v5.1", "University-of-Florida/results/hpg.dgxb200x8.n56/llama31_405b", "University-of-Florida/benchmarks/llama31_405b/implementations/b200_nemo/config_DGXB200_64x8x144xtp4pp8cp2_cg.sh", "B200", 56, 8, 8, 400, 4, 8, 2, 8, 1, "25.09", "l405", "uf"),
 ("mlperf51_llama31_8b_gb200_72g", "v5.1", "NVIDIA/results/tyche_ngpu72_ngc25.09_nemo/llama31_8b", "NVIDIA/benchmarks/llama31_8b/implementations/nemo/config_GB200_18x4x1xtp1pp1cp2_8b.sh", "GB200", 18, 4, 72, 400, 1, 1, 2, 1, 1, "25.09", "l8", "tyche8b"),
 ("mlperf51_llama31_8b_gb200_512g", "v5.1", "NVIDIA/results/tyche_ngpu512_ngc25.09_nemo/llama31_8b", "NVIDIA/benchmarks/llama31_8b/implementations/nemo/config_GB200_128x4x1xtp2pp1cp4_8b.sh", "GB200", 128, 4, 72, 400, 2, 1, 4, 1, 1, "25.09", "l8", "tyche8b"),
 ("mlperf51_llama31_8b_gb300_72g", "v5.1", "NVIDIA/results/theia_ngpu72_ngc25.09_nemo/llama31_8b", "NVIDIA/benchmarks/llama31_8b/implementations/nemo/config_GB300_18x4x1xtp1pp1cp2_8b.sh", "GB300", 18, 4, 72, 800, 1, 1, 2, 1, 1, "25.09", "l8", "theia"),
 ("mlperf51_llama31_8b_gb300_512g", "v5.1", "NVIDIA/results/theia_ngpu512_ngc25.09_nemo/llama31_8b", "NVIDIA/benchmarks/llama31_8b/implementations/nemo/config_GB300_128x4x1xtp2pp1cp4_8b.sh", "GB300", 128, 4, 72, 800, 2, 1, 4, 1, 1, "25.09", "l8", "theia"),
 ("mlperf51_llama31_8b_mi355x_8g", "v5.1", "AMD/results/MI355X_EPYC_9575F_pytorch/llama31_8b", "AMD/benchmarks/llama31_8b/implementations/MI355X_EPYC_9575F_pytorch_llama3_8b/config_MI355X_1x8x1_8b.sh", "MI355X", 1, 8, 8, 400, 1, 1, 1, 1, 2, "25.09", "l8", "amd"),
 ("mlperf51_llama31_8b_mi355x_gigabyte_8g", "v5.1", "GigaComputing/results/G893-ZX1-AAX4_pytorch/llama31_8b", "GigaComputing/benchmarks/llama31_8b/implementations/MI355X/nemo/config_MI355X_1x8x1_8b.sh", "MI355X", 1, 8, 8, 400, 1, 1, 1, 1, 2, "25.09", "l8", "gigabyte"),
]
FABRIC: dict[str, str] = {
 "dgx30": "NVIDIA DGX H100 cluster (8 x 400 Gb/s per node assumed, the DGX H100's ConnectX-7)",
 "coreweave": "CoreWeave HGX H100 cluster (8 x 400 Gb/s InfiniBand NDR per node assumed)",
 "eos": "NVIDIA Eos (DGX H100 SuperPOD, 8 x 400 Gb/s InfiniBand NDR per node)",
 "azure": "Azure ND H100 v5 (8 x 400 Gb/s InfiniBand NDR per VM)",
 "oci": "OCI BM.GPU.H100.8 (RoCE v2; systems/1536xBM.GPU.H100.8.json: 'ROCE2'; 400 Gb/s per GPU assumed from the shape's 3.2 Tb/s)",
 "b200": "NVIDIA DGX B200 preview (8 x 400 Gb/s per node assumed)",
 "nebius": "Nebius H200 cluster (8 x 400 Gb/s InfiniBand per node assumed)",
 "tyche": "NVIDIA Tyche (GB200 NVL72 racks; 400 Gb/s ConnectX-7 per GPU assumed from the DGX GB200 reference design)",
 "amd": "One AMD MI355X platform (8 GPUs on Infinity Fabric; no scale-out traffic at DP 8 inside the node)",
 "gigabyte": ("One GIGABYTE G893-ZX1-AAX4 (8 x MI355X on Infinity Fabric). Micro-batch 2 from the log (GBS 32, gradient "
              "accumulation 2, DP 8) where the folder's config_MI355X_1x8x1_8b.sh says MBS=4"),
 "tyche8b": (
     "NVIDIA Tyche (GB200 NVL72 racks; systems/tyche_ngpu*_ngc25.09_nemo.json: 4x ConnectX-7 IB NDR 400 Gb/s a 4-GPU tray). Which "
     "config ran: the implementation folder's README-tyche_ngpu*_ngc25.09_nemo.md"),
 "theia": (
     "NVIDIA Theia (GB300 NVL72 racks; systems/theia_ngpu*_ngc25.09_nemo.json: 4x ConnectX-8 IB XDR 800 Gb/s a 4-GPU tray; the "
     "log's platform line says GB200, the system description and the config GB300). Which config ran: the implementation "
     "folder's README-theia_ngpu*_ngc25.09_nemo.md"),
 "uf": (
     "University of Florida HiPerGator DGX B200 (systems/hpg.dgxb200x8.n32.json: InfiniBand; 8 x 400 Gb/s per node assumed, "
     "the DGX B200's ConnectX-7). The folder's config is the 64-node one (MINIBS 144); the logged GBS and accumulation give "
     "the nodes that ran"),
 "carina": "CoreWeave Carina (GB200 NVL72 racks; 400 Gb/s per GPU assumed from the DGX GB200 reference design)",
}

STACK: dict[tuple[str, ...], str] = {
 ("v3.0", "23.04"): ("Software: pytorch:23.04 with NeMo v1.17.0_pt_23.04 and Transformer Engine release_v0.8 (Dockerfile) -> release "
                     "23.04; TP overlap from config_tp_h100.sh (TP_COMM_OVERLAP=True), interleaving 12 from config_common.sh."),
 ("v3.1", "23.09"): "Software: pytorch:23.09 with NeMo at bd0b818 and Transformer Engine built from source (Dockerfile) -> release 23.09.",
 ("v4.0", "24.04"): "Software: pytorch:24.04 with NeMo v2.0.0.rc0.beta and Transformer Engine v1.6rc1 (Dockerfile) -> release 24.04.",
 ("v4.1", "24.09"): "Software: pytorch:24.09 with NeMo 24.09-alpha.rc0 (Dockerfile of the implementation folder) -> release 24.09.",
 ("v5.0", "25.02"): ("Software: pytorch:25.01 with NeMo v2.2.0 and Megatron-Core core_r0.11.0 (Dockerfile) -> release 25.02, the NeMo "
                     "release whose Megatron-Core is 0.11 in the software table (same NeMo switches as 25.01; 0.11 is what can split "
                     "126 layers + embedding + loss over PP x VP = 64 chunks)."),
 ("v5.1", "25.09"): ("Software: pytorch:25.09 with NeMo and Megatron-Core 25.09-alpha.rc1 and Transformer Engine release_v2.8 (Dockerfile) "
                     "-> release 25.09; FP8 current (tensorwise) scaling with FP8 parameter gathers, attention in 16-bit "
                     "(NVTE_DPA_FP8_RECIPE=F16), full-iteration CUDA graphs (config_common_cg.sh: FULL_CUDA_GRAPH=1), distributed "
                     "optimizer with overlapped gradient reduce and parameter gather (config_common.sh); TP overlap where TP > 1."),
 ("v5.1", "25.09", "uf"): ("Software: pytorch:25.09 with NeMo and Megatron-Core 25.09-alpha.rc1 and Transformer Engine release_v2.8 (Dockerfile) "
                           "-> release 25.09; full-iteration CUDA graphs (config_common_cg.sh: FULL_CUDA_GRAPH=1), distributed optimizer "
                           "with overlapped gradient reduce and parameter gather and FP8 parameter gathers (config_common.sh)."),
 ("v5.1", "25.09", "amd"): ("Software: ROCm 7.0 PyTorch 2.8 image with Transformer Engine and Megatron-LM (ROCm) at pinned commits and NeMo "
                     "v2.5.0rc0 patched (Dockerfile, patches/nemo_v2.5.0rc0.patch) -> release 25.09, the NeMo release of v2.5.0 "
                     "(assumption); FP8 hybrid delayed scaling with FP8 parameters, no FP8 attention (src/train.py: fp8='hybrid', "
                     "fp8_dot_product_attention=False), distributed optimizer, gradients reduced in bf16, TP overlap off."),
 ("v5.0", "25.04"): "Software: pytorch:25.04 with NeMo and Megatron-Core 25.04-alpha.rc2 (Dockerfile) -> release 25.04.",
}
# the submissions' own stacks where a release's text is not theirs (AMD's ROCm builds of NeMo)
VENDOR = {"amd": "amd", "gigabyte": "amd", "uf": "uf"}
# FP8 recipe and software switches the configs set, where they are not the file's default (delayed scaling,
# the software table's switches for the release)
RECIPE = {"tyche8b": "fp8_current_scaling", "theia": "fp8_current_scaling", "uf": "fp8_current_scaling"}
SWITCHES: dict[str, dict[str, object]] = {
    "tyche8b": {"cuda_graphs": True},
    "theia": {"cuda_graphs": True},
    "uf": {"cuda_graphs": True},
}
# fmt: on

_KEYS = ("global_batch_size", "max_sequence_length", "gradient_accumulation_steps", "submission_platform")


@dataclass
class Log:
    """What one MLLOG result file says about steady-state training."""

    keys: dict[str, Any] = field(default_factory=dict)
    spans: list[tuple[float, float]] = field(default_factory=list)  # (tokens, seconds) of each training span
    step_times: list[float] = field(default_factory=list)  # train_step_time records, s
    mode: str = "blocks"  # "steps" | "blocks" | "evals"


def parse_mllog(text: str) -> Log:
    """The steady-state spans of one MLLOG result file (see the module docstring for the three modes)."""
    log = Log()
    events: list[tuple[str, int, dict[str, Any]]] = []
    for line in text.splitlines():
        i = line.find(":::MLLOG ")
        if i < 0:
            continue
        try:
            rec = json.loads(line[i + 9 :])
        except json.JSONDecodeError:
            continue
        key, value, meta = rec.get("key"), rec.get("value"), rec.get("metadata") or {}
        if key in ("block_start", "block_stop", "eval_start", "eval_stop"):
            events.append((key, int(rec["time_ms"]), meta if isinstance(meta, dict) else {}))
        elif key == "tracked_stats" and isinstance(value, dict) and "train_step_time" in value:
            log.step_times.append(float(value["train_step_time"]))
        elif key in _KEYS and key not in log.keys:
            log.keys[key] = value
    seq = float(log.keys.get("max_sequence_length") or 0)
    if log.step_times:
        gbs = float(log.keys["global_batch_size"])
        log.mode = "steps"
        log.spans = [(gbs * seq, t) for t in log.step_times[5:]]
        return log
    n_blocks = sum(1 for e in events if e[0] == "block_start")
    stops = [(t, m) for k, t, m in events if k == "eval_stop"]
    starts = [(t, m) for k, t, m in events if k == "eval_start"]
    if n_blocks == 1 and len(starts) > 2:
        log.mode = "evals"
        for (t0, m0), (t1, m1) in zip(stops, starts[1:], strict=False):
            log.spans.append((float(m1["epoch_num"] - m0["epoch_num"]), (t1 - t0) / 1000.0))
        return log
    opened: tuple[int, dict[str, Any]] | None = None
    blocks: list[tuple[float, float]] = []
    for key, t, meta in events:
        if key == "block_start":
            opened = (t, meta)
        elif key == "block_stop" and opened is not None:
            tokens = meta.get("epoch_count") or opened[1].get("epoch_count")
            if tokens is None and "samples_count" in meta and "samples_count" in opened[1]:
                tokens = (meta["samples_count"] - opened[1]["samples_count"]) * seq
            blocks.append((float(tokens or 0.0), (t - opened[0]) / 1000.0))
            opened = None
    log.spans = blocks[1:]
    return log


class Repos:
    """Results repositories under one folder: plain checkouts or bare git directories."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _git_dir(self, version: str) -> Path | None:
        g = self.root / f"mlcommons+training_results_{version}" / "repo"
        return g if g.is_dir() else None

    def _tree(self, version: str) -> Path:
        return self.root / f"training_results_{version}"

    def commit(self, version: str) -> str:
        g = self._git_dir(version)
        args = ["git", f"--git-dir={g}"] if g else ["git", "-C", str(self._tree(version))]
        return subprocess.run(
            [*args, "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()

    def results(self, version: str, folder: str) -> list[str]:
        """Texts of ``folder``'s result_N.txt files."""
        g = self._git_dir(version)
        if g:
            names = subprocess.run(
                ["git", f"--git-dir={g}", "ls-tree", "--name-only", "HEAD", folder + "/"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            names = sorted(n for n in names if re.search(r"result_\d+\.txt$", n))
            return [
                subprocess.run(
                    ["git", f"--git-dir={g}", "show", f"HEAD:{n}"], capture_output=True, text=True, check=True
                ).stdout
                for n in names
            ]
        return [p.read_text(encoding="utf-8") for p in sorted((self._tree(version) / folder).glob("result_*.txt"))]


@dataclass
class Measured:
    tokens_per_s: float
    gbs: int
    seq: int
    ga: int
    logs: int
    steps: int
    per_log: list[float]
    mode: str


def measure(texts: list[str]) -> Measured:
    """The median tokens/s over every span of every log, with the logged batch and accumulation."""
    if not texts:
        raise ValueError("no result_N.txt logs")
    spans: list[float] = []
    per_log: list[float] = []
    steps = 0
    gbs = seq = ga = 0
    mode = "blocks"
    for text in texts:
        log = parse_mllog(text)
        gbs, seq = int(log.keys["global_batch_size"]), int(log.keys["max_sequence_length"])
        ga = int(log.keys.get("gradient_accumulation_steps") or 0)
        rates = [tok / s for tok, s in log.spans if tok > 0 and s > 0]
        if not rates:
            raise ValueError("a result file has no steady-state span")
        spans += rates
        per_log.append(statistics.median(rates))
        steps += sum(round(tok / (gbs * seq)) for tok, _ in log.spans)
        mode = log.mode
    return Measured(statistics.median(spans), gbs, seq, ga, len(texts), steps, per_log, mode)


HOW = {
    "steps": "the median over every log's train_step_time records (tracked_stats), the first five steps of each run dropped",
    "blocks": (
        "the median over every log's training blocks (block_start .. block_stop, evaluation outside them), the first "
        "block of each run dropped"
    ),
    "evals": (
        "the median over every log's training spans between one evaluation's eval_stop and the next eval_start (these "
        "logs open one block for the whole run), the span before the first evaluation dropped"
    ),
}


def case(row: tuple[Any, ...], m: Measured, commit: str) -> dict[str, Any]:
    """One validation case from a row of ``R`` and what its logs measured."""
    cid, v, d, cfg, gpu, nodes, gpn, dom, nic, tp, pp, cp, vpp, mbs, rel, model, fab = row
    n = nodes * gpn
    dp = n // (tp * pp * cp)
    if m.gbs != dp * mbs * m.ga:
        raise ValueError(f"{cid}: logged GBS {m.gbs} != DP {dp} x MBS {mbs} x GA {m.ga}")
    lo, hi = min(m.per_log) / n, max(m.per_log) / n
    if model != "l8":
        layout = (
            f"Layout from the config: TP {tp}, PP {pp}, CP {cp}, interleaving {vpp} (INTERLEAVED_PIPELINE"
            + (", the custom.yaml default 12 where the config leaves it" if (model == "gpt3" and v == "v3.1") else "")
            + (", set in config_common.sh" if v == "v3.0" else "")
            + f"), micro-batch {mbs}; DP = GPUs / (TP x PP x CP) = {dp}; GBS {m.gbs} and gradient accumulation {m.ga} as "
            "logged. Distributed optimizer (USE_DIST_OPTIMIZER / NeMo default) -> zero 1; sequence parallel on "
            "(SEQ_PARALLEL default True); no activation recompute (ACT_CKPT_GRANULARITY unset or null); "
            + (
                "FP8 with current (tensorwise) scaling (config_common.sh: FP8_RECIPE=tensorwise)"
                if RECIPE.get(fab) == "fp8_current_scaling"
                else "FP8 with delayed scaling (Transformer Engine's DelayedScaling; the fp8_recipe default 'delayed' where "
                "custom.yaml has the field)"
            )
            + "; TP overlap on (TP_COMM_OVERLAP=True). "
        )
    else:
        layout = (
            f"Layout from the config: TP {tp}, PP {pp}, CP {cp}, MBS {mbs}, GBS {m.gbs}; DP {dp}, gradient accumulation "
            f"{m.ga} as logged; no activation recompute (none configured). "
        )
    return {
        "id": cid,
        "source": f"MLPerf Training {v} closed division (mlcommons/training_results_{v}, commit {commit}): {d}/result_*.txt and {cfg}",
        "kind": "steady_state",
        "quality": "derived",
        "model": dict({"gpt3": GPT3, "l405": L405, "l8": L8}[model]),
        "hardware": {"gpu": gpu, "count": n, "gpus_per_node": gpn, "scale_up_domain": dom, "nic_gbps_per_gpu": nic},
        "parallelism": {
            "tp": tp,
            "pp": pp,
            "dp": dp,
            "cp": cp,
            "ep": 1,
            "vpp": vpp,
            "sequence_parallel": tp > 1,
            "recompute": "none",
            "zero": 1,
        },
        "batch": {"global_batch_seqs": m.gbs, "micro_batch": mbs},
        "precision": "fp8",
        "truth": {
            "tokens_per_s_per_gpu": round(m.tokens_per_s / n, 1),
            "iteration_time_s": round(m.gbs * m.seq / m.tokens_per_s, 3),
            "mfu": None,
            "derivation": (
                f"tokens/s = {HOW[m.mode]}: {m.tokens_per_s:,.0f} tokens/s over {n} GPUs ({m.logs} logs, {m.steps} steps; "
                f"per-log medians {lo:.1f}-{hi:.1f} tokens/s/GPU); iteration_time = GBS x seq / tokens/s"
            ),
        },
        "notes": {"gpt3": GPT3_NOTE, "l405": L405_NOTE, "l8": L8_NOTE}[model]
        + layout
        + FABRIC[fab]
        + ". "
        + STACK.get((v, rel, VENDOR.get(fab, "")), STACK[(v, rel)])
        + " Never fitted.",
        "software": {"framework": "NeMo (MLPerf Training submission)", "release": rel, **SWITCHES.get(fab, {})},
        "precision_recipe": RECIPE.get(fab, "fp8_delayed_scaling"),
    }


HEADER = """# Out-of-sample check set: steady-state throughput of MLPerf Training closed-division submissions (GPT-3 175B on
# 256 to 11,616 H100 and 64 B200, v3.0-v4.1; Llama 3.1 405B on 512 to 8,192 H100, 512-1,024 H200 and 256-2,496 GB200, v5.0,
# and on 256 / 448 B200, v5.1; Llama 3.1 8B on 8 MI355X and 72 / 512 GB200 and GB300, v5.1), read from the submissions' own
# MLLOG result files and launch configs
# (mlcommons/training_results_v3.0 / v3.1 / v4.0 / v4.1 / v5.0 / v5.1; all but v4.1 carry an Apache-2.0 LICENSE.md, v4.1's snapshot
# no licence file; only facts and figures are taken).
# Never fitted, and added after the engine was built: none of these runs informed its structure.
# Schema: wanka-validation/1 (src/wanka/data/validation/README.md). Generated by python -m benchmarks.mlperf_training
# --repos DIR --write; each case's truth.derivation says how its tokens/s were read.
"""


def generate(repos: Repos) -> str:
    """The file's text, from the results repositories under ``repos``."""
    commits: dict[str, str] = {}
    cases = []
    for row in R:
        v = row[1]
        try:
            if v not in commits:  # one git call per repository, not per row
                commits[v] = repos.commit(v)
            cases.append(case(row, measure(repos.results(v, row[2])), commits[v]))
        except (OSError, ValueError, KeyError, subprocess.CalledProcessError) as e:
            raise ValueError(f"{row[0]}: training_results_{v} {row[2]}: {e}") from None
    body = yaml.safe_dump(
        {"schema": "wanka-validation/1", "cases": cases}, sort_keys=False, width=130, allow_unicode=False
    )
    return HEADER + body


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos", type=Path, required=True, help="folder holding the training_results_vX.Y repositories")
    ap.add_argument("--write", action="store_true", help=f"rewrite {OUT.relative_to(OUT.parents[2])}")
    args = ap.parse_args()
    try:
        text = generate(Repos(args.repos))
    except ValueError as e:  # a repository or a log the rows name is missing or unreadable
        ap.exit(2, f"error: {e}\n")
    if args.write:
        OUT.write_text(text, encoding="utf-8")
        print(f"wrote {OUT} ({len(R)} cases)")
        return
    same = OUT.read_text(encoding="utf-8") == text
    print(f"{OUT.name}: {'current' if same else 'differs from the logs; --write rewrites it'} ({len(R)} cases)")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
