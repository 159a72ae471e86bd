"""Facility (机房配套层): node and cluster power, racks by cooling type, PUE, energy, cost and CO2.

>>> from wanka.spec import parse_scenario
>>> r = assess(parse_scenario({"cluster": {"accelerator": "H100", "nodes": 4}}), utilization=1.0)
>>> r.node_peak_w
10200.0
"""

from wanka.facility.assess import FacilityResult, assess, facility_assumptions
from wanka.facility.energy import first_order_time_to_train_s, first_order_tokens_per_s
from wanka.facility.facts import CoolingFacts, FacilityFacts, facts
from wanka.facility.network_power import NetworkPower, network_power
from wanka.facility.power import NodePower, accelerator_power_w, node_power
from wanka.facility.racks import RackPlan, rack_plan

__all__ = [
    "CoolingFacts",
    "FacilityFacts",
    "FacilityResult",
    "NetworkPower",
    "NodePower",
    "RackPlan",
    "accelerator_power_w",
    "assess",
    "facility_assumptions",
    "facts",
    "first_order_time_to_train_s",
    "first_order_tokens_per_s",
    "network_power",
    "node_power",
    "rack_plan",
]
