"""Known answers for the synthetic data: points on the manifold, the targets' regularity, the
stated density, reproducibility, one-line errors, and the kNN baseline's rate on an easy case. The
manifolds are tmcheck.theory.manifolds' (one registry); the fields are empirics' HolderField."""

from __future__ import annotations

import numpy as np
import pytest

from tmcheck.empirics.synthetic.problem import (
    DENSITIES,
    Experiment,
    HolderField,
    Problem,
    holder_field,
    knn_baseline,
    krr_baseline,
    validation_size,
)
from tmcheck.theory.bounds import alpha_D

ON_MANIFOLD = [("torus", "kinks"), ("sphere", "kinks"), ("cube", "kinks"), ("torus", "holder"), ("cube", "holder")]


@pytest.mark.parametrize("manifold,target", ON_MANIFOLD)
@pytest.mark.parametrize("density", DENSITIES)
def test_samples_lie_on_the_manifold(manifold, target, density):
    exp = Experiment(Problem(manifold=manifold, d=3, D=11, target=target, density=density))
    m = exp.manifold
    X = exp.sample(2000, np.random.default_rng(1))
    assert X.shape == (2000, 11)
    assert m.residual(X).max() < 1e-12
    # and the residual does detect points off the manifold
    assert m.residual(X * 1.01).min() > 1e-4 or manifold == "cube"
    assert m.residual(X + 1e-3 * np.random.default_rng(2).standard_normal(X.shape)).min() > 1e-6


def test_torus_is_flat_product_of_unit_circles_and_sphere_unit():
    m = Experiment(Problem(manifold="torus", d=2, D=7)).manifold
    X = m.sample(500, np.random.default_rng(0))
    z = X @ m.Q
    np.testing.assert_allclose(z[:, 0] ** 2 + z[:, 1] ** 2, 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), np.sqrt(2), atol=1e-12)
    s = Experiment(Problem(manifold="sphere", d=4, D=9, target="kinks")).manifold
    np.testing.assert_allclose(np.linalg.norm(s.sample(500, np.random.default_rng(0)), axis=1), 1.0, atol=1e-12)


def test_tilted_density_is_the_stated_one():
    # torus: t = cos θ_1 with θ_1 uniform; density ∝ 1 + t/2 gives E[t] = E[t²]/2 / 1 = 1/4.
    for density, want in (("uniform", 0.0), ("tilted", 0.25)):
        exp = Experiment(Problem(manifold="torus", d=2, D=6, density=density))
        t = (exp.sample(40_000, np.random.default_rng(3)) @ exp.manifold.Q)[:, 0]
        assert abs(t.mean() - want) < 0.015


def _local_exponent(f, u0, direction, hs):
    inc = [np.mean(np.abs(f(u0 + h * direction) - f(u0))) for h in hs]
    return np.polyfit(np.log(hs), np.log(inc), 1)[0]


@pytest.mark.parametrize("beta", [0.3, 0.5, 0.8])
def test_holder_field_has_exponent_beta(beta):
    rng = np.random.default_rng(0)
    u0 = rng.uniform(0, 0.9, (4000, 2))
    e = np.array([0.6, 0.8])
    hs = 2.0 ** -np.arange(4, 11)
    slope = _local_exponent(lambda u: holder_field(u, beta, 12, 12345), u0, e, hs)
    assert abs(slope - beta) < 0.08


def test_holder_field_is_beta_holder_with_a_bounded_constant():
    # sup |f(u)-f(v)| / |u-v|^β over pairs at every scale stays bounded (no growth at small h)
    rng = np.random.default_rng(1)
    beta, ratios = 0.5, []
    for h in 2.0 ** -np.arange(1, 13):
        u = rng.uniform(0, 1, (3000, 2))
        v = np.mod(u + h * np.array([1.0, 0.0]), 1.0)
        ratios.append(np.max(np.abs(holder_field(u, beta, 12, 7) - holder_field(v, beta, 12, 7))) / h**beta)
    assert max(ratios) < 4 * 2 * 2 / (1 - 2 ** (beta - 1))  # the docstring's two geometric sums


def test_kinks_target_has_exponent_beta_across_a_kink():
    beta = 0.5
    p = Problem(manifold="torus", d=1, D=4, target="kinks", beta=beta)
    exp = Experiment(p)
    f = exp.field
    # walk along the circle through the point where the first kink's argument vanishes
    theta = np.linspace(0, 2 * np.pi, 200_001)
    z = np.stack([np.cos(theta), np.sin(theta)], 1)
    X = z @ exp.manifold.Q.T
    arg = X @ f.W[0] - f.b[0]
    i = int(np.argmin(np.abs(arg)))
    steps = np.array([8, 32, 128, 512])
    one_sided = np.abs(f(X[i + steps]) - f(X[[i]]))
    slope = np.polyfit(np.log(steps), np.log(one_sided), 1)[0]
    assert abs(slope - beta) < 0.1


def test_relu_teacher_is_lipschitz_with_its_weight_bound():
    p = Problem(manifold="sphere", d=3, D=8, target="relu", beta=1.0)
    exp = Experiment(p)
    f = exp.field
    lip = np.sum(np.abs(f.a) * np.linalg.norm(f.W, axis=1)) / f.scale
    rng = np.random.default_rng(0)
    X, Y = exp.manifold.sample(5000, rng), exp.manifold.sample(5000, rng)
    ratio = np.abs(f(X) - f(Y)) / np.linalg.norm(X - Y, axis=1)
    assert ratio.max() <= lip * (1 + 1e-12)


def test_targets_are_normalised():
    for target, beta, manifold in (("holder", 0.5, "torus"), ("kinks", 1.0, "sphere"), ("relu", 1.0, "cube")):
        exp = Experiment(Problem(manifold=manifold, d=2, D=8, target=target, beta=beta))
        assert isinstance(exp.field, HolderField)
        f = exp.field(exp.sample(20_000, np.random.default_rng(9)))
        assert abs(f.mean()) < 0.05 and abs(f.std() - 1) < 0.05


def test_everything_is_seeded():
    a = Experiment(Problem(d=2, D=8)).split(200, 400, seed=1, n_test=100)
    b = Experiment(Problem(d=2, D=8)).split(200, 400, seed=1, n_test=100)
    c = Experiment(Problem(d=2, D=8)).split(200, 400, seed=2, n_test=100)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    np.testing.assert_array_equal(a.y_val, b.y_val)
    np.testing.assert_array_equal(a.X_test, c.X_test)  # the test set is shared by every seed
    assert not np.array_equal(a.X_train, c.X_train)
    # data sets are nested in n
    small = Experiment(Problem(d=2, D=8)).split(100, 400, seed=1, n_test=100)
    np.testing.assert_array_equal(small.X_val, a.X_val[: len(small.X_val)])


def test_noise_is_the_stated_sigma():
    exp = Experiment(Problem(d=1, D=4, noise=0.3))
    X, y = exp.pool(40_000, seed=0)
    assert abs(np.std(y - exp.field(X)) - 0.3) < 0.01


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(d=5, D=4), "exceeds the ambient dimension"),
        (dict(beta=1.5), "beta must lie in (0, 1]"),
        (dict(beta=0.0), "beta must lie in (0, 1]"),
        (dict(d=3, D=5, manifold="torus"), "needs D >= 6"),
        (dict(manifold="sphere", target="holder"), "global chart"),
        (dict(manifold="linear", target="holder"), "global chart"),
        (dict(manifold="circle", d=2, target="kinks"), "the circle has d = 1"),
        (dict(target="relu", beta=0.5), "Lipschitz"),
        (dict(manifold="klein"), "unknown manifold"),
        (dict(noise=-1.0), "noise"),
    ],
)
def test_bad_parameters_are_one_line_errors(kwargs, message):
    with pytest.raises(ValueError) as err:
        Problem(**kwargs)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_n_smaller_than_the_validation_split_is_refused():
    assert validation_size(100, 0.2, 8) == 20
    with pytest.raises(ValueError, match="smaller than the validation split"):
        validation_size(12, 0.2, 8)


def test_knn_baseline_attains_the_minimax_rate_on_an_easy_case():
    # d = 1, β = 1: α_D = 2/3; kNN with k tuned on validation attains it (up to finite-n slack)
    exp = Experiment(Problem(d=1, D=4, beta=1.0, noise=0.5))
    ns, mses = [250, 1000, 4000], []
    for n in ns:
        mses.append(np.mean([knn_baseline(exp.split(n, 4000, s, 4000))["test_mse"] for s in range(3)]))
    slope = -np.polyfit(np.log(ns), np.log(mses), 1)[0]
    assert abs(slope - alpha_D(1, 1.0)) < 0.15


def test_krr_baseline_beats_the_mean_predictor():
    s = Experiment(Problem(d=2, D=6, beta=1.0)).split(600, 600, 0, 2000)
    assert krr_baseline(s)["test_mse"] < 0.5 * np.mean(s.f_test**2)


def test_the_manifolds_are_the_one_registry_and_the_circle_works():
    from tmcheck.theory import manifolds

    exp = Experiment(Problem(manifold="circle", d=1, D=5, target="holder", beta=0.5))
    assert isinstance(exp.manifold, manifolds.Manifold) and exp.manifold.name == "circle"
    X, y = exp.pool(500, seed=0)
    assert exp.manifold.residual(X).max() < 1e-12 and abs(np.std(exp.field(X)) - 1) < 0.1
