"""The validation set: point clouds with known intrinsic dimension d, embedded in R^D.

Every manifold is placed in R^D by a random isometry (orthonormal columns of a QR factor), so
distances, and hence every kNN estimator, see exactly the intrinsic geometry; ``noise`` adds
isotropic Gaussian noise of that standard deviation per ambient coordinate.

- ``linear``: a standard Gaussian in a random d-dimensional linear subspace.
- ``sphere``: the uniform distribution on the unit sphere S^d in R^(d+1).
- ``swissroll``: scikit-learn's swiss roll (d = 2) in R^3.
- ``torus``: the flat torus T^d, angles uniform, as (cos t_i, sin t_i) in R^(2d).
- ``cube-image``: [0, 1]^d under the smooth random map u -> sin(W u + b) / sqrt(m) into R^m,
  m = max(2d + 1, 16) (generically an embedding; Whitney), W ~ N(0, 4).
"""

from __future__ import annotations

import numpy as np

# name -> (default d, ambient dimension of the chart before the isometry, or None if fixed by d)
MANIFOLDS = {
    "linear": (8, lambda d: d),
    "sphere": (16, lambda d: d + 1),
    "swissroll": (2, lambda d: 3),
    "torus": (4, lambda d: 2 * d),
    "cube-image": (6, lambda d: max(2 * d + 1, 16)),
}


def _chart(name: str, n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    if name == "linear":
        return rng.standard_normal((n, d))
    if name == "sphere":
        z = rng.standard_normal((n, d + 1))
        return z / np.linalg.norm(z, axis=1, keepdims=True)
    if name == "swissroll":
        from sklearn.datasets import make_swiss_roll

        return make_swiss_roll(n, noise=0.0, random_state=int(rng.integers(2**31)))[0]
    if name == "torus":
        t = rng.uniform(0.0, 2 * np.pi, size=(n, d))
        return np.concatenate([np.cos(t), np.sin(t)], axis=1)
    if name == "cube-image":
        m = MANIFOLDS[name][1](d)
        W = 2.0 * rng.standard_normal((d, m))
        b = rng.uniform(0.0, 2 * np.pi, size=m)
        return np.sin(rng.uniform(size=(n, d)) @ W + b) / np.sqrt(m)
    raise ValueError(f"unknown manifold {name!r}; choose from {', '.join(MANIFOLDS)}")


def make_manifold(name: str, n: int, d: int | None = None, D: int = 768, noise: float = 0.0,
                  seed: int = 0, dtype=np.float64) -> np.ndarray:
    """n points on manifold ``name`` of intrinsic dimension d (its default if None) in R^D."""
    if name not in MANIFOLDS:
        raise ValueError(f"unknown manifold {name!r}; choose from {', '.join(MANIFOLDS)}")
    d = MANIFOLDS[name][0] if d is None else int(d)
    if name == "swissroll" and d != 2:
        raise ValueError("the swiss roll has d = 2")
    if d < 1 or n < 1:
        raise ValueError(f"need d >= 1 and n >= 1, got d={d}, n={n}")
    rng = np.random.default_rng(seed)
    Y = _chart(name, n, d, rng)
    if D < Y.shape[1]:
        raise ValueError(f"{name} with d={d} needs D >= {Y.shape[1]}, got D={D}")
    Q, _ = np.linalg.qr(rng.standard_normal((D, Y.shape[1])))  # (D, m), orthonormal columns
    X = Y @ Q.T
    if noise:
        X += noise * rng.standard_normal(X.shape)
    return X.astype(dtype)
