"""The positive controls (tmcheck.empirics.synthetic.controls) and their report's rules
(tmcheck.empirics.report.controls): exact kNN against a brute-force oracle, kernel ridge against its
closed form, known rates recovered (pure noise: MSE = σ²/k exactly; the holder field: near 2/3), each
check shown to fail on a mutant (k fixed instead of growing with n)."""

from __future__ import annotations

import numpy as np
import pytest

from tmcheck.empirics.report import controls as report
from tmcheck.empirics.synthetic import controls
from tmcheck.empirics.synthetic.problem import Experiment, Problem


def test_knn_means_equal_a_brute_force_oracle():
    rng = np.random.default_rng(0)
    X, y, Q = rng.random((300, 3)), rng.standard_normal(300), rng.random((40, 3))
    means, radius = controls.knn_means(X, y, Q, [1, 5, 37])
    dist = np.linalg.norm(Q[:, None, :] - X[None, :, :], axis=2)  # (40, 300)
    order = np.argsort(dist, axis=1)
    for j, k in enumerate((1, 5, 37)):
        assert np.allclose(means[:, j], y[order[:, :k]].mean(axis=1))
    assert np.allclose(radius, np.sort(dist, axis=1)[:, 36])
    with pytest.raises(ValueError, match="k must lie in"):
        controls.knn_means(X, y, Q, [301])


def test_knn_means_in_chunks_equal_one_query(monkeypatch):
    rng = np.random.default_rng(1)
    X, y, Q = rng.random((200, 2)), rng.standard_normal(200), rng.random((50, 2))
    whole, _ = controls.knn_means(X, y, Q, [3, 64])
    monkeypatch.setattr(controls, "CHUNK_BYTES", 32 * 64 * 7)  # 7 queries a chunk
    assert np.array_equal(controls.knn_means(X, y, Q, [3, 64])[0], whole)


def test_theory_k_and_the_cv_grid():
    assert controls.theory_k(1.0, 1000, 1, 1.0) == 100  # 1000^(2/3)
    assert controls.theory_k(0.001, 1000, 4, 0.5) == 1 and controls.theory_k(1e6, 1000, 1, 1.0) == 1000
    assert controls.cv_grid(10) == [1, 2, 3, 4, 6, 8]
    assert controls.bandwidth(2.0, 10**6, 4, 1.0) == pytest.approx(2.0 * 10 ** (-1))


def _noise_slope(theory_k) -> float:
    """The log-log slope of knn-theory's MSE on pure noise (f = 0, σ = 1), where E MSE = 1/k exactly."""
    rng = np.random.default_rng(2)
    ns = np.array([1000, 4000, 16000])
    mses = []
    for n in ns:
        X, Q = rng.random((n, 1)), rng.random((500, 1))
        k = theory_k(0.2, n, 1, 1.0)
        # the queries' means share neighbours: average over 40 noise draws on the same points
        mses.append(
            np.mean([np.mean(controls.knn_means(X, rng.standard_normal(n), Q, [k])[0] ** 2) for _ in range(40)])
        )
    return -np.polyfit(np.log(ns), np.log(mses), 1)[0]


def test_knn_theory_recovers_the_variance_rate_exactly_and_a_fixed_k_does_not():
    assert _noise_slope(controls.theory_k) == pytest.approx(2 / 3, abs=0.03)
    assert _noise_slope(lambda c, n, d, beta: 20) == pytest.approx(0.0, abs=0.05)  # the mutant: k fixed


def _holder_slope(monkeypatch, fixed_k: int | None = None) -> float:
    if fixed_k is not None:
        monkeypatch.setattr(controls, "theory_k", lambda c, n, d, beta: fixed_k)
    exp = Experiment(Problem(manifold="torus", d=1, D=4, beta=1.0, noise=0.5))
    Xt, ft = exp.test_set(1500)
    X, y = exp.pool(30_000, 0)
    ns = np.array([1000, 3000, 10_000, 30_000])
    mses = [controls.knn_theory(X[:n], y[:n], Xt, ft, 0.35, 1, 1.0)["test_mse"] for n in ns]
    return -np.polyfit(np.log(ns), np.log(mses), 1)[0]


def test_knn_theory_recovers_two_thirds_on_the_lipschitz_holder_field(monkeypatch):
    assert abs(_holder_slope(monkeypatch) - 2 / 3) < 0.1
    assert abs(_holder_slope(monkeypatch, fixed_k=8) - 2 / 3) > 0.1  # the mutant: a fixed k


def test_knn_cv_chooses_the_mean_on_pure_noise_and_few_neighbours_without_noise():
    rng = np.random.default_rng(3)
    X, y = rng.random((600, 1)), rng.standard_normal(600)
    out = controls.knn_cv(X[100:], y[100:], X[:100], y[:100], rng.random((50, 1)), np.zeros(50))
    assert out["k"] >= 250 and out["k_max_tried"] == 500
    f = np.sin(12 * X[:, 0])
    out = controls.knn_cv(X[100:], f[100:], X[:100], f[:100], X[:50], f[:50])
    assert out["k"] <= 3 and out["k_max_tried"] == controls.CV_START


def test_gaussian_krr_equals_its_closed_form():
    rng = np.random.default_rng(4)
    X, y, Q = rng.random((80, 2)), rng.standard_normal(80), rng.random((10, 2))
    h, alpha = 0.3, 0.05

    def kernel(A, B):
        return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2).sum(-1) / (2 * h * h))

    want = kernel(Q, X) @ np.linalg.solve(kernel(X, X) + alpha * np.eye(80), y)
    assert np.allclose(controls.gaussian_krr(X, y, Q, h, alpha), want)


def test_tuning_picks_its_own_minimum_and_flags_the_grid_edge():
    rng = np.random.default_rng(5)
    X, Xh = rng.random((400, 1)), rng.random((200, 1))
    sets = [(X, np.sin(40 * X[:, 0]), Xh, np.sin(40 * Xh[:, 0]))]  # no noise: the fewest neighbours win
    t = controls.tune_knn_constant(sets, 1, 1.0)
    assert t["heldout_mse"][t["grid"].index(t["c"])] == min(t["heldout_mse"])
    assert t["c"] == controls.C_GRID[0] and t["at_edge"]
    noisy = [(X, sets[0][1] + rng.standard_normal(400), Xh, sets[0][3] + rng.standard_normal(200))]
    assert not controls.tune_knn_constant(noisy, 1, 1.0)["at_edge"]
    t = controls.tune_krr(sets, 1, 1.0, h_grid=(0.5, 0.1), alpha_grid=(0.1, 1.0))
    assert t["h0"] == pytest.approx(t["h"] * 400 ** (1 / 3)) and t["at_edge"]


def test_decade_windows_and_the_smallest_n_from_which_every_window_is_equivalent():
    sizes = [100.0, 316.0, 1000.0, 3162.0, 10_000.0]
    assert report.decade_windows(sizes) == [sizes[0:3], sizes[1:4], sizes[2:5]]
    assert report.decade_windows([100.0, 316.0, 900.0]) == []  # short of a decade

    def windows(*outcomes):
        return [{"sizes": [s], "outcome": o} for s, o in zip(sizes, outcomes, strict=False)]

    assert report.equivalent_from(windows("undecided", "equivalent", "equivalent"), "outcome") == 316.0
    assert report.equivalent_from(windows("equivalent", "undecided", "equivalent"), "outcome") == 1000.0
    assert report.equivalent_from(windows("equivalent", "equivalent", "differs"), "outcome") is None


def test_the_local_holder_exponent_sees_the_field_smooth_below_its_finest_level():
    from tmcheck.empirics.sweep.controls import PRESETS

    p = PRESETS["tiny"]
    rough = report.local_holder(p, 1, 1.0, 1e-2, 1e-3)  # K = 14: the nominal roughness
    assert abs(rough - 1.0) < 0.15
    from dataclasses import replace

    half = replace(p, betas=(0.5,))
    assert abs(report.local_holder(half, 1, 0.5, 1e-2, 1e-3) - 0.5) < 0.1
    below = report.local_holder(half, 1, 0.5, 2e-5, 1e-5)  # under the finest scale 2^-14: only kinks are left
    assert below > 1.2
