"""Validation against published training runs (`wanka-validation/1`)."""

from wanka.validate.cases import Case, case_scenario, load_cases, software_overlap
from wanka.validate.run import CaseResult, ValidationReport, predict_case, run_validation

__all__ = [
    "Case",
    "CaseResult",
    "ValidationReport",
    "case_scenario",
    "load_cases",
    "predict_case",
    "run_validation",
    "software_overlap",
]
