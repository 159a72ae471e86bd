"""The scheduler's node failures come from the operations layer's component tables."""

import pytest

from wanka.platform import cluster_failure_model, default_node_mtbf_s
from wanka.spec import ClusterSpec, FailureSpec


def test_h100_node_mtbf_matches_the_llama3_figure() -> None:
    # 54 days x 2,048 nodes / 419 unexpected interruptions ~ 264 days per node (Llama 3 Table 5)
    spec = ClusterSpec(accelerator="H100", nodes=2048)
    m = cluster_failure_model(spec)
    assert m.node_mtbf_s == pytest.approx(default_node_mtbf_s(), rel=0.02)
    assert m.node_mtbf_s / 86_400 == pytest.approx(264, rel=0.03)


def test_rate_scale_and_recovery_times_follow_the_failure_spec() -> None:
    spec = ClusterSpec(accelerator="H100", nodes=64)
    base = cluster_failure_model(spec)
    worse = cluster_failure_model(spec, FailureSpec(rate_scale=2.0, repair_s=7200.0, restart_s=120.0))
    assert worse.node_mtbf_s == pytest.approx(base.node_mtbf_s / 2)
    assert (worse.repair_s, worse.restart_s) == (7200.0, 120.0)
