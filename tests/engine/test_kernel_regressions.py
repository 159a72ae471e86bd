"""A published library-kernel regression reaches the step through the software release that pins the
library: NeMo 26.06.01 (Megatron-Bridge v0.5.1) pins cuDNN frontend 1.24.0, whose MXFP8 grouped GEMM +
dGLU kernel with a bias gradient ran 8.76x its fixed time (NVIDIA/cudnn-frontend issue 256, fix PR 322,
released in 1.26.0). Only models whose routed experts carry a bias (GPT-OSS) run that kernel variant, and
only under the fused grouped MLP (MXFP8, op fuser)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from wanka.catalog.software import cudnn_frontend_version, kernel_time_factor
from wanka.errors import SpecError
from wanka.spec import parse_scenario

GPT_OSS_2606 = "nemo2606_gpt_oss_120b_gb200_fp8mx_64g"  # cuDNN frontend 1.23.0, MXFP8, fused grouped MLP
DSV3_2606 = "nemo2606_deepseek_v3_gb200_fp8mx_256g"  # the same fused MLP without expert biases
KERNEL = "grouped_gemm_dglu_dbias"


def test_releases_pin_the_cudnn_frontend_of_their_megatron_bridge() -> None:
    nemo = "NeMo / Megatron-Bridge"
    assert cudnn_frontend_version(nemo, "26.06")[0] == "1.23.0"
    assert cudnn_frontend_version(nemo, "26.06.01")[0] == "1.24.0"
    assert cudnn_frontend_version(nemo, "26.08")[0] == "1.26.0"
    assert cudnn_frontend_version(nemo, "26.04")[0] is None  # not read here: no regression charged
    assert cudnn_frontend_version("torchtitan", None)[0] is None


@pytest.mark.parametrize(
    ("version", "factor"),
    [("1.23.0", 1.0), ("1.24.0", 8.756), ("1.25.0", 8.756), ("1.26.0", 1.0), ("2.0", 1.0), (None, 1.0)],
)
def test_the_regression_covers_its_published_versions_only(version: str | None, factor: float) -> None:
    got, source = kernel_time_factor(KERNEL, version)
    assert got == pytest.approx(factor)
    assert (source is not None) == (factor != 1.0)
    assert kernel_time_factor("another_kernel", "1.24.0")[0] == 1.0


def test_the_bad_release_slows_biased_experts_under_the_fused_mlp(nemo_step: Callable[..., Any]) -> None:
    good = nemo_step(GPT_OSS_2606)
    bad = nemo_step(GPT_OSS_2606, **{"software.release": "26.06.01"})
    assert bad.step_time_s > good.step_time_s * 1.05
    assert any("cuDNN frontend 1.24.0" in a for a in bad.assumptions)
    # naming the fixed library on the bad release removes it; naming the bad one on the good release adds it
    fixed = nemo_step(GPT_OSS_2606, **{"software.release": "26.06.01", "software.cudnn_frontend": "1.26.0"})
    assert fixed.step_time_s == pytest.approx(good.step_time_s, rel=1e-12)
    named = nemo_step(GPT_OSS_2606, **{"software.cudnn_frontend": "1.25.0"})
    assert named.step_time_s == pytest.approx(bad.step_time_s, rel=1e-12)


def test_no_regression_without_expert_bias_or_without_the_fused_mlp(nemo_step: Callable[..., Any]) -> None:
    # DeepSeek-V3's experts have no bias: the kernel runs without the bias-gradient reduction
    a = nemo_step(DSV3_2606)
    b = nemo_step(DSV3_2606, **{"software.release": "26.06.01"})
    assert b.step_time_s == pytest.approx(a.step_time_s, rel=1e-12)
    # without the op fuser the grouped MLP runs Transformer Engine's unfused GEMMs, not the cuDNN kernel
    off = {"software.mlp_op_fuser": False}
    c = nemo_step(GPT_OSS_2606, **off)
    d = nemo_step(GPT_OSS_2606, **off, **{"software.release": "26.06.01"})
    assert d.step_time_s == pytest.approx(c.step_time_s, rel=1e-12)


@pytest.mark.parametrize("bad", ["26.06", "latest", "1.x"])
def test_a_cudnn_frontend_that_is_not_a_version_is_refused(bad: str) -> None:
    with pytest.raises((SpecError, ValueError), match=r"software\.cudnn_frontend .*not a library version"):
        parse_scenario(
            {
                "cluster": {"accelerator": "GB200", "nodes": 2},
                "model": "llama3-8b",
                "training": {"global_batch_seqs": 64, "precision": "bf16", "seq_len": 4096},
                "software": {"framework": "NeMo", "release": "26.06.01", "cudnn_frontend": bad},
            }
        )
