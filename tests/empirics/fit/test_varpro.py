"""The offset law's alpha-hat is fixed to rounding level, not to sqrt(eps): committed reports rebuilt
on another CPU (another summation order) must give the same numbers to 1e-9 (tools/results.py check)."""

import numpy as np
import pytest

from tmcheck.empirics.fit import varpro

N = np.array([100, 316, 1000, 3162, 10000.0])


def _data(B=512, seed=0):
    rng = np.random.default_rng(seed)
    return (0.3 + 5 * N**-0.6) * np.exp(rng.normal(0, 0.05, (B, len(N))))


def _reversed_fit(y):
    return varpro.fit_batch(np.log(N)[::-1].copy(), y[:, ::-1].copy())


@pytest.mark.parametrize("form", ["offset", "power"])
def test_alpha_does_not_depend_on_the_summation_order(form):
    y = _data()
    a = varpro.fit_batch(np.log(N), y, form)["alpha"]
    b = varpro.fit_batch(np.log(N)[::-1].copy(), y[:, ::-1].copy(), form)["alpha"]
    assert np.max(np.abs(a - b) / a) < 1e-11


def test_without_the_polish_the_order_moves_alpha_by_about_sqrt_eps(monkeypatch):
    # the mutant: golden section alone (what the reports were rebuilt with before)
    y = _data()
    monkeypatch.setattr(varpro, "_polish", lambda logn, yy, a, free_E, iters=48: a)
    a, b = varpro.fit_batch(np.log(N), y)["alpha"], _reversed_fit(y)["alpha"]
    assert np.max(np.abs(a - b) / a) > 1e-9


def test_the_polished_alpha_is_a_root_of_the_slope_and_no_worse_than_golden():
    y, logn = _data(64), np.log(N)
    f = varpro.fit_batch(logn, y)
    k = np.argmin(varpro.profile_grid(logn, y), axis=1)
    g = varpro._golden(logn, y, varpro.GRID[np.maximum(k - 1, 0)], varpro.GRID[k + 1], True)
    assert np.all(f["rss"] <= varpro.profile_at(logn, y, g)[2] * (1 + 1e-12))
    eps = 1e-9 * f["alpha"]
    assert np.all(varpro._slope(logn, y, f["alpha"] - eps, True) < 0)
    assert np.all(varpro._slope(logn, y, f["alpha"] + eps, True) > 0)


def test_a_minimum_on_the_edge_or_a_flat_profile_keeps_the_golden_value():
    logn = np.log(N)
    flat = np.ones((1, len(N)))  # B = 0: the profile RSS does not depend on alpha
    a = np.array([0.7])
    assert varpro._polish(logn, flat, a, True)[0] == 0.7
    steep = (5 * N**-6.0)[None]  # true alpha 6 > ALPHA_MAX: the minimum is the range's end
    f = varpro.fit_batch(logn, steep, "power")
    assert f["alpha"][0] == pytest.approx(varpro.ALPHA_MAX, abs=1e-6)


def test_a_curvature_test_on_the_power_face_prints_f_zero_not_rounding(monkeypatch):
    from tmcheck.empirics.fit import exponent

    n = np.repeat(N, 3)
    y = 5 * n**-0.4 * np.exp(np.random.default_rng(1).normal(0, 0.02, len(n)) - 0.05 * np.log(n / 100) ** 2)
    # a loss that bends away from a floor: the offset fit puts E on its bound 0, the power law's face

    def rounded(logn, yy, form="offset", **kw):  # the two fits' RSS apart by rounding, as on another CPU
        out = varpro.fit_batch(logn, yy, form, **kw)
        if form == "power":
            out["rss"] = out["rss"] * (1 + 4e-15)
        return out

    monkeypatch.setattr(exponent, "fit_batch", rounded)
    t = exponent.curvature_test(n, y)
    assert t["E"] == 0 and t["F"] == 0.0 and "(F = 0," in t["words"]
