"""Concrete compact manifolds with known geometry for Theorem 2 (Section 2.2 Assumption 1; Appendix E.2).

Each manifold is a standard model 𝓜_0 in R^k (unit circle in R^2, unit 2-sphere in R^3, flat torus
S^1 x S^1 in R^4 with unit circles) mapped isometrically into R^D by a random orthogonal Q (D x k,
orthonormal columns, seeded): x = Q y. Isometries preserve the reach, so τ is that of the model:
1 for the circle and the sphere (the medial axis is the centre), 1 for the flat torus
(y = (cos a, sin a, cos b, sin b): the nearest medial points are (0, 0, cos b, sin b) and
(cos a, sin a, 0, 0), at distance 1).

Atlas (Step 1 of E.2): centres c_n on 𝓜, radius r = τ/4, U_n = 𝓜 ∩ B(c_n, r), tangent bases V_n
(D x d, orthonormal), chart φ_n(x) = V_n^T (x - c_n)/(2r) + 1/2 ∈ [0,1]^d on U_n, and its inverse on
φ_n(U_n) (explicit for each model). Partition of unity ρ_n = b_n / Σ_m b_m with the smooth bump
b_n(x) = exp(-1 / (1 - ||x - c_n||^2 / r^2)) inside B(c_n, r), 0 outside: ρ_n is supported in U_n
and Σ_n ρ_n = 1 on 𝓜 because the open balls cover 𝓜 (checked by `coverage`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MANIFOLDS = ("circle", "sphere", "torus")


class ManifoldError(ValueError):
    pass


def random_isometry(D: int, k: int, seed: int) -> np.ndarray:
    """Q (D x k) with orthonormal columns, from the QR factorisation of a Gaussian matrix."""
    if D < k:
        raise ManifoldError(f"the ambient dimension D = {D} must be at least {k} for this manifold")
    A = np.random.default_rng(seed).standard_normal((D, k))
    Q, R = np.linalg.qr(A)
    return Q * np.sign(np.diag(R))


@dataclass
class Manifold:
    name: str
    d: int  # intrinsic dimension
    k: int  # dimension of the model space
    D: int
    Q: np.ndarray  # (D, k)
    tau: float
    centres0: np.ndarray  # (C_M, k) centres in the model space
    r: float

    # ---- model-space geometry (y in R^k)
    def sample_model(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.name == "circle":
            a = rng.uniform(0, 2 * np.pi, n)
            return np.stack([np.cos(a), np.sin(a)], 1)
        if self.name == "sphere":
            g = rng.standard_normal((n, 3))
            return g / np.linalg.norm(g, axis=1, keepdims=True)
        a, b = rng.uniform(0, 2 * np.pi, (2, n))
        return np.stack([np.cos(a), np.sin(a), np.cos(b), np.sin(b)], 1)

    def tangent_model(self, y: np.ndarray) -> np.ndarray:
        """(k, d) orthonormal tangent basis at the model point y."""
        if self.name == "circle":
            return np.array([[-y[1]], [y[0]]])
        if self.name == "sphere":
            a = np.array([1.0, 0, 0]) if abs(y[0]) < 0.9 else np.array([0, 1.0, 0])
            e1 = a - (a @ y) * y
            e1 /= np.linalg.norm(e1)
            return np.stack([e1, np.cross(y, e1)], 1)
        return np.array([[-y[1], 0], [y[0], 0], [0, -y[3]], [0, y[2]]])

    def lift_model(self, y_c: np.ndarray, w: np.ndarray) -> np.ndarray | None:
        """The point y of U_n (model space) with T^T (y - y_c) = w, or None if there is none."""
        T = self.tangent_model(y_c)
        if self.name in ("circle", "sphere"):
            s = float(w @ w)
            if s >= 1:
                return None
            return y_c * math.sqrt(1 - s) + T @ w
        if abs(w[0]) >= 1 or abs(w[1]) >= 1:
            return None
        a0, b0 = math.atan2(y_c[1], y_c[0]), math.atan2(y_c[3], y_c[2])
        a, b = a0 + math.asin(w[0]), b0 + math.asin(w[1])
        return np.array([math.cos(a), math.sin(a), math.cos(b), math.sin(b)])

    # ---- ambient geometry
    @property
    def C_M(self) -> int:
        return len(self.centres0)

    @property
    def centres(self) -> np.ndarray:
        return self.centres0 @ self.Q.T  # (C_M, D)

    def tangent(self, n: int) -> np.ndarray:
        """V_n (D, d), orthonormal columns spanning T_{c_n} 𝓜."""
        return self.Q @ self.tangent_model(self.centres0[n])

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return self.sample_model(rng, n) @ self.Q.T

    @property
    def M_inf(self) -> float:
        """max ||x||_∞ on 𝓜 is at most max_i ||Q_i,:||_2 · max ||y||_2 (Cauchy-Schwarz)."""
        ynorm = math.sqrt(2.0) if self.name == "torus" else 1.0
        return float(np.linalg.norm(self.Q, axis=1).max()) * ynorm

    @property
    def diameter(self) -> float:
        return 2 * math.sqrt(2.0) if self.name == "torus" else 2.0

    def chart(self, n: int, X: np.ndarray) -> np.ndarray:
        """φ_n(x) = V_n^T (x - c_n)/(2r) + 1/2 (the exact projection of E.2, Step 2.2, with s_n = 1/(2r), u_n = r 1)."""
        return (X - self.centres[n]) @ self.tangent(n) / (2 * self.r) + 0.5

    def chart_inverse(self, n: int, z: np.ndarray) -> np.ndarray | None:
        """x in U_n with φ_n(x) = z, or None when z is not in φ_n(U_n)."""
        w = (np.asarray(z, dtype=float) - 0.5) * 2 * self.r
        y = self.lift_model(self.centres0[n], w)
        if y is None:
            return None
        x = self.Q @ y
        return x if np.linalg.norm(x - self.centres[n]) < self.r else None

    def in_chart(self, X: np.ndarray) -> np.ndarray:
        """(n_points, C_M) booleans: x in U_n (||x - c_n|| < r)."""
        return self.dist2(X) < self.r**2

    def dist2(self, X: np.ndarray) -> np.ndarray:
        C = self.centres
        return ((X[:, None, :] - C[None]) ** 2).sum(-1)

    def bumps(self, X: np.ndarray) -> np.ndarray:
        t = self.dist2(X) / self.r**2
        with np.errstate(divide="ignore", over="ignore"):
            return np.where(t < 1, np.exp(-1.0 / np.maximum(1 - t, 1e-300)), 0.0)

    def partition(self, X: np.ndarray) -> np.ndarray:
        """ρ_n(x), (n_points, C_M); rows sum to 1 on 𝓜."""
        b = self.bumps(X)
        s = b.sum(1, keepdims=True)
        if np.any(s <= 0):
            raise ManifoldError("a point of the sample lies in no chart: the atlas does not cover 𝓜")
        return b / s

    def coverage(self, rng: np.random.Generator, n: int = 20000) -> float:
        """max over sampled points of min_n ||x - c_n|| / r (< 1 means the sample is covered)."""
        X = self.sample(rng, n)
        return float(np.sqrt(self.dist2(X).min(1)).max() / self.r)


def _fibonacci(n: int) -> np.ndarray:
    i = np.arange(n) + 0.5
    phi = np.arccos(1 - 2 * i / n)
    theta = np.pi * (1 + 5**0.5) * i
    return np.stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)], 1)


def make_manifold(name: str, D: int, seed: int = 0) -> Manifold:
    """The manifold with its atlas: radius r = τ/4 and the fewest centres (from a fixed family) whose
    r-balls cover a dense sample with margin (min distance to a centre <= 0.9 r everywhere sampled)."""
    if name not in MANIFOLDS:
        raise ManifoldError(f"unknown manifold {name!r}; expected one of {', '.join(MANIFOLDS)}")
    k, d = {"circle": (2, 1), "sphere": (3, 2), "torus": (4, 2)}[name]
    Q = random_isometry(D, k, seed)
    tau = 1.0
    r = tau / 4
    rng = np.random.default_rng(seed + 1)
    if name == "circle":
        # angular gap δ covers with margin iff 2 sin(δ/4) <= 0.9 r
        K = math.ceil(2 * math.pi / (4 * math.asin(0.9 * r / 2)))
        a = 2 * np.pi * np.arange(K) / K
        centres = np.stack([np.cos(a), np.sin(a)], 1)
        return Manifold(name, d, k, D, Q, tau, centres, r)
    if name == "torus":
        # worst point at (δ/2, δ/2): 4 (2 sin^2(δ/4)) <= (0.9 r)^2
        K = math.ceil(2 * math.pi / (4 * math.asin(0.9 * r / (2 * math.sqrt(2)))))
        a = 2 * np.pi * np.arange(K) / K
        A, B = np.meshgrid(a, a, indexing="ij")
        centres = np.stack([np.cos(A), np.sin(A), np.cos(B), np.sin(B)], -1).reshape(-1, 4)
        return Manifold(name, d, k, D, Q, tau, centres, r)
    K = int(4 / (0.9 * r) ** 2)
    while True:
        m = Manifold(name, d, k, D, Q, tau, _fibonacci(K), r)
        if m.coverage(rng, 20000) <= 0.9:
            return m
        K += max(1, K // 20)
