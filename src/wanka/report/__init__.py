"""Reports (tables, plots, HTML): traditional vs 万卡 side by side, and the article's claims checked.

>>> from wanka.spec import load_scenario
>>> from wanka.report import compare
>>> c = compare([load_scenario("traditional-512-a100")], replicas=20)
>>> c.clusters[0].scale["accelerators"]
512
"""

from wanka.report.claims import ClaimResult, evaluate_claims, judge, load_claims
from wanka.report.compare import Assumption, ClusterReport, Comparison, SameJob, compare, move_job
from wanka.report.i18n import LANGS, check_lang, label
from wanka.report.scaling import ScalingResult, scaling_efficiency

__all__ = [
    "LANGS",
    "Assumption",
    "ClaimResult",
    "ClusterReport",
    "Comparison",
    "SameJob",
    "ScalingResult",
    "check_lang",
    "compare",
    "evaluate_claims",
    "judge",
    "label",
    "load_claims",
    "move_job",
    "scaling_efficiency",
]
