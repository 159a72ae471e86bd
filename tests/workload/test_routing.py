"""Expected distinct nodes per MoE token against a Monte-Carlo draw of the same routing."""

from __future__ import annotations

import numpy as np
import pytest

from wanka.spec import load_model, parse_model
from wanka.workload import expected_nodes_per_token


def _sample(e: int, k: int, d: int, limit: int | None, n: int = 20000, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    per = e // d
    out = np.empty(n)
    for i in range(n):
        nodes = np.arange(d) if limit is None else rng.choice(d, size=limit, replace=False)
        pool = (nodes[:, None] * per + np.arange(per)[None, :]).ravel()
        picked = rng.choice(pool, size=k, replace=False)
        out[i] = len(np.unique(picked // per))
    return float(out.mean())


def _moe(e: int, k: int, **kw: object) -> object:
    return parse_model(
        {
            "type": "moe",
            "n_layers": 2,
            "hidden": 256,
            "n_heads": 4,
            "n_kv_heads": 4,
            "ffn_hidden": 512,
            "vocab": 1000,
            "seq_len": 1024,
            "moe": {"n_experts": e, "top_k": k, "expert_ffn_hidden": 128, **kw},
        }
    )


@pytest.mark.parametrize(
    ("e", "k", "d", "limit"), [(256, 8, 8, None), (256, 8, 8, 4), (64, 6, 16, None), (128, 4, 4, 2)]
)
def test_matches_monte_carlo(e: int, k: int, d: int, limit: int | None) -> None:
    kw = {} if limit is None else {"max_nodes_per_token": limit}
    got = expected_nodes_per_token(_moe(e, k, **kw), d)  # type: ignore[arg-type]
    assert got == pytest.approx(_sample(e, k, d, limit), rel=0.02)


def test_node_limit_cuts_deepseek_v3_cross_node_fanout() -> None:
    m = load_model("deepseek-v3")
    assert m.moe is not None
    free = m.model_copy(update={"moe": m.moe.model_copy(update={"max_nodes_per_token": None, "topk_groups": None})})
    limited, unlimited = expected_nodes_per_token(m, 8), expected_nodes_per_token(free, 8)
    assert limited <= 4.0 < unlimited
    assert expected_nodes_per_token(m, 1) == 1.0


def test_ep_nodes_must_divide_experts() -> None:
    with pytest.raises(ValueError, match="must divide"):
        expected_nodes_per_token(load_model("deepseek-v3"), 6)
