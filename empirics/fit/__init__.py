"""Fitting scaling laws (paper Section 5, Figures 2-3; Hoffmann et al. 2022): the one public face.

Modules: `law` (the 1-D and joint laws, fitted with scipy.optimize), `varpro` (the batched 1-D fit by
variable projection), `intervals` (profile, parametric and cluster-bootstrap intervals), `coverage`
(coverage measured at a sweep's design, and the choice of method), `exponent` (one exponent report),
`prediction` (the paper's prediction as a test), `columns` (safe derived columns and filters), `plot`.
"""

from tmcheck.empirics.fit.coverage import COVERAGE_TARGET, Design, choose_method, coverage
from tmcheck.empirics.fit.exponent import curvature_test, exponent_report, fit_exponent, range_sensitivity
from tmcheck.empirics.fit.law import (
    EPOCH_CHINCHILLA,
    EPOCH_HUBER_DELTA,
    FORMS,
    HOFFMANN_CHINCHILLA,
    LOSSES,
    FitResult,
    chinchilla_points,
    choose_form,
    fit_law,
    predict,
)
from tmcheck.empirics.fit.prediction import prediction_test

__all__ = [
    "FORMS",
    "LOSSES",
    "EPOCH_HUBER_DELTA",
    "FitResult",
    "fit_law",
    "predict",
    "choose_form",
    "chinchilla_points",
    "EPOCH_CHINCHILLA",
    "HOFFMANN_CHINCHILLA",
    "COVERAGE_TARGET",
    "Design",
    "coverage",
    "choose_method",
    "exponent_report",
    "fit_exponent",
    "range_sensitivity",
    "curvature_test",
    "prediction_test",
]
