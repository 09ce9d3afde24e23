"""Theorem 2's atlas constants (theory/atlas.py) from closed forms: every sample estimate lies below its bound, the
bounds are close to the estimates where the closed form is sharp, and the circle's L_ρ matches an independent
one-dimensional computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tmcheck.theory.atlas import atlas_constants, bump, chart_lipschitz, sampled_constants
from tmcheck.theory.manifolds import make_manifold

CASES = [("circle", 3), ("torus", 4), ("sphere", 3)]


@pytest.mark.parametrize("name,D", CASES)
def test_samples_lie_below_the_closed_forms(name, D):
    m = make_manifold(name, D)
    a, s = atlas_constants(m), sampled_constants(m)
    assert a.C_M == s.C_M == m.C_M
    assert s.mu <= a.mu
    assert s.L_phi <= a.L_phi * (1 + 1e-9)
    assert s.L_rho <= a.L_rho
    assert s.coverage <= a.coverage < 1
    X = m.sample(4000, np.random.default_rng(5))
    assert a.b_min <= m.bumps(X).sum(1).min()


@pytest.mark.parametrize("name,D,factor", [("circle", 3, 1.05), ("torus", 4, 1.5)])
def test_the_closed_forms_are_close_where_the_atlas_is_regular(name, D, factor):
    m = make_manifold(name, D)
    a, s = atlas_constants(m), sampled_constants(m)
    assert a.L_rho <= factor * s.L_rho and a.mu == s.mu


def test_chart_lipschitz_is_the_closed_form():
    assert chart_lipschitz(0.25) == pytest.approx(0.5 / math.sqrt(1 - 1 / 16))
    m = make_manifold("circle", 3)
    assert atlas_constants(m).L_phi == chart_lipschitz(m.r)


def test_circle_L_rho_against_a_one_dimensional_computation():
    """ρ_0 as a function of the angle θ on the unit circle, its derivative by central differences on 2·10^5 angles,
    times dθ/dz <= L_φ: the sup of |d(ρ_0∘φ_0^{-1})/dz| from below, within 1% of the closed form's bound."""
    m = make_manifold("circle", 3)
    K, r = m.C_M, m.r
    centres = 2 * np.pi * np.arange(K) / K
    th = np.linspace(-2 * math.asin(r / 2), 2 * math.asin(r / 2), 200001)  # U_0 in angle
    dist2 = (2 * np.sin((th[:, None] - centres[None]) / 2)) ** 2
    b = bump(dist2 / r**2)
    rho = b[:, 0] / b.sum(1)
    drho = np.gradient(rho, th)
    w = np.sin(th)  # the chart coordinate of the angle, z = w/(2r) + 1/2
    dz_dth = np.cos(th) / (2 * r)
    sup = float(np.max(np.abs(drho / dz_dth)))
    bound = atlas_constants(m).L_rho
    assert sup <= bound <= 1.01 * sup
    assert np.all(np.abs(w) < r)


def test_sphere_coverage_is_bounded_not_sampled():
    """The sphere's centres are checked on 20000 samples when the atlas is built (<= 0.9 r); the closed form bounds
    the coverage over the whole sphere, and finds it larger: the previous b_min = exp(-1/(1 - 0.81)) was too big."""
    m = make_manifold("sphere", 3)
    a = atlas_constants(m)
    assert m.coverage(np.random.default_rng(1), 20000) <= 0.9 < a.coverage
    assert a.b_min < math.exp(-1 / (1 - 0.81))
