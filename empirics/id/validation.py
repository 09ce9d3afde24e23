"""The validation set: point clouds with known intrinsic dimension d, embedded in R^D.

The shapes are those of the one manifolds module, tmcheck.theory.manifolds; each is drawn in its own
model space R^k (k = `VALIDATION_SETS[name][1](d)`) and carried into R^D by a random isometry, so
distances, and hence every kNN estimator, see exactly the intrinsic geometry and do not depend on D;
``noise`` adds isotropic Gaussian noise of that standard deviation per ambient coordinate.

- ``linear``: a standard Gaussian in a random d-dimensional linear subspace.
- ``sphere``: the uniform distribution on the unit sphere S^d in R^(d+1).
- ``swissroll``: scikit-learn's swiss roll (d = 2) in R^3.
- ``torus``: the flat torus T^d, angles uniform, as (cos t_i, sin t_i) in R^(2d).
- ``cube-image``: [0, 1]^d under the smooth random map u -> sin(W u + b) / sqrt(m) into R^m,
  m = max(2d + 1, 16) (generically an embedding; Whitney), W ~ N(0, 4).
"""

from __future__ import annotations

import numpy as np

from tmcheck.theory.manifolds import SHAPES, embed, random_isometry

# The ID validation set's default d per shape (higher than the shared registry's, so the estimators
# are tested where they are hard); k(d) the dimension of the shape's model space.
DEFAULT_D = {"linear": 8, "sphere": 16, "swissroll": 2, "torus": 4, "cube-image": 6}
# name -> (default d, model-space dimension k as a function of d)
VALIDATION_SETS = {name: (d, lambda d_, s=SHAPES[name]: s.k(d_, 0)) for name, d in DEFAULT_D.items()}


def validation_points(
    name: str, n: int, d: int | None = None, D: int = 768, noise: float = 0.0, seed: int = 0, dtype=np.float64
) -> np.ndarray:
    """n points on manifold ``name`` of intrinsic dimension d (its default if None) in R^D."""
    if name not in VALIDATION_SETS:
        raise ValueError(f"unknown manifold {name!r}; choose from {', '.join(VALIDATION_SETS)}")
    d = VALIDATION_SETS[name][0] if d is None else int(d)
    if d < 1 or n < 1:
        raise ValueError(f"need d >= 1 and n >= 1, got d={d}, n={n}")
    k = VALIDATION_SETS[name][1](d)
    if D < k:
        raise ValueError(f"{name} with d={d} needs D >= {k}, got D={D}")
    rng = np.random.default_rng(seed)
    shape = embed(name, d, k, rng)  # in its model space: the points do not depend on D
    X = shape.sample(n, rng) @ random_isometry(D, k, np.random.default_rng([seed, 1])).T
    if noise:
        X += noise * rng.standard_normal(X.shape)
    return X.astype(dtype)
