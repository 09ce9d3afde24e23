"""Input checks shared by every ID estimator: finite values, N > K, constant data, and the
duplicate policy (exact or near-duplicate rows, by a relative tolerance).

Duplicates silently break kNN estimators: a zero distance makes log(T_k / T_j) infinite, so the
Levina-Bickel MLE returns 0 and TwoNN divides by zero. A near-duplicate (distance below
``rtol`` times the RMS radius of the centred data) is no better. The default policy removes all but
the lowest-indexed row of each duplicate cluster and warns with the count.
"""

from __future__ import annotations

import warnings

import numpy as np

from tmcheck.empirics.knn import Neighbors, kneighbors

DUPLICATE_POLICIES = ("error", "keep", "remove")


def check_points(X, k: int) -> np.ndarray:
    """X as a finite (N, D) float array with N > k and not all rows equal; else ValueError."""
    X = np.asarray(X)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"expected points as a 2-D array (N, D), got shape {X.shape}")
    if not np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.complexfloating):
        raise ValueError(f"expected real numbers, got dtype {X.dtype}")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    bad = ~np.isfinite(X).all(axis=1)
    if bad.any():
        raise ValueError(f"{int(bad.sum())} of {len(X)} rows contain NaN or inf (first: row {int(np.argmax(bad))})")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if len(X) <= k:
        raise ValueError(f"need more points than neighbours: N={len(X)} <= K={k}")
    if np.all(X == X[0]):
        raise ValueError("constant data: every row is the same point, so the dimension is undefined")
    return X


def duplicate_tolerance(X: np.ndarray, rtol: float) -> float:
    """Absolute distance below which two rows count as duplicates: rtol x RMS radius of the centred data.

    The mean squared centred norm is mean|x|^2 - |mu|^2, which needs no centred copy of X; only when
    the spread is tiny against the offset (cancellation) is X centred explicitly.
    """
    X = np.asarray(X, dtype=np.float64)
    mu = X.mean(axis=0)
    offset = float(mu @ mu)
    spread = float(np.einsum("ij,ij->", X, X)) / len(X) - offset
    if spread <= 1e-6 * offset:
        Xc = X - mu
        spread = float(np.mean(np.einsum("ij,ij->i", Xc, Xc)))
    return float(rtol * np.sqrt(max(spread, 0.0)))


def _duplicate_rows(nb: Neighbors, tol: float) -> np.ndarray:
    """Rows to drop: every member of a duplicate cluster except its lowest index."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(nb.indices)
    close = nb.distances <= tol
    if not close.any():
        return np.empty(0, dtype=np.int64)
    rows = np.repeat(np.arange(n), nb.indices.shape[1])[close.ravel()]
    cols = nb.indices.ravel()[close.ravel()]
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    first = np.full(label.max() + 1, n)
    np.minimum.at(first, label, np.arange(n))
    return np.flatnonzero(first[label] != np.arange(n))


def neighbors_without_duplicates(
    X, k: int, *, duplicates: str = "remove", rtol: float = 1e-6, device: str = "auto"
) -> tuple[np.ndarray, Neighbors, int]:
    """Check X, apply the duplicate policy, and return (points used, their exact kNN, rows removed).

    With 'remove' the kNN is recomputed on the kept rows until no duplicates remain (clusters larger
    than K can need more than one pass).
    """
    if duplicates not in DUPLICATE_POLICIES:
        raise ValueError(f"duplicates must be one of {DUPLICATE_POLICIES}, got {duplicates!r}")
    X = check_points(X, k)
    tol = duplicate_tolerance(X, rtol)
    nb = kneighbors(X, k, device=device)
    removed = 0
    while True:
        drop = _duplicate_rows(nb, tol)
        if len(drop) == 0:
            break
        if duplicates == "error":
            raise ValueError(
                f"{len(drop)} duplicate or near-duplicate rows (distance <= {tol:.3g}); "
                "use duplicates='remove' or 'keep'"
            )
        if duplicates == "keep":
            warnings.warn(f"{len(drop)} duplicate or near-duplicate rows kept; estimates may be degenerate", stacklevel=3)
            break
        keep = np.ones(len(X), dtype=bool)
        keep[drop] = False
        X = X[keep]
        removed += len(drop)
        if len(X) <= k:
            raise ValueError(f"only {len(X)} distinct points after removing duplicates; need more than K={k}")
        nb = kneighbors(X, k, device=device)
    if removed:
        warnings.warn(f"removed {removed} duplicate or near-duplicate rows (distance <= {tol:.3g})", stacklevel=3)
    return X, nb, removed
