"""A Muon run's checkpoint: the matrices Muon steps keep one fp32 moment (momentum), the rest AdamW's two."""

from __future__ import annotations

import pytest

from wanka.spec import parse_scenario
from wanka.storage.checkpoint import checkpoint_size, muon_param_count
from wanka.storage.params import parameter_count


def _scenario(optimizer: str) -> object:
    return parse_scenario(
        {
            "cluster": {"accelerator": "H100-SXM5-80GB", "nodes": 8},
            "model": "llama3-70b",
            "training": {"global_batch_seqs": 512, "precision": "bf16", "optimizer": optimizer},
        }
    )


def test_muon_checkpoint_keeps_one_moment_for_its_matrices() -> None:
    adam, muon = checkpoint_size(_scenario("adam")), checkpoint_size(_scenario("muon"))  # type: ignore[arg-type]
    sc = _scenario("muon")
    total = parameter_count(sc.model)[0]  # type: ignore[attr-defined]
    m = muon_param_count(sc.model)  # type: ignore[attr-defined]
    # Llama 3 70B: every projection is a Muon matrix; the embedding and LM head (2 x 128,256 x 8,192) are not
    assert total - m == pytest.approx(2 * 128256 * 8192, rel=0.01)
    assert muon.optimizer_bytes == pytest.approx(4.0 * m + 8.0 * (total - m))
    assert adam.optimizer_bytes == pytest.approx(8.0 * total)
    assert muon.weights_bytes == adam.weights_bytes and muon.master_bytes == adam.master_bytes
    assert muon.total_bytes < adam.total_bytes
