"""The service layer: one entry (:func:`assess`) that runs every layer on a scenario, in order.

>>> from wanka.spec import load_scenario
>>> a = assess(load_scenario("traditional-512-a100"), ("engine",))
>>> a.step is not None and a.step.gpus <= 512
True
"""

from wanka.service.assess import LAYERS, Assessment, Assumption, StrategyChoice, assess, choose_strategy, windowless

__all__ = ["LAYERS", "Assessment", "Assumption", "StrategyChoice", "assess", "choose_strategy", "windowless"]
