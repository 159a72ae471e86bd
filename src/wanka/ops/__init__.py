"""Operations domain (智算运营和运维域): failures, recovery, checkpointing, spares, stragglers, ETTR.

>>> from wanka.spec import parse_scenario
>>> from wanka.ops import simulate_campaign
>>> s = parse_scenario({"cluster": {"accelerator": "H100", "nodes": 64}, "campaign_days": 7,
...     "model": {"n_layers": 32, "hidden": 4096, "n_heads": 32, "n_kv_heads": 8, "ffn_hidden": 14336,
...               "vocab": 128256, "seq_len": 8192}, "failures": {"hot_spares": 4}})
>>> r = simulate_campaign(s, step_time_s=5.0, replicas=100, seed=0)
>>> r.ettr.mean <= 1.0
True
"""

from wanka.ops.campaign import (
    CampaignInputs,
    campaign_inputs,
    campaign_throughput,
    ettr_limits,
    expected_ettr,
    operating_assumptions,
    run_campaign,
    simulate_campaign,
)
from wanka.ops.checkpoint import CheckpointCost, checkpoint_cost, optimal_checkpoint_interval
from wanka.ops.rates import (
    CauseEntry,
    FailureTable,
    JobFailureRates,
    JobFootprint,
    failure_table,
    generation_factor,
    job_failure_rates,
    job_footprint,
    list_failure_tables,
    spare_pool_rule,
)
from wanka.ops.recovery import RecoveryModel, default_spares, erlang_b, recovery_model
from wanka.ops.result import CampaignResult, CauseResult, Stat
from wanka.ops.stragglers import StragglerEffect, straggler_effect, straggler_effect_for
from wanka.ops.sweep import SweepPoint, sweep_checkpoint_interval, sweep_cluster_size

__all__ = [
    "CampaignInputs",
    "CampaignResult",
    "CauseEntry",
    "CauseResult",
    "CheckpointCost",
    "FailureTable",
    "JobFailureRates",
    "JobFootprint",
    "RecoveryModel",
    "Stat",
    "StragglerEffect",
    "SweepPoint",
    "campaign_inputs",
    "campaign_throughput",
    "checkpoint_cost",
    "default_spares",
    "erlang_b",
    "ettr_limits",
    "expected_ettr",
    "failure_table",
    "generation_factor",
    "job_failure_rates",
    "job_footprint",
    "list_failure_tables",
    "operating_assumptions",
    "optimal_checkpoint_interval",
    "recovery_model",
    "run_campaign",
    "simulate_campaign",
    "spare_pool_rule",
    "straggler_effect",
    "straggler_effect_for",
    "sweep_checkpoint_interval",
    "sweep_cluster_size",
]
