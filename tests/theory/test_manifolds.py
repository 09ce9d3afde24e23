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
        for x, z in zip(X[inside[:, n]], Z, strict=True):
            assert np.allclose(man.chart_inverse(n, z), x)


def test_bad_input():
    with pytest.raises(ManifoldError, match="unknown"):
        make_manifold("klein", 5)
    with pytest.raises(ManifoldError, match="at least"):
        make_manifold("torus", 3)


# ---- the protocol shared with empirics (one registry, one isometry)

from tmcheck.theory.manifolds import MANIFOLDS, SHAPES, embed, random_isometry  # noqa: E402

PROTOCOL = [
    ("circle", 1, 5),
    ("sphere", 3, 9),
    ("torus", 2, 7),
    ("cube", 2, 8),
    ("linear", 3, 6),
    ("swissroll", 2, 5),
    ("cube-image", 2, 20),
]


def test_registry_is_one_list():
    assert set(MANIFOLDS) == {n for n, _, _ in PROTOCOL} and MANIFOLDS == tuple(SHAPES)


@pytest.mark.parametrize("name,d,D", PROTOCOL)
@pytest.mark.parametrize("density", ["uniform", "tilted"])
def test_samples_lie_on_the_manifold(name, d, D, density):
    m = embed(name, d, D, 3)
    X, u = m.sample_with_coords(400, np.random.default_rng(0), density)
    assert X.shape == (400, D) and u.shape == (400, d)
    assert np.allclose(m.Q.T @ m.Q, np.eye(m.k))
    assert m.residual(X).max() < 1e-9
    # a point off the manifold has a positive residual (the check can fail), except where the shape is all of span(Q)
    off = X + 0.1 * np.random.default_rng(1).standard_normal(X.shape)
    assert m.residual(off).min() > 1e-6 or name == "linear" and m.k == D


@pytest.mark.parametrize(
    "name,d,D", [p for p in PROTOCOL if p[0] in ("circle", "torus", "cube", "linear", "swissroll")]
)
def test_coords_invert_sampling(name, d, D):
    m = embed(name, d, D, 4)
    X, u = m.sample_with_coords(200, np.random.default_rng(2))
    assert np.allclose(m.coords(X), u)


@pytest.mark.parametrize("name,d,D", [p for p in PROTOCOL if p[0] in ("circle", "sphere", "torus", "linear")])
def test_projection_and_tangent(name, d, D):
    m = embed(name, d, D, 5)
    rng = np.random.default_rng(6)
    X = m.sample(100, rng)
    assert np.allclose(m.project(X), X)
    T = m.tangent_at(X)
    assert T.shape == (100, D, d) and np.allclose(np.einsum("nDi,nDj->nij", T, T), np.eye(d))
    # a small step along the tangent, projected back, moves by second order only
    h = 1e-4
    step = X + h * T[:, :, 0]
    assert np.abs(np.linalg.norm(m.project(step) - X, axis=1) - h).max() < 1e-6


def test_tilted_density_tilts():
    m = embed("sphere", 2, 5, 0)
    X = m.sample(20000, np.random.default_rng(0), "tilted")
    assert (X @ m.Q)[:, 0].mean() > 0.1  # E[y0] = 1/6 under 1 + y0/2 on S^2; 0 when uniform
    U = m.sample(20000, np.random.default_rng(0))
    assert abs((U @ m.Q)[:, 0].mean()) < 0.03


def test_one_isometry_seeded():
    Q1, Q2 = random_isometry(7, 3, 11), random_isometry(7, 3, np.random.default_rng(11))
    assert np.array_equal(Q1, Q2) and np.allclose(Q1.T @ Q1, np.eye(3))
    with pytest.raises(ManifoldError, match="at least"):
        embed("torus", 3, 5)
    with pytest.raises(ManifoldError, match="d = 2"):
        embed("swissroll", 3, 5)


def test_theorem2_multiplicity(man):
    X = man.sample(4000, np.random.default_rng(0))
    mu = man.multiplicity(X)
    assert 1 <= mu <= man.C_M and mu == int(man.in_chart(X).sum(1).max())
