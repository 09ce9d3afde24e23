"""Theorem 2's atlas constants from closed forms (Appendix E.2, Steps 1 and 3), samples only as a check.

The grid of the proven network needs, of the atlas `manifolds.make_manifold` builds (centres c_n on 𝓜,
radius r = τ/4, charts φ_n(x) = V_n^T(x - c_n)/(2r) + 1/2, bump partition of unity ρ_n = b_n / Σ_m b_m,
b_n(x) = exp(-1/(1 - |x - c_n|²/r²))):

* L_φ, the Lipschitz constant of φ_n^{-1} on φ_n(U_n). Write w = 2r(z - 1/2) = V_n^T(x - c_n), |w| < r on U_n.
  Circle and sphere: x(w) = c_n √(1 - |w|²) + V_n w, so |dx|² = |dw|² + (w·dw)²/(1 - |w|²) <= |dw|²/(1 - |w|²).
  Flat torus: each angle is θ_i = θ_{n,i} + arcsin w_i, |dx|² = Σ dw_i²/(1 - w_i²) <= |dw|²/(1 - |w|²).
  The disk |w| < r is convex, so L_φ = 2r / √(1 - r²) exactly (0.5164 at r = 1/4) for all three.
* C_M (the number of centres), the coverage q = max_x min_n |x - c_n| / r, and b_min = exp(-1/(1 - q²)) <= Σ_m b_m
  (the nearest centre's bump alone). Circle with K equally spaced centres: q = 2 sin(π/2K)/r; flat torus with a
  K x K grid: q = √2 · 2 sin(π/2K)/r (both angles at half a spacing); sphere: min_n |x - c_n| is 1-Lipschitz, so
  q <= max over the cells of a latitude-longitude grid of its value at the cell's centre plus the half-diagonal
  (the cells that can hold the maximum refined 16 x 16 times).
* μ, the most charts containing one point, and L_ρ, the Lipschitz constant of ρ_n ∘ φ_n^{-1} in z, from the
  closed forms of ρ_n and its gradient, ∇_x ρ_n = (∇b_n - ρ_n Σ_m ∇b_m)/Σ_m b_m with
  ∇b_m = -2 b_m (x - c_m) / (r² (1 - |x - c_m|²/r²)²), pulled back by the chart's Jacobian (∇_z = 2r J(w)^T ∇_x),
  evaluated on a square grid of spacing h in w over each chart (one chart for the circle and the torus, whose
  atlases are symmetric; every chart for the sphere). Every point of U_n lies within h_x = h √d / (2√(1 - (r+h)²))
  of a grid point, so μ <= max_grid #{m : |g - c_m| < r + h_x} (a bound, not an estimate); L_ρ is the grid's
  largest |∇_z ρ_n| plus √d/2 times the largest change of ∇_z ρ_n between neighbouring grid points (a point of a
  cell is within half a step per axis of a grid point).

`sampled_constants` estimates the same quantities on random points and nearby pairs, as the previous
versions of tmcheck did; tests check that each estimate lies below (and near) the closed form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tmcheck.theory.manifolds import Manifold

# grid points per radius r in each chart coordinate (the sphere has 140 charts to grid, the others one)
GRID_STEPS = {"circle": 2000, "torus": 100, "sphere": 40}


@dataclass(frozen=True)
class AtlasConstants:
    """What Theorem 2's grid needs from the atlas (all in the model space; the isometry Q changes none)."""

    C_M: int
    mu: int  # the most charts containing one point (an upper bound)
    L_phi: float  # Lipschitz constant of φ_n^{-1}: 2r/√(1 - r²)
    L_rho: float  # Lipschitz constant of ρ_n ∘ φ_n^{-1} in z (grid maximum plus the in-cell variation)
    coverage: float  # q >= max_x min_n |x - c_n| / r
    b_min: float  # <= min_x Σ_m b_m(x): exp(-1/(1 - q²))
    method: str = "closed form"


def chart_lipschitz(r: float) -> float:
    """L_φ = 2r / √(1 - r²) (module docstring)."""
    return 2 * r / math.sqrt(1 - r * r)


def bump(t: np.ndarray) -> np.ndarray:
    """b(t) = exp(-1/(1 - t)) for t = |x - c|²/r² < 1, else 0."""
    with np.errstate(divide="ignore", over="ignore"):
        return np.where(t < 1, np.exp(-1.0 / np.maximum(1 - t, 1e-300)), 0.0)


def coverage_bound(m: Manifold) -> float:
    """q >= max over 𝓜 of min_n |x - c_n| / r (module docstring)."""
    K = m.C_M
    if m.name == "circle":
        return 2 * math.sin(math.pi / (2 * K)) / m.r
    if m.name == "torus":
        k = round(math.sqrt(K))
        return math.sqrt(2) * 2 * math.sin(math.pi / (2 * k)) / m.r
    # sphere: min_n |x - c_n| is 1-Lipschitz, so over a cell of a latitude-longitude grid it is at most its value
    # at the cell's centre plus the cell's half-diagonal h; cells that could hold the maximum are refined once
    C = m.centres0

    def cells(phi0, th0, dphi, dth, n_phi, n_th):
        phi = phi0[:, None] + (np.arange(n_phi) + 0.5)[None] * dphi / n_phi  # (cells, n_phi)
        th = th0[:, None] + (np.arange(n_th) + 0.5)[None] * dth / n_th
        P = np.repeat(phi, n_th, axis=1)
        T = np.tile(th, (1, n_phi))
        G = np.stack([np.sin(P) * np.cos(T), np.sin(P) * np.sin(T), np.cos(P)], -1).reshape(-1, 3)
        near = np.empty(len(G))
        for s in range(0, len(G), 40000):
            g = G[s : s + 40000]
            near[s : s + 40000] = np.sqrt(((g[:, None, :] - C[None]) ** 2).sum(-1)).min(1)
        return near.reshape(len(phi0), -1), 0.5 * math.hypot(dphi / n_phi, dth / n_th)

    n_lat, n_lon = 200, 400
    dphi, dth = math.pi / n_lat, 2 * math.pi / n_lon
    P0, T0 = np.meshgrid(np.arange(n_lat) * dphi, np.arange(n_lon) * dth, indexing="ij")
    near, h = cells(P0.reshape(-1), T0.reshape(-1), dphi, dth, 1, 1)
    near = near[:, 0]
    keep = near + h >= near.max()  # the cells that may hold the maximum
    fine, hf = cells(P0.reshape(-1)[keep], T0.reshape(-1)[keep], dphi, dth, 16, 16)
    return float(fine.max() + hf) / m.r


def _chart_points(m: Manifold, n: int, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Model-space points y(w) of chart n for rows w of W (P, d), and the Jacobians dy/dw (P, k, d)."""
    yc = m.centres0[n]
    T = m.tangent_model(yc)  # (k, d)
    if m.name == "torus":
        a = np.arctan2(yc[1::2], yc[0::2])  # (d,)
        ang = a[None] + np.arcsin(W)
        Y = np.stack([np.cos(ang), np.sin(ang)], -1).reshape(len(W), -1)
        J = np.zeros((len(W), 2 * m.d, m.d))
        s = 1 / np.sqrt(1 - W**2)
        for i in range(m.d):
            J[:, 2 * i, i] = -np.sin(ang[:, i]) * s[:, i]
            J[:, 2 * i + 1, i] = np.cos(ang[:, i]) * s[:, i]
        return Y, J
    root = np.sqrt(1 - (W**2).sum(1))  # circle and sphere
    Y = yc[None] * root[:, None] + W @ T.T
    J = T[None] - yc[None, :, None] * (W / root[:, None])[:, None, :]
    return Y, J


def _chart_grid(d: int, r: float, steps: int) -> tuple[np.ndarray, float]:
    """A square grid of spacing h = r/steps over [-r - h, r + h]^d (it covers the disk |w| < r)."""
    h = r / steps
    axis = np.arange(-steps - 1, steps + 2) * h
    W = np.stack(np.meshgrid(*([axis] * d), indexing="ij"), -1).reshape(-1, d)
    return W, h


def _chart_constants(m: Manifold, n: int, steps: int) -> tuple[int, float]:
    """(μ bound, L_ρ bound) over chart n's grid."""
    r, C = m.r, m.centres0
    W, h = _chart_grid(m.d, r, steps)
    Y, J = _chart_points(m, n, W)
    near = np.flatnonzero(np.linalg.norm(C - C[n], axis=1) < 2 * r + 4 * h)  # centres that can reach the chart
    diff = Y[:, None, :] - C[near][None]  # (P, K', k)
    t = (diff**2).sum(-1) / r**2  # (P, K')
    h_x = h * math.sqrt(m.d) / (2 * math.sqrt(1 - (r + h) ** 2))
    inside = np.linalg.norm(W, axis=1) < r  # grid points of the chart image's disk
    mu = int((np.sqrt(t) * r < r + h_x).sum(1)[np.linalg.norm(W, axis=1) < r + h].max())
    b = bump(t)
    with np.errstate(divide="ignore", invalid="ignore"):
        grad_b = np.where(
            (t < 1)[..., None], -2 * b[..., None] * diff / (r**2 * np.maximum(1 - t, 1e-300)[..., None] ** 2), 0.0
        )
    S = b.sum(1)
    j = int(np.flatnonzero(near == n)[0])
    rho = b[:, j] / S
    grad_x = (grad_b[:, j] - rho[:, None] * grad_b.sum(1)) / S[:, None]  # (P, k)
    grad_z = 2 * r * np.einsum("pkd,pk->pd", J, grad_x)  # (P, d)
    size = 2 * steps + 3
    G = grad_z.reshape(*([size] * m.d), m.d)
    jump = 0.0
    for ax in range(m.d):
        jump = max(jump, float(np.linalg.norm(np.diff(G, axis=ax), axis=-1).max()))
    # a point of a cell is within half a step per axis of a grid point: √d/2 steps
    return mu, float(np.linalg.norm(grad_z, axis=1)[inside].max()) + jump * math.sqrt(m.d) / 2


def atlas_constants(m: Manifold, steps: int | None = None) -> AtlasConstants:
    """The closed-form constants of m's atlas (module docstring), cached per atlas."""
    steps = GRID_STEPS[m.name] if steps is None else steps
    return _cached(m.name, m.centres0.tobytes(), m.centres0.shape, m.r, steps, m)


_CACHE: dict = {}


def _cached(name, centres, shape, r, steps, m: Manifold) -> AtlasConstants:
    key = (name, centres, shape, r, steps)
    if key not in _CACHE:
        charts = range(m.C_M) if name == "sphere" else (0,)  # circle, torus: every chart is a rotation of chart 0
        mu, L_rho = 0, 0.0
        for n in charts:
            a, b = _chart_constants(m, n, steps)
            mu, L_rho = max(mu, a), max(L_rho, b)
        q = coverage_bound(m)
        b_min = math.exp(-1 / (1 - q * q)) if q < 1 else 0.0
        _CACHE[key] = AtlasConstants(m.C_M, mu, chart_lipschitz(m.r), L_rho, q, b_min)
    return _CACHE[key]


def sampled_constants(m: Manifold, seed: int = 0, n_points: int = 4000) -> AtlasConstants:
    """Estimates of μ, L_φ and L_ρ on random points and nearby pairs (lower bounds of the sups, not bounds),
    and of the coverage on a sample: the check the closed forms are tested against."""
    rng = np.random.default_rng([seed, 17])
    mu = m.multiplicity(m.sample(n_points, np.random.default_rng(seed)))
    X = m.sample(n_points, rng)
    L_phi, L_rho = 0.0, 0.0
    for scale in (0.05, 0.01):
        Xp = m.project(X + scale * (m.sample_model(rng, len(X)) @ m.Q.T))
        r1, r2 = m.partition(X), m.partition(Xp)
        ins1, ins2 = m.in_chart(X), m.in_chart(Xp)
        for n in range(m.C_M):
            dz = np.linalg.norm(m.chart(n, X) - m.chart(n, Xp), axis=1)
            both = ins1[:, n] & ins2[:, n] & (dz > 0)
            either = (ins1[:, n] | ins2[:, n]) & (dz > 0)
            if both.any():
                L_phi = max(L_phi, float(np.max(np.linalg.norm(X - Xp, axis=1)[both] / dz[both])))
            if either.any():
                L_rho = max(L_rho, float(np.max(np.abs(r1[:, n] - r2[:, n])[either] / dz[either])))
    q = m.coverage(rng, n_points)
    return AtlasConstants(m.C_M, mu, L_phi, L_rho, q, math.exp(-1 / (1 - q * q)), "samples")
