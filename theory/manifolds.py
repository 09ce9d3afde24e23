"""The one manifolds module: compact manifolds of known dimension, for theory and empirics
(Section 2.2 Assumption 1; Appendix E.2 for the atlas).

Every manifold is a standard model 𝓜_0 ⊂ R^k (a *shape*, registered by name in `SHAPES`) carried
into R^D by a random isometry Q (D x k, orthonormal columns, `random_isometry`): x = Q y. Isometries
preserve distances and the reach, so intrinsic geometry (and every kNN estimator) sees the model.

Shapes (d the intrinsic dimension, k the model dimension):
  circle (d = 1, k = 2), sphere S^d (k = d + 1), torus T^d flat, y = (cos θ_1, sin θ_1, ...) (k = 2d),
  cube [0,1]^d under z = (u, sin(ω A u + c)/ω) (k = d + min(d, D - d)), linear (a Gaussian in a
  d-dimensional subspace, k = d), swissroll (scikit-learn's, d = 2, k = 3), cube-image (u ↦
  sin(W u + b)/√m into R^m, m = max(2d + 1, 16)).

The protocol of a `Manifold` (points are rows):
  sample(n, rng, density)          -> X (n, D)
  sample_with_coords(n, rng, ...)  -> (X, u): u the intrinsic coordinates (n, d)
  coords(X)                        -> u, the global chart where the shape has one
  project(X)                       -> the nearest points of 𝓜 (where the shape has a closed form)
  tangent_at(X)                    -> (n, D, d) orthonormal tangent bases
  residual(X)                      -> (n,) distance from the equations of 𝓜 (0 on 𝓜, up to rounding)
Densities: `uniform` in the intrinsic coordinates, or `tilted`, which multiplies it by 1 + t/2 with
t ∈ [-1, 1] the shape's tilt coordinate (y_0 on circle/sphere/torus, 2u_0 - 1 otherwise).

Theorem 2's atlas (`make_manifold`, circle/sphere/torus with d <= 2): τ = 1 for the three (the medial
axis of the circle and the sphere is the centre; for the flat torus the nearest medial points of
(cos a, sin a, cos b, sin b) are (0, 0, cos b, sin b) and (cos a, sin a, 0, 0), at distance 1).
Centres c_n on 𝓜, radius r = τ/4, U_n = 𝓜 ∩ B(c_n, r), tangent bases V_n (D x d, orthonormal),
chart φ_n(x) = V_n^T (x - c_n)/(2r) + 1/2 ∈ [0,1]^d on U_n and its inverse on φ_n(U_n). Partition of
unity ρ_n = b_n / Σ_m b_m with the bump b_n(x) = exp(-1 / (1 - ||x - c_n||^2 / r^2)) inside B(c_n, r):
ρ_n is supported in U_n and Σ_n ρ_n = 1 on 𝓜 because the balls cover 𝓜 (checked by `coverage`).
C_M (the number of charts) and μ (`multiplicity`, the most charts containing one point) are what
Theorem 2's construction and its resource spec use.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

DENSITIES = ("uniform", "tilted")
ATLAS_MANIFOLDS = ("circle", "sphere", "torus")  # the ones Theorem 2 builds an atlas for
MAX_SAMPLE_BYTES = 2**33  # resource guard: one sample (points, coordinates) in float64 at most 8.6 GB
MAX_ATLAS_D = 4096  # resource guard: Theorem 2's atlas holds (points, charts, D) float64 arrays
MULTIPLICITY_SAMPLE = 4000  # points on which μ is counted (the builder and the spec use the same count)


class ManifoldError(ValueError):
    pass


def random_isometry(D: int, k: int, rng: int | np.random.Generator) -> np.ndarray:
    """Q (D x k) with orthonormal columns: the QR factor of a Gaussian matrix, column signs fixed so
    that diag(R) > 0 (then Q is Haar-distributed). `rng` is a seed or a Generator."""
    if D < k:
        raise ManifoldError(f"the ambient dimension D = {D} must be at least {k} for this manifold")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    Q, R = np.linalg.qr(gen.standard_normal((D, k)))
    return Q * np.sign(np.diag(R))


# --------------------------------------------------------------------------------------------
# shapes: the model geometry in R^k


class Shape:
    """Model-space geometry of one family; y rows in R^k, u rows in R^d."""

    name = ""
    default_d = 1
    fixed_d: int | None = None

    def k(self, d: int, D: int) -> int:
        raise NotImplementedError

    def params(self, d: int, k: int, rng: np.random.Generator) -> dict:
        return {}

    def sample(self, n: int, d: int, rng: np.random.Generator, p: dict) -> tuple[np.ndarray, np.ndarray]:
        """(y, u) for n points uniform in the intrinsic coordinates."""
        raise NotImplementedError

    def tilt(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        return 2 * u[:, 0] - 1

    def coords(self, y: np.ndarray, d: int, p: dict) -> np.ndarray:
        raise ManifoldError(f"the {self.name} has no global chart")

    def project(self, y: np.ndarray, d: int, p: dict) -> np.ndarray:
        raise ManifoldError(f"no closed-form projection onto the {self.name}")

    def tangent(self, y: np.ndarray, d: int, p: dict) -> np.ndarray:
        """(k, d) orthonormal basis of T_y 𝓜_0."""
        raise ManifoldError(f"no closed-form tangent space for the {self.name}")

    def residual(self, y: np.ndarray, d: int, p: dict) -> np.ndarray:
        return np.zeros(len(y))

    def norm_bound(self, d: int) -> float:
        """max ||y||_2 on the model (bounds ||x||_∞ through Q)."""
        return math.inf


class Sphere(Shape):
    name, default_d = "sphere", 2

    def k(self, d, D):
        return d + 1

    def sample(self, n, d, rng, p):
        g = rng.standard_normal((n, d + 1))
        y = g / np.linalg.norm(g, axis=1, keepdims=True)
        return y, y[:, :d]  # the sphere has no global chart; u = the first d coordinates

    def tilt(self, y, u):
        return y[:, 0]

    def project(self, y, d, p):
        return y / np.linalg.norm(y, axis=1, keepdims=True)

    def tangent(self, y, d, p):
        if d == 2:  # the atlas's basis on S^2 (Theorem 2 builds its charts from it)
            a = np.array([1.0, 0, 0]) if abs(y[0]) < 0.9 else np.array([0, 1.0, 0])
            e1 = a - (a @ y) * y
            e1 /= np.linalg.norm(e1)
            return np.stack([e1, np.cross(y, e1)], 1)
        Qf, _ = np.linalg.qr(np.column_stack([y, np.eye(d + 1)]))
        return Qf[:, 1 : d + 1]

    def residual(self, y, d, p):
        return np.abs(np.linalg.norm(y, axis=1) - 1)

    def norm_bound(self, d):
        return 1.0

    def lift(self, y_c, T, w):
        s = float(w @ w)
        return None if s >= 1 else y_c * math.sqrt(1 - s) + T @ w


class Circle(Sphere):
    name, default_d, fixed_d = "circle", 1, 1

    def sample(self, n, d, rng, p):
        a = rng.uniform(0, 2 * np.pi, n)
        return np.stack([np.cos(a), np.sin(a)], 1), (a / (2 * np.pi))[:, None]

    def coords(self, y, d, p):
        return np.mod(np.arctan2(y[:, 1], y[:, 0]) / (2 * np.pi), 1.0)[:, None]

    def tangent(self, y, d, p):
        return np.array([[-y[1]], [y[0]]])


class Torus(Shape):
    name, default_d = "torus", 2

    def k(self, d, D):
        return 2 * d

    def sample(self, n, d, rng, p):
        theta = rng.uniform(0, 2 * np.pi, (d, n)).T  # (n, d); angle by angle, as the atlas's tests were drawn
        return np.stack([np.cos(theta), np.sin(theta)], axis=2).reshape(n, 2 * d), theta / (2 * np.pi)

    def tilt(self, y, u):
        return y[:, 0]

    def coords(self, y, d, p):
        pairs = y.reshape(len(y), d, 2)
        return np.mod(np.arctan2(pairs[..., 1], pairs[..., 0]) / (2 * np.pi), 1.0)

    def project(self, y, d, p):
        pairs = y.reshape(len(y), d, 2)
        return (pairs / np.linalg.norm(pairs, axis=2, keepdims=True)).reshape(len(y), 2 * d)

    def tangent(self, y, d, p):
        T = np.zeros((2 * d, d))
        for i in range(d):
            T[2 * i, i], T[2 * i + 1, i] = -y[2 * i + 1], y[2 * i]
        return T

    def residual(self, y, d, p):
        return np.abs((y.reshape(len(y), d, 2) ** 2).sum(axis=2) - 1).max(axis=1)

    def norm_bound(self, d):
        return math.sqrt(d)

    def lift(self, y_c, T, w):
        if np.any(np.abs(w) >= 1):
            return None
        ang = np.arctan2(y_c[1::2], y_c[0::2]) + np.arcsin(w)
        return np.stack([np.cos(ang), np.sin(ang)], 1).reshape(-1)


class Cube(Shape):
    """[0,1]^d under the smooth embedding z = (u, sin(ω A u + c)/ω), ω = 2, A ~ N(0,1), c ~ U(0, 2π)."""

    name, default_d = "cube", 2
    omega = 2.0

    def k(self, d, D):
        return d + min(d, max(D - d, 0))

    def params(self, d, k, rng):
        return {"A": rng.standard_normal((k - d, d)), "c": rng.uniform(0, 2 * np.pi, k - d)}

    def _z(self, u, p):
        return np.concatenate([u, np.sin(self.omega * u @ p["A"].T + p["c"]) / self.omega], axis=1)

    def sample(self, n, d, rng, p):
        u = rng.uniform(0, 1, (n, d))
        return self._z(u, p), u

    def coords(self, y, d, p):
        return np.clip(y[:, :d], 0.0, 1.0)

    def project(self, y, d, p):  # the graph's point above u (exact on 𝓜; first order near it)
        return self._z(self.coords(y, d, p), p)

    def tangent(self, y, d, p):
        u = y[:d]
        J = np.vstack([np.eye(d), np.cos(self.omega * p["A"] @ u + p["c"])[:, None] * p["A"]])  # dz/du
        return np.linalg.qr(J)[0]

    def residual(self, y, d, p):
        u = y[:, :d]
        return np.linalg.norm(y - self._z(u, p), axis=1) + np.clip(-u, 0, None).sum(1) + np.clip(u - 1, 0, None).sum(1)


class Linear(Shape):
    """A standard Gaussian in a random d-dimensional subspace (not compact: an ID check only)."""

    name, default_d = "linear", 8

    def k(self, d, D):
        return d

    def sample(self, n, d, rng, p):
        y = rng.standard_normal((n, d))
        return y, y

    def coords(self, y, d, p):
        return y

    def project(self, y, d, p):
        return y

    def tangent(self, y, d, p):
        return np.eye(d)


class SwissRoll(Shape):
    """scikit-learn's swiss roll: (t cos t, h, t sin t), t ∈ [1.5π, 4.5π], h ∈ [0, 21]."""

    name, default_d, fixed_d = "swissroll", 2, 2

    def k(self, d, D):
        return 3

    def sample(self, n, d, rng, p):
        from sklearn.datasets import make_swiss_roll

        y, t = make_swiss_roll(n, noise=0.0, random_state=int(rng.integers(2**31)))
        return y, np.stack([t, y[:, 1]], 1)

    def coords(self, y, d, p):
        return np.stack([np.hypot(y[:, 0], y[:, 2]), y[:, 1]], 1)

    def residual(self, y, d, p):
        t = np.hypot(y[:, 0], y[:, 2])  # ρ = t on the roll
        return np.hypot(y[:, 0] - t * np.cos(t), y[:, 2] - t * np.sin(t))


class CubeImage(Shape):
    """[0,1]^d under u ↦ sin(W u + b)/√m into R^m, m = max(2d + 1, 16), W ~ N(0, 4) (generically an
    embedding, by Whitney). Its residual is the component outside span(Q) only (no closed-form equations)."""

    name, default_d = "cube-image", 6

    def k(self, d, D):
        return max(2 * d + 1, 16)

    def params(self, d, k, rng):
        return {"W": 2.0 * rng.standard_normal((d, k)), "b": rng.uniform(0.0, 2 * np.pi, size=k)}

    def sample(self, n, d, rng, p):
        u = rng.uniform(size=(n, d))
        return np.sin(u @ p["W"] + p["b"]) / np.sqrt(p["W"].shape[1]), u


SHAPES: dict[str, Shape] = {
    s.name: s for s in (Circle(), Sphere(), Torus(), Cube(), Linear(), SwissRoll(), CubeImage())
}
MANIFOLDS = tuple(SHAPES)


# --------------------------------------------------------------------------------------------
# a manifold in R^D


@dataclass
class Manifold:
    """x = Q y for y on the model of `name`; an atlas (centres0, r, τ) where Theorem 2 uses one."""

    name: str
    d: int  # intrinsic dimension
    k: int  # dimension of the model space
    D: int
    Q: np.ndarray  # (D, k)
    tau: float = math.nan
    centres0: np.ndarray | None = None  # (C_M, k) atlas centres in the model space
    r: float = math.nan
    params: dict = field(default_factory=dict)

    @property
    def shape(self) -> Shape:
        return SHAPES[self.name]

    # ---- the protocol (rows are points)
    def sample_with_coords(
        self, n: int, rng: np.random.Generator, density: str = "uniform"
    ) -> tuple[np.ndarray, np.ndarray]:
        """n points of 𝓜 (n, D) and their intrinsic coordinates (n, d); `tilted` by rejection."""
        if density not in DENSITIES:
            raise ManifoldError(f"unknown density {density!r}; expected one of {', '.join(DENSITIES)}")
        need = 8 * n * (self.D + self.k + self.d)
        if n < 0 or need > MAX_SAMPLE_BYTES:
            raise ManifoldError(
                f"{n} points in R^{self.D} would need {need / 1e9:.3g} GB (at most "
                f"{MAX_SAMPLE_BYTES / 1e9:.3g} GB here); lower --n"
            )
        if density == "uniform":
            y, u = self.shape.sample(n, self.d, rng, self.params)
        else:
            ys, us, have = [], [], 0
            while have < n:
                y, u = self.shape.sample(2 * (n - have) + 16, self.d, rng, self.params)
                keep = rng.uniform(0, 1.5, len(y)) < 1 + self.shape.tilt(y, u) / 2
                ys.append(y[keep]), us.append(u[keep])
                have += int(keep.sum())
            y, u = np.concatenate(ys)[:n], np.concatenate(us)[:n]
        return y @ self.Q.T, u

    def sample(self, n, rng=None, density: str = "uniform") -> np.ndarray:
        """n points of 𝓜 in R^D, (n, D). (The older order sample(rng, n) is still accepted: callers
        in proofs_check use it.)"""
        if isinstance(n, np.random.Generator):
            n, rng = rng, n
        return self.sample_with_coords(int(n), rng, density)[0]

    def coords(self, X: np.ndarray) -> np.ndarray:
        """Intrinsic coordinates of points of 𝓜 (the global chart: torus θ/2π, circle angle/2π, cube u)."""
        return self.shape.coords(X @ self.Q, self.d, self.params)

    def project(self, X: np.ndarray) -> np.ndarray:
        """The nearest point of 𝓜 to each row of X (closed form on circle, sphere, torus, linear)."""
        return self.shape.project(X @ self.Q, self.d, self.params) @ self.Q.T

    def tangent_at(self, X: np.ndarray) -> np.ndarray:
        """(n, D, d): orthonormal bases of T_x 𝓜 at points of 𝓜."""
        return np.stack([self.Q @ self.shape.tangent(y, self.d, self.params) for y in X @ self.Q])

    def residual(self, X: np.ndarray) -> np.ndarray:
        """How far each row of X is from satisfying the equations of 𝓜 (0 on 𝓜, up to rounding)."""
        y = X @ self.Q
        return np.linalg.norm(X - y @ self.Q.T, axis=1) + self.shape.residual(y, self.d, self.params)

    # ---- model-space helpers (Theorem 2)
    def sample_model(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return self.shape.sample(n, self.d, rng, self.params)[0]

    def tangent_model(self, y: np.ndarray) -> np.ndarray:
        return self.shape.tangent(y, self.d, self.params)

    @property
    def M_inf(self) -> float:
        """max ||x||_∞ on 𝓜 is at most max_i ||Q_i,:||_2 · max ||y||_2 (Cauchy-Schwarz)."""
        return float(np.linalg.norm(self.Q, axis=1).max()) * self.shape.norm_bound(self.d)

    @property
    def diameter(self) -> float:
        return 2 * self.shape.norm_bound(self.d)

    # ---- the atlas (Appendix E.2, Step 1)
    def _atlas(self) -> np.ndarray:
        if self.centres0 is None:
            raise ManifoldError(f"this {self.name} has no atlas; build it with make_manifold")
        return self.centres0

    @property
    def C_M(self) -> int:
        return len(self._atlas())

    @property
    def centres(self) -> np.ndarray:
        return self._atlas() @ self.Q.T  # (C_M, D)

    def tangent(self, n: int) -> np.ndarray:
        """V_n (D, d), orthonormal columns spanning T_{c_n} 𝓜."""
        return self.Q @ self.tangent_model(self._atlas()[n])

    def chart(self, n: int, X: np.ndarray) -> np.ndarray:
        """φ_n(x) = V_n^T (x - c_n)/(2r) + 1/2 (the exact projection of E.2, Step 2.2, with s_n = 1/(2r), u_n = r 1)."""
        return (X - self.centres[n]) @ self.tangent(n) / (2 * self.r) + 0.5

    def chart_inverse(self, n: int, z: np.ndarray) -> np.ndarray | None:
        """x in U_n with φ_n(x) = z, or None when z is not in φ_n(U_n)."""
        w = (np.asarray(z, dtype=float) - 0.5) * 2 * self.r
        y_c = self._atlas()[n]
        y = self.shape.lift(y_c, self.tangent_model(y_c), w)
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
        X = self.sample(n, rng)
        return float(np.sqrt(self.dist2(X).min(1)).max() / self.r)

    def multiplicity(self, X: np.ndarray) -> int:
        """μ on the sample X: the most charts U_n containing one point (Theorem 2's error sums μ terms)."""
        return int(self.in_chart(X).sum(1).max())


def embed(name: str, d: int | None = None, D: int = 16, rng: int | np.random.Generator = 0) -> Manifold:
    """The shape `name` of dimension d (its default if None) in R^D, no atlas: Q first, then the
    shape's random parameters, from the same generator (empirics: regression and ID validation sets)."""
    if name not in SHAPES:
        raise ManifoldError(f"unknown manifold {name!r}; expected one of {', '.join(MANIFOLDS)}")
    s = SHAPES[name]
    d = s.default_d if d is None else int(d)
    if s.fixed_d is not None and d != s.fixed_d:
        raise ManifoldError(f"the {name} has d = {s.fixed_d}, got d = {d}")
    if d < 1:
        raise ManifoldError(f"intrinsic dimension d must be >= 1, got {d}")
    k = s.k(d, D)
    if k > D:
        raise ManifoldError(f"the ambient dimension D = {D} must be at least {k} for a {name} of dimension {d}")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    Q = random_isometry(D, k, gen)
    return Manifold(name, d, k, D, Q, params=s.params(d, k, gen))


def _fibonacci(n: int) -> np.ndarray:
    i = np.arange(n) + 0.5
    phi = np.arccos(1 - 2 * i / n)
    theta = np.pi * (1 + 5**0.5) * i
    return np.stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)], 1)


def make_manifold(name: str, D: int, seed: int = 0) -> Manifold:
    """Theorem 2's manifold with its atlas: radius r = τ/4 and the fewest centres (from a fixed family)
    whose r-balls cover a dense sample with margin (min distance to a centre <= 0.9 r everywhere sampled)."""
    if name not in ATLAS_MANIFOLDS:
        raise ManifoldError(f"unknown manifold {name!r}; expected one of {', '.join(ATLAS_MANIFOLDS)}")
    if not 1 <= D <= MAX_ATLAS_D:
        raise ManifoldError(
            f"D = {D}: the atlas is measured on {MULTIPLICITY_SAMPLE} points per chart in R^D "
            f"(~{MULTIPLICITY_SAMPLE * 14 * D * 8 / 1e9:.3g} GB for the circle); D must lie in 1..{MAX_ATLAS_D}"
        )
    d = {"circle": 1, "sphere": 2, "torus": 2}[name]
    k = SHAPES[name].k(d, D)
    Q = random_isometry(D, k, seed)
    tau = 1.0
    r = tau / 4
    rng = np.random.default_rng(seed + 1)
    if name == "circle":
        # angular gap δ covers with margin iff 2 sin(δ/4) <= 0.9 r
        K = math.ceil(2 * math.pi / (4 * math.asin(0.9 * r / 2)))
        a = 2 * np.pi * np.arange(K) / K
        return Manifold(name, d, k, D, Q, tau, np.stack([np.cos(a), np.sin(a)], 1), r)
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
