"""The numeric searches of Lemmas 2, 4, 7, 8 and Theorem 1 measure what they say, at inputs the obligations'
default searches do not visit: Lemma 4's FFN as written holds only exact numbers and the paper's vectors are the
l of them; Lemma 7 counts no written rows for a block without an FFN; Lemma 8's checks see a neighbourhood that
is the whole sphere and a chart that cannot be inverted; the Lipschitz sweep measures a local constant (tight on
a member that attains the corrected bound), per unit η, on a random member by default, and reports a ratio as
inf only beyond float64; and Theorem 1's first simplification is F.1's two sides at m, M != 1."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from tmcheck.proofs_check import lemma4, lemma7, lemma8, lipschitz, theorem1
from tmcheck.theory import bounds
from tmcheck.theory.lemmas.addition import addition
from tmcheck.theory.lemmas.gating import gating, gating_C
from tmcheck.theory.lemmas.interaction import interaction
from tmcheck.theory.lemmas.replace import replace
from tmcheck.theory.manifolds import make_manifold
from tmcheck.theory.network import structured_positional

# --- Lemma 4


@pytest.mark.parametrize("l,k", [(4, 2), (6, 1), (3, 3)])
def test_the_written_gating_ffn_is_exact(l, k):
    """Every weight and bias of the paper's FFN is a Fraction, so the exact backend's output is exact too (a float
    zero bias would turn it into floats while comparing equal)."""
    layers = lemma4.paper_gating_ffn(l, k, gating_C(l, k, "prefix", lemma4.M))
    for lay in layers:
        assert all(type(v) is Fraction for v in np.asarray(lay.W).reshape(-1))
        assert all(type(v) is Fraction for v in np.asarray(lay.b).reshape(-1))
    H = np.empty((1, 5, l), dtype=object)
    H[0] = structured_positional(l, "exact")
    H[0, 0:2, :] = [[Fraction(j + 1, 3) for j in range(l)], [Fraction(-1, 2)] * l]
    assert all(type(v) is Fraction for v in np.asarray(lemma4._apply(layers, H)).reshape(-1))


@pytest.mark.parametrize("l", [2, 3, 8])
def test_the_papers_vectors_are_I_1_to_I_l(l):
    """I_t = (cos(tπ/2l), sin(tπ/2l)) for t = 1..l: l vectors in the closed first quadrant, the last I_l = (0, 1)."""
    with mpmath.workdps(50):
        I = lemma4._mp_vectors(l)
        assert len(I) == l
        for t, (c, s) in enumerate(I, start=1):
            assert abs(c - mpmath.cos(t * mpmath.pi / (2 * l))) < mpmath.mpf(10) ** -45
            assert abs(s - mpmath.sin(t * mpmath.pi / (2 * l))) < mpmath.mpf(10) ** -45
            assert c > -(mpmath.mpf(10) ** -45) and s > 0
        assert abs(I[-1][0]) < mpmath.mpf(10) ** -45 and abs(I[-1][1] - 1) < mpmath.mpf(10) ** -45


# --- Lemma 7


def test_rows_written_counts_none_for_a_block_without_ffn():
    """A Lemma 3 head has no FFN: it writes no row through one (the width bound then adds 2(0 + 1)). The gate of
    Lemma 4 writes the two data rows, Lemmas 5 and 6 one row each."""
    head = interaction(4, 1, 2, 0, lemma7.Q, lemma7.K, lemma7.M)
    assert all(not b.ffn for b in head.blocks)
    assert lemma7._rows_written(head) == 0
    assert lemma7._rows_written(gating(4, 2, "prefix", lemma7.M)) == 2
    assert lemma7._rows_written(addition([Fraction(1, 2), Fraction(-1)], lemma7.M)) == 1
    assert lemma7._rows_written(replace(4, lemma7.M)) == 1


# --- Lemma 8


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


# --- the Lipschitz sweep of Lemma 2


def test_ratio_is_inf_only_beyond_float64():
    """exp(709) ≈ 8.2e307 is a float64: reported as is; a larger log ratio is inf (the bound is off by > 1e308)."""
    assert lipschitz._ratio(1.0, -709.0) == math.exp(709.0)
    assert lipschitz._ratio(1.0, -709.5) == math.inf
    assert lipschitz._ratio(0.0, 5.0) == 0.0


def _cls(**kw):
    base = dict(L_T=1, L_FFN=1, w=1, l=1, d_embd=1, m=1, kappa=1.0, M=1.0)
    return bounds.TransformerClass(**{**base, **kw})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_mha_lipschitz_measurement_is_local(seed):
    """d = l = m = 1, every weight κ: MHA(h) = σ(κ² h²) κ h = κ³ h³, whose Lipschitz constant on [−M_0, M_0] is
    3κ³M_0², the corrected bound 3 m l d⁴ κ³ M_0² exactly. Steps of 1e-3 M_0 around 5000 inputs find it within
    10%; a secant over steps of order M_0 sees at most a third of it."""
    r = lipschitz.measure(_cls(), np.random.default_rng(seed), 1e-6, n_inputs=5000, extremal=True)
    assert 0.9 < r.mha_lip_corr <= 1 + 1e-9


@pytest.mark.parametrize("extremal", [False, True])
def test_ratios_are_per_unit_eta(extremal):
    """The measured differences scale with η, and so do the bounds (paper's and corrected, times η): the ratios at
    η = 1e-6 and 1e-7 agree, for the same network, perturbation signs and inputs."""
    c = _cls(L_T=2, L_FFN=2, w=4, l=4, d_embd=3, m=2, kappa=0.5)
    a = lipschitz.measure(c, np.random.default_rng(5), 1e-6, extremal=extremal)
    b = lipschitz.measure(c, np.random.default_rng(5), 1e-7, extremal=extremal)
    for key in ("attn_paper", "attn_corr", "T_paper", "T_corr"):
        assert getattr(a, key) > 0
        assert getattr(a, key) == pytest.approx(getattr(b, key), rel=1e-4, abs=0), key


def test_measure_draws_a_random_member_by_default():
    """By default one random member (weights uniform in [−κ, κ]); the all-κ member only when asked."""
    c = _cls(L_FFN=2, w=3, l=3, d_embd=2, m=2, kappa=0.5)

    def run(**kw):
        return lipschitz.measure(c, np.random.default_rng(3), 1e-6, **kw).__dict__

    assert run() == run(extremal=False)
    assert run() != run(extremal=True)


# --- Theorem 1


@pytest.mark.parametrize(
    "p", [(1, 1, 1, 1, 2.0, 1.0, 3, 1, 1.0), (2, 2, 5, 4, 3.0, 0.5, 2, 8, 100.0), (1, 2, 2, 3, 0.5, 2.0, 4, 2, 7.0)]
)
def test_log_N_step_is_F1s_two_sides(p):
    """log(2^{L²+1} L_FFN M^{3L} d^{18L²} w^{18L²L_FFN} κ^{6L²L_FFN} m^{L²} l^{L²} n) and
    5 L² L_FFN log(2 M L_FFN d κ m l n), written here from F.1, at m and M != 1."""
    L, LF, d, w, M, k, m, l, n = p
    lhs = math.log(2 ** (L * L + 1) * LF * M ** (3 * L) * d ** (18 * L * L) * w ** (18 * L * L * LF))
    lhs += 6 * L * L * LF * math.log(k) + L * L * math.log(m * l) + math.log(n)
    rhs = 5 * L * L * LF * math.log(2 * M * LF * d * k * m * l * n)
    got = theorem1.log_N_step(*p)
    assert got == pytest.approx((lhs, rhs), rel=1e-12, abs=0)
