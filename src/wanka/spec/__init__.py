"""The typed scenario tree (pydantic v2, frozen, strict): one tree every layer reads."""

from wanka.spec.cluster import ClusterSpec, FabricSpec, ScaleUpSpec, StorageSpec
from wanka.spec.io import (
    deep_merge,
    dump_json,
    dump_yaml,
    list_model_presets,
    list_presets,
    load_cluster,
    load_model,
    load_scenario,
    nest_dotted,
    parse_model,
    parse_scenario,
)
from wanka.spec.model import MLASpec, ModelSpec, MoESpec
from wanka.spec.ops import CheckpointSpec, FacilitySpec, FailureSpec
from wanka.spec.scenario import Scenario
from wanka.spec.software import SoftwareSpec
from wanka.spec.training import ParallelSpec, TrainingSpec

__all__ = [
    "CheckpointSpec",
    "ClusterSpec",
    "FabricSpec",
    "FacilitySpec",
    "FailureSpec",
    "MLASpec",
    "MoESpec",
    "ModelSpec",
    "ParallelSpec",
    "ScaleUpSpec",
    "Scenario",
    "SoftwareSpec",
    "StorageSpec",
    "TrainingSpec",
    "deep_merge",
    "dump_json",
    "dump_yaml",
    "list_model_presets",
    "list_presets",
    "load_cluster",
    "load_model",
    "load_scenario",
    "nest_dotted",
    "parse_model",
    "parse_scenario",
]
