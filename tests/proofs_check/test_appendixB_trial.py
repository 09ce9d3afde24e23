"""appendixB.classification's random search draws the problem its evidence says it draws, and its bound is
2 c_M ε² at that problem's own ε: a known-answer test against an oracle written here from Appendix B.2's
definitions (not from theory.bounds), on the same random stream."""

from __future__ import annotations

import numpy as np
import pytest

from tmcheck.proofs_check import appendixB


def oracle_trial(rng: np.random.Generator, k: int = 40) -> tuple[float, float]:
    """The documented draw: p ~ Dirichlet(1_k), η ~ U(0, 1)^k, ε ~ U(0.01, 0.3), η_θ = clip(η + U(−ε, ε)^k, 0, 1);
    E(f_θ) by its definition atom by atom, c_M as the least constant over every margin t of an atom."""
    p = rng.dirichlet(np.ones(k))
    eta = rng.uniform(0, 1, k)
    e = rng.uniform(0.01, 0.3)
    eta_t = np.clip(eta + rng.uniform(-e, e, k), 0, 1)
    excess = sum(p[x] * abs(2 * eta[x] - 1) for x in range(k) if (eta[x] >= 0.5) != (eta_t[x] >= 0.5))
    margins = [abs(v - 0.5) for v in eta]
    c_M = max(
        (sum(p[y] for y in range(k) if 0 < margins[y] <= t) / t for t in margins if t > 0),
        default=0.0,
    )
    return float(excess), 2 * c_M * e**2


@pytest.mark.parametrize("seed", [0, 1, 7, 123])
def test_the_trial_is_the_documented_problem_and_bound(seed):
    got = appendixB.excess_risk_trial(np.random.default_rng(seed))
    want = oracle_trial(np.random.default_rng(seed))
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_the_search_is_not_slack():
    """Across the obligation's trials some excess risk comes within a factor 20 of its bound (0.27 of it), and
    most trials have a positive excess risk. Mutation: with ε replaced by 1 in the bound, the largest ratio is
    0.012, and the test fails."""
    rng = np.random.default_rng(0)
    pairs = [appendixB.excess_risk_trial(rng) for _ in range(400)]
    assert max(a / b for a, b in pairs if b > 0) > 1 / 20
    assert sum(a > 0 for a, _ in pairs) > 40
