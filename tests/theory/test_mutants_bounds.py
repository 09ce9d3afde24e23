"""Closed forms of the bounds (Appendix F.1) and the check sample of the targets: known answers written here from
the paper's formulas, for the mutants mutation testing left alive."""

from __future__ import annotations

import math

import numpy as np

from tmcheck.theory.bounds import paper_simplified_log_N
from tmcheck.theory.targets import check_sample


def _simplified_log_N(d, eps, n, beta, C_M, D):
    """(F.1): 900 (log d)² log(60 d³ ε^{-4d/β} n) C_M³ D d ε^{-d/β}."""
    return (
        900 * math.log(d) ** 2 * math.log(60 * d**3 * eps ** (-4 * d / beta) * n) * C_M**3 * D * d * eps ** (-d / beta)
    )


def test_paper_simplified_log_N_known_answer_and_defaults():
    """β = 1, C_M = 1 and D = 1 by default."""
    for d, eps, n in ((2, 0.5, 100.0), (3, 0.25, 1e6)):
        want = _simplified_log_N(d, eps, n, 1.0, 1.0, 1)
        assert math.isclose(paper_simplified_log_N(d, eps, n), want, rel_tol=1e-12)
        assert math.isclose(
            paper_simplified_log_N(d, eps, n, 0.5, 2.0, 7), _simplified_log_N(d, eps, n, 0.5, 2.0, 7), rel_tol=1e-12
        )
    assert paper_simplified_log_N(1, 0.5, 100.0) == 0.0


def test_check_sample_grid_is_capped_at_40000_points():
    """The regular grid is dropped when it would hold more than 40,000 points (per_axis^d of them), and kept
    up to that size: corners, grid, then the random points."""
    rng = np.random.default_rng(0)
    for d, per_axis in ((4, 15), (2, 201), (3, 35)):  # 50625, 40401, 42875 grid points
        assert per_axis**d > 40000
        assert check_sample(d, 3, rng, per_axis=per_axis).shape == (2**d + 3, d)
    for d, per_axis in ((2, 200), (4, 14), (1, 40000)):  # 40000, 38416, 40000: kept
        X = check_sample(d, 3, rng, per_axis=per_axis)
        assert X.shape == (2**d + per_axis**d + 3, d)
        assert ((X >= 0) & (X <= 1)).all()
