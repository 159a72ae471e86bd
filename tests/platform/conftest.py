from __future__ import annotations

import pytest

from wanka.spec import ClusterSpec


@pytest.fixture
def small_spec() -> ClusterSpec:
    return ClusterSpec(accelerator="H100", nodes=64)


@pytest.fixture
def spec_10k() -> ClusterSpec:
    # 1,280 nodes × 8 = 10,240 GPUs, three tiers so that there are several pods
    return ClusterSpec(accelerator="H100", nodes=1280, fabric={"tiers": 3})
