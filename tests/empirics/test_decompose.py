"""The error decomposition with Lemma 1's construction (empirics.synthetic.decompose)."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmcheck.empirics.synthetic import decompose as dc
from tmcheck.empirics.synthetic.problem import Experiment, Problem
from tmcheck.theory.sparse import grid_value


@pytest.mark.parametrize("d,N", [(1, 2), (1, 7), (2, 3), (2, 5)])
def test_features_are_the_constructions_function(d, N):
    """Φ(u) f equals the exact f̂ of Lemma 1 (theory.sparse.grid_value) at rational points, grid points included."""
    rng = np.random.default_rng(d * 10 + N)
    fvals = [Fraction(int(v), 7) for v in rng.integers(-20, 20, N**d)]
    den = 6 * (N - 1) * 7
    pts = [[Fraction(int(rng.integers(0, den + 1)), den) for _ in range(d)] for _ in range(40)]
    pts += [[Fraction(1)] * d, [Fraction(0)] * d, [Fraction(1, N - 1)] * d]
    phi = dc.lemma1_features(np.array([[float(x) for x in p] for p in pts]), N)
    got = phi @ np.array([float(v) for v in fvals])
    want = np.array([float(grid_value(fvals, N, p)) for p in pts])
    assert np.max(np.abs(got - want)) < 1e-12
    if d == 2:  # the check can fail: the patches in the other order give another function
        swapped = np.array([float(v) for v in fvals]).reshape(N, N).T.ravel()
        assert np.max(np.abs(phi @ swapped - want)) > 1e-3


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(2, 40), st.integers(0, 2**31))
def test_features_are_a_partition_of_unity(d, N, seed):
    u = np.random.default_rng(seed).random((50, d))
    u[0] = 1.0  # the domain's far corner
    phi = dc.lemma1_features(u, N)
    assert phi.shape == (50, N**d) and phi.min() >= 0
    assert np.allclose(np.asarray(phi.sum(axis=1)).ravel(), 1.0, atol=1e-12)


def test_features_refuse_bad_input():
    with pytest.raises(ValueError, match="N >= 2"):
        dc.lemma1_features(np.zeros((3, 1)), 1)
    with pytest.raises(ValueError, match="shape"):
        dc.lemma1_features(np.zeros(3), 4)


def _split(noise: float, n: int = 3000, d: int = 1, seed: int = 0):
    exp = Experiment(Problem(manifold="torus", d=d, D=4, beta=1.0, noise=noise))
    return exp, exp.split(n, n, seed, 4000, 0.2, 8)


def test_field_on_coords_is_the_field():
    exp, s = _split(0.5, n=200)
    assert np.allclose(dc.field_on_coords(exp, exp.manifold.coords(s.X_test)), s.f_test, atol=1e-12)


def test_noise_free_least_squares_does_no_worse_than_the_lemmas_values():
    exp, s = _split(0.0)
    out = dc.decompose_split(exp, s)
    assert out["erm_mse"] <= out["approx_mse"] * 1.05 and out["approx_mse"] < 0.05
    assert out["approx_max"] >= np.sqrt(out["approx_mse"])
    shuffled = type(s)(s.X_train, np.random.default_rng(0).permutation(s.y_train), s.X_val, s.y_val, s.X_test, s.f_test)
    assert dc.decompose_split(exp, shuffled)["erm_mse"] > 10 * out["erm_mse"]  # a broken fit is seen


def test_only_the_holder_field_is_decomposed():
    exp = Experiment(Problem(manifold="torus", d=1, D=4, target="relu", beta=1.0))
    with pytest.raises(ValueError, match="holder"):
        dc.field_on_coords(exp, np.zeros((2, 1)))


def test_mean_interval_known_answer():
    out = dc.mean_interval([1.0, 2.0, 3.0])
    assert out["mean"] == 2.0 and out["ci"] == pytest.approx([2 - 2.4841377, 2 + 2.4841377], rel=1e-6)
    assert np.isnan(dc.mean_interval([1.0])["ci"][0])


@pytest.mark.parametrize(
    "ci,word", [((0.1, 0.2), "short"), ((-0.2, -0.1), "better"), ((-0.1, 0.1), "at the"), ((np.nan, np.nan), "one")]
)
def test_attribution_reads_the_gaps_interval(ci, word):
    assert word in dc.attribution({"optimisation_gap": {"ci": list(ci)}})


def test_choose_sizes_spreads_over_the_design():
    assert dc.choose_sizes([100, 316, 1000, 3162, 10000]) == [100, 1000, 10000]
    assert dc.choose_sizes([5, 3]) == [3, 5]
