"""manifolds: isometric embedding, reach, atlas (r = τ/4, coverage), charts and inverses, partition of unity."""

from __future__ import annotations

import numpy as np
import pytest

from tmcheck.theory.manifolds import ManifoldError, make_manifold

CASES = [("circle", 3), ("sphere", 5), ("torus", 6)]


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def man(request):
    return make_manifold(*request.param)


def test_isometric_embedding_and_bounds(man):
    assert np.allclose(man.Q.T @ man.Q, np.eye(man.k))
    X = man.sample(np.random.default_rng(0), 500)
    assert np.abs(X).max() <= man.M_inf + 1e-12
    Y = X @ man.Q  # back to the model
    if man.name == "torus":
        assert np.allclose(np.linalg.norm(Y[:, :2], axis=1), 1) and np.allclose(np.linalg.norm(Y[:, 2:], axis=1), 1)
    else:
        assert np.allclose(np.linalg.norm(Y, axis=1), 1)


def test_reach_and_radius(man):
    assert man.r <= man.tau / 4
    # the reach is attained: two manifold points equidistant (τ) from a medial point
    Y = man.sample_model(np.random.default_rng(1), 1)[0]
    medial = np.zeros(man.k) if man.name != "torus" else np.concatenate([np.zeros(2), Y[2:]])
    assert np.isclose(np.linalg.norm(Y - medial), man.tau)


def test_atlas_covers_and_partition_sums_to_one(man):
    rng = np.random.default_rng(2)
    assert man.coverage(rng, 5000) < 1
    X = man.sample(rng, 2000)
    rho = man.partition(X)
    assert np.allclose(rho.sum(1), 1) and (rho >= 0).all()
    assert (rho[~man.in_chart(X)] == 0).all()  # ρ_n is supported in U_n


def test_charts_are_projections_with_inverses(man):
    rng = np.random.default_rng(3)
    X = man.sample(rng, 300)
    inside = man.in_chart(X)
    for n in range(0, man.C_M, max(1, man.C_M // 7)):
        V = man.tangent(n)
        assert np.allclose(V.T @ V, np.eye(man.d))
        Z = man.chart(n, X[inside[:, n]])
        assert ((Z >= 0) & (Z <= 1)).all()
        for x, z in zip(X[inside[:, n]], Z):
            assert np.allclose(man.chart_inverse(n, z), x)


def test_bad_input():
    with pytest.raises(ManifoldError, match="unknown"):
        make_manifold("klein", 5)
    with pytest.raises(ManifoldError, match="at least"):
        make_manifold("torus", 3)
