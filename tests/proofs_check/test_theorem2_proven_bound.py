"""theorem2_construction.proven_bound, the proof's error bound μ(δ_1 + δ_3) at the proven grid, recomputed here
from Appendix E.2's corrected Step 3 (δ_1 = H̃ · 2√d / (3(N − 1)) at β = 1, Lemma 1's grid bound for the chart
constant; δ_3 = R e^{−r² 2^L} / b_min, the indicator at depth L), independently of the code under test, at d = 1
(circle) and d = 2 (torus: a √d that became 1/√d is seen only there)."""

from __future__ import annotations

import math

import pytest

from tmcheck.proofs_check.theorem2_construction import proven_bound
from tmcheck.theory.manifolds import make_manifold
from tmcheck.theory.spec import theorem2_spec


def oracle(sp, r: float) -> float:
    e = sp.extra
    delta1 = e["H_chart"] * (2 * math.sqrt(sp.d) / (3 * (sp.N - 1)))
    delta3 = e["R"] * math.exp(-(r**2) * 2.0 ** e["L_indicator"]) / e["b_min"]
    return e["mu"] * (delta1 + delta3)


@pytest.mark.parametrize("name,D,eps", [("circle", 2, 0.9), ("torus", 4, 0.5)])
def test_proven_bound_is_the_proofs_formula_and_meets_eps(name, D, eps):
    sp = theorem2_spec(name, D, eps, with_kappa=False)
    assert sp.d == (1 if name == "circle" else 2)
    want = oracle(sp, make_manifold(name, D).r)
    assert proven_bound(sp) == pytest.approx(want, rel=1e-12)
    assert want <= eps  # the proven N meets ε by the proof's own bound
    # the grid is the least whose chart term meets its share ε/(2μ) (the spec's split, Step 3): N − 1 does not
    e = sp.extra
    share = eps / (2 * e["mu"])
    assert e["H_chart"] * 2 * math.sqrt(sp.d) / (3 * (sp.N - 1)) <= share
    assert e["H_chart"] * 2 * math.sqrt(sp.d) / (3 * (sp.N - 2)) > share
