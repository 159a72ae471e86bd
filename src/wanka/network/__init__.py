"""Networks (基础设施层): collectives over scale-up domains and the scale-out fabric.

``collectives`` is the only source of collective times in wanka.
"""

from wanka.network.collectives import OPS, CollectiveResult, CommGroup, bus_factor, collective_time
from wanka.network.groups import comm_group

__all__ = ["OPS", "CollectiveResult", "CommGroup", "bus_factor", "collective_time", "comm_group"]
