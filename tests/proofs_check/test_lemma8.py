"""Lemma 8's checks (proofs_check/lemma8.py, Appendix H): the sphere check sees a neighbourhood that is the whole
sphere, and the atlas check reports a chart it cannot invert."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tmcheck.proofs_check import lemma8
from tmcheck.theory.manifolds import make_manifold


@pytest.mark.parametrize("tau,r", [(1.0, 3.0), (0.5, 1.5), (2.0, 100.0)])
def test_sphere_check_sees_the_whole_sphere_when_r_exceeds_its_diameter(tau, r):
    """For r >= 2τ, U = B(c, r) ∩ S² is the whole sphere: the check must report what fails there (points below the
    tangent plane's pole, so P is not injective, and a Jacobian of sign −), not a NaN."""
    zmin, det = lemma8.sphere_check(tau, r, np.random.default_rng(0))
    assert math.isfinite(zmin) and math.isfinite(det)
    assert zmin < -0.9 * tau and det < -0.9


class _Uninvertible:
    """tmcheck's atlas with one point of one chart whose inverse is not found (chart_inverse returns None)."""

    def __init__(self, m):
        self._m, self._z = m, None

    def __getattr__(self, name):
        return getattr(self._m, name)

    def chart_inverse(self, n, z):
        if self._z is None:
            self._z = np.array(z)
        return None if np.array_equal(z, self._z) else self._m.chart_inverse(n, z)


def test_atlas_check_reports_a_chart_it_cannot_invert(monkeypatch):
    """A planted failure: a point of U_n whose chart has no inverse counts as an infinite round-trip error."""
    assert lemma8.atlas_check("circle", 3, np.random.default_rng(0))[0] < 1e-9
    monkeypatch.setattr(lemma8, "make_manifold", lambda name, D: _Uninvertible(make_manifold(name, D)))
    back, _ = lemma8.atlas_check("circle", 3, np.random.default_rng(0))
    assert back == math.inf
