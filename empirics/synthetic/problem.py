"""Synthetic manifold regression where d and β are known (Section 2.2 assumptions, eq. 3-4).

The paper checks α_D = 2β/(2β+d) and α_N = 2β/d only on language, where neither d nor β is known.
Here both are chosen:

- manifolds M ⊂ R^D of known dimension d (Assumption 1) from the one manifolds module,
  tmcheck.theory.manifolds (`embed`: a shape carried into R^D by a random isometry Q; the flat torus,
  the sphere, the cube under a smooth embedding, ...), sampled uniformly in the intrinsic
  coordinates or with its `tilted` density;
- Hölder fields f with known regularity (Assumption 2), normalised to mean 0 and variance 1:
  - `holder`: the classical lower-bound field on the intrinsic coordinates u ∈ [0,1)^d (torus:
    u = θ/2π; circle: angle/2π; cube: u itself), f(u) = Σ_k 2^{-kβ} s_k(c) ψ(2^k u - c), c the level-k cell holding u,
    s_k(c) = ±1 random, ψ the product tent vanishing on the cell's boundary. It is β-Hölder and
    no smoother at every scale down to 2^-K, and genuinely d-dimensional, so it is the function
    for which the rate n^{-2β/(2β+d)} cannot be beaten (sums of ridge functions can);
  - `kinks`: Σ_j a_j |<w_j, x> - b_j|^β with each kink hyperplane through a point of M;
  - `relu`: a random one-hidden-layer ReLU teacher (Lipschitz, β = 1);
- labels y = f(x) + σ ε, ε ~ N(0, 1). The test error is measured against f, i.e. the excess risk
  E||T̂ - f||²_{L²(Q)} that eq. (2) bounds.

Everything is a pure function of the seeds. Validation of the parameters raises ValueError with a
one-line message (d > D, β outside (0, 1], n too small for the validation split, ...).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from tmcheck.theory.manifolds import DENSITIES, MANIFOLDS, SHAPES, Manifold, embed

TARGETS = ("holder", "kinks", "relu")
CHARTED = ("torus", "circle", "cube")  # shapes whose global chart maps onto [0,1)^d (the holder field's domain)
HOLDER_CELLS = 2**24  # the holder field stops at the level K where 2^{Kd} would exceed this
HOLDER_MAX_LEVEL = 14
KINKS = 8
TEACHER_WIDTH = 32
NORMALISATION_POINTS = 20_000


@dataclass(frozen=True)
class Problem:
    """A regression problem with known d and β; the frame and the field are drawn from `seed`."""

    manifold: str = "torus"
    d: int = 2
    D: int = 16
    target: str = "holder"
    beta: float = 1.0
    density: str = "uniform"
    noise: float = 0.5
    seed: int = 0

    def __post_init__(self) -> None:
        check_problem(self)

    def as_dict(self) -> dict:
        return asdict(self)


def check_problem(p: Problem) -> None:
    if p.manifold not in MANIFOLDS:
        raise ValueError(f"unknown manifold {p.manifold!r}; expected one of {', '.join(MANIFOLDS)}")
    if p.target not in TARGETS:
        raise ValueError(f"unknown target {p.target!r}; expected one of {', '.join(TARGETS)}")
    if p.density not in DENSITIES:
        raise ValueError(f"unknown density {p.density!r}; expected one of {', '.join(DENSITIES)}")
    if p.d < 1:
        raise ValueError(f"intrinsic dimension d must be >= 1, got {p.d}")
    if p.d > p.D:
        raise ValueError(f"intrinsic dimension d={p.d} exceeds the ambient dimension D={p.D}")
    if not (0.0 < p.beta <= 1.0):
        raise ValueError(f"Hölder exponent beta must lie in (0, 1], got {p.beta}")
    if p.noise < 0:
        raise ValueError(f"noise sigma must be >= 0, got {p.noise}")
    shape = SHAPES[p.manifold]
    if shape.fixed_d is not None and p.d != shape.fixed_d:
        raise ValueError(f"the {p.manifold} has d = {shape.fixed_d}, got d={p.d}")
    k = shape.k(p.d, p.D)
    if k > p.D:
        raise ValueError(f"a {p.manifold} of dimension d={p.d} needs D >= {k}, got D={p.D}")
    if p.target == "holder" and p.manifold not in CHARTED:
        raise ValueError(
            f"the holder field needs a global chart onto [0,1)^d ({', '.join(CHARTED)}); "
            f"use target kinks or relu on the {p.manifold}"
        )
    if p.target == "relu" and p.beta != 1.0:
        raise ValueError(f"the ReLU teacher is Lipschitz (beta = 1); got beta={p.beta}")


def manifold_of(p: Problem) -> Manifold:
    """The problem's manifold in R^D: frame and shape parameters drawn from (seed, 1)."""
    return embed(p.manifold, p.d, p.D, np.random.default_rng([p.seed, 1]))


# --------------------------------------------------------------------------------------------
# Hölder fields


def _directions(rng: np.random.Generator, Q: np.ndarray, count: int) -> np.ndarray:
    """Unit vectors in span(Q), so every direction varies along M: (count, D)."""
    g = rng.standard_normal((count, Q.shape[1]))
    return (g / np.linalg.norm(g, axis=1, keepdims=True)) @ Q.T


def holder_levels(d: int) -> int:
    """K: the finest level of the holder field, capped so it has at most HOLDER_CELLS cells."""
    return min(HOLDER_MAX_LEVEL, int(math.log2(HOLDER_CELLS)) // d)


def _cell_signs(cells: np.ndarray, level: int, salt: int) -> np.ndarray:
    """±1 for each integer cell index (n, d), a hash (splitmix64) of the level, the cell and the salt."""
    with np.errstate(over="ignore"):
        h = np.full(len(cells), np.uint64(salt) ^ np.uint64(level * 0x9E3779B97F4A7C15 % 2**64))
        for j in range(cells.shape[1]):
            h = (h ^ cells[:, j].astype(np.uint64)) * np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(31)
            h = h * np.uint64(0x94D049BB133111EB)
            h ^= h >> np.uint64(29)
    return np.where(h & np.uint64(1), 1.0, -1.0)


def holder_field(u: np.ndarray, beta: float, levels: int, salt: int) -> np.ndarray:
    """Σ_{k=0}^{K} 2^{-kβ} s_k(c) Π_i tent(2^k u_i - c_i) for u ∈ [0,1)^d: (n,).

    Hölder-β: for |u - v| = h with 2^{-j-1} < h <= 2^{-j}, levels k <= j change by at most
    2^{-kβ} 2^k 2 d h (the tent is 2-Lipschitz per coordinate) and levels k > j by at most 2 2^{-kβ};
    both sums are O(h^β) for β < 1 (O(h log 1/h) at β = 1, up to the finest level).
    """
    out = np.zeros(len(u))
    for k in range(levels + 1):
        scaled = (2.0**k) * u
        cells = np.floor(scaled)
        frac = scaled - cells
        tent = np.prod(1 - np.abs(2 * frac - 1), axis=1)
        out += 2.0 ** (-k * beta) * _cell_signs(cells.astype(np.int64), k, salt) * tent
    return out


class HolderField:
    """f: M -> R, β-Hölder (Assumption 2) with a known exponent, normalised to mean 0, variance 1 under
    the problem's density: the `holder`, `kinks` or `relu` target of the problem."""

    def __init__(self, problem: Problem, manifold: Manifold):
        p = problem
        self.problem = p
        rng = np.random.default_rng([p.seed, 2])
        self.manifold = manifold
        if p.target == "holder":
            self.levels = holder_levels(p.d)
            self.salt = int(rng.integers(1, 2**62))
        elif p.target == "kinks":
            self.W = _directions(rng, manifold.Q, KINKS)  # (J, D)
            anchors = manifold.sample(KINKS, rng, p.density)
            self.b = np.einsum("jD,jD->j", self.W, anchors)  # each kink passes through M
            self.a = rng.choice([-1.0, 1.0], KINKS) * rng.uniform(0.5, 1.5, KINKS)
        else:
            self.W = rng.standard_normal((TEACHER_WIDTH, p.D)) / math.sqrt(p.D)
            anchors = manifold.sample(TEACHER_WIDTH, rng, p.density)
            self.b = -np.einsum("jD,jD->j", self.W, anchors)  # each ReLU switches on M
            self.a = rng.standard_normal(TEACHER_WIDTH) / math.sqrt(TEACHER_WIDTH)
        ref = self.raw(manifold.sample(NORMALISATION_POINTS, np.random.default_rng([p.seed, 3]), p.density))
        self.mean, self.scale = float(ref.mean()), float(ref.std())

    def raw(self, X: np.ndarray) -> np.ndarray:
        p = self.problem
        if p.target == "holder":
            return holder_field(self.manifold.coords(X), p.beta, self.levels, self.salt)
        if p.target == "kinks":
            return (self.a * np.abs(X @ self.W.T - self.b) ** p.beta).sum(axis=1)
        return np.maximum(X @ self.W.T + self.b, 0) @ self.a

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return (self.raw(X) - self.mean) / self.scale


# --------------------------------------------------------------------------------------------
# data sets


@dataclass
class Split:
    """A train/validation split of n samples and a held-out test set; f = noiseless targets."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    f_test: np.ndarray


def validation_size(n: int, val_fraction: float, min_val: int) -> int:
    """n_val = max(min_val, ceil(val_fraction n)); n must leave at least min_val training points."""
    n_val = max(min_val, math.ceil(val_fraction * n))
    if n < n_val + min_val:
        raise ValueError(
            f"n={n} is smaller than the validation split needs: {n_val} validation + at least {min_val} training points"
        )
    return n_val


class Experiment:
    """One problem with its manifold and Hölder field; data sets drawn by seed, nested in n."""

    def __init__(self, problem: Problem):
        self.problem = problem
        self.manifold = manifold_of(problem)
        self.field = HolderField(problem, self.manifold)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.manifold.sample(n, rng, self.problem.density)

    def pool(self, n_max: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """The first n of these n_max labelled points are the size-n data set (nested in n)."""
        rng = np.random.default_rng([self.problem.seed, 4, seed])
        X = self.sample(n_max, rng)
        y = self.field(X) + self.problem.noise * rng.standard_normal(n_max)
        return X, y

    def test_set(self, n_test: int) -> tuple[np.ndarray, np.ndarray]:
        """Held out, the same for every seed and n: (X_test, f(X_test))."""
        X = self.sample(n_test, np.random.default_rng([self.problem.seed, 5]))
        return X, self.field(X)

    def split(self, n: int, n_max: int, seed: int, n_test: int, val_fraction: float = 0.2, min_val: int = 8) -> Split:
        n_val = validation_size(n, val_fraction, min_val)
        X, y = self.pool(n_max, seed)
        X, y = X[:n], y[:n]
        Xt, ft = self.test_set(n_test)
        return Split(X[n_val:], y[n_val:], X[:n_val], y[:n_val], Xt, ft)


# --------------------------------------------------------------------------------------------
# classical baselines (scikit-learn), tuned on the validation split


def _mse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean((a - b) ** 2))


def knn_baseline(s: Split) -> dict:
    """k-nearest-neighbour regression, k chosen on the validation split from powers of 2."""
    from sklearn.neighbors import KNeighborsRegressor

    ks = [k for k in (2**i for i in range(12)) if k <= len(s.X_train)]
    best = min(ks, key=lambda k: _mse(KNeighborsRegressor(k).fit(s.X_train, s.y_train).predict(s.X_val), s.y_val))
    model = KNeighborsRegressor(best).fit(s.X_train, s.y_train)
    return {"test_mse": _mse(model.predict(s.X_test), s.f_test), "k": best}


KRR_TUNE_POINTS = 1000


def krr_baseline(s: Split, seed: int = 0) -> dict:
    """Kernel ridge regression (Gaussian kernel), bandwidth and ridge chosen on the validation split.

    Hyper-parameters are tuned on at most KRR_TUNE_POINTS training points, then refit on all of
    them; sklearn's ridge α multiplies an unnormalised loss, so a fixed α is a ridge λ = α/n that
    shrinks with n, as the rate-optimal choice does.
    """
    from sklearn.kernel_ridge import KernelRidge

    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(s.X_train))[:KRR_TUNE_POINTS]
    Xs, ys = s.X_train[idx], s.y_train[idx]
    sub = Xs[:500]
    med = float(np.median(((sub[:, None, :] - sub[None, :, :]) ** 2).sum(-1)[np.triu_indices(len(sub), 1)]))
    grid = [(g / med, a) for g in (2.0, 8.0, 32.0) for a in (1e-2, 1e-1, 1.0)]
    best = min(
        grid,
        key=lambda ga: _mse(KernelRidge(alpha=ga[1], kernel="rbf", gamma=ga[0]).fit(Xs, ys).predict(s.X_val), s.y_val),
    )
    model = KernelRidge(alpha=best[1], kernel="rbf", gamma=best[0]).fit(s.X_train, s.y_train)
    pred = np.concatenate([model.predict(s.X_test[i : i + 4096]) for i in range(0, len(s.X_test), 4096)])
    return {"test_mse": _mse(pred, s.f_test), "gamma": best[0], "alpha": best[1]}
