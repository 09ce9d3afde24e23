"""Input checks shared by every ID estimator: a finite (N, D) real array with N > K and not all rows
equal, and the duplicate policy with a scale-invariant near-duplicate rule.

**Units never matter.** Every estimator here uses ratios of neighbour distances, so the points are
first multiplied by a power of two that brings their largest coordinate into [1/2, 1). That product
is exact in binary floating point (no rounding, no overflow, no underflow for normal numbers), so X,
1e200 X and 1e-200 X give the same kNN and the same ID up to the rounding of the scaling itself.

**Duplicates** silently break kNN estimators: a zero distance makes log(T_k / T_j) infinite, so the
MLE returns 0 and TwoNN divides by zero. Two rows i, j are *near-duplicates* when

    |x_i - x_j| <= rtol * max(|x_i|, |x_j|),    rtol = 16 eps(dtype of the points) by default,

i.e. when they differ by no more than a few units in the last place of their own coordinates: float32
points that agree to ~2e-6 of their norm, float64 points to ~4e-15. The rule is relative to the
points' own magnitude, so it is scale-invariant, and it is tied to the precision in which the points
(hence their distances) are known. The default policy keeps the lowest-indexed row of each
duplicate cluster, drops the rest, and warns with the count. Pairs that are distinct at this
precision but far closer than the data's own spacing (a first-neighbour distance below 1e-6 times
the median one) are not merged but counted in a warning that names ``rtol``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from tmcheck.empirics.id.knn import Neighbors, kneighbors

DUPLICATE_POLICIES = ("error", "keep", "remove")
ULPS = 16  # near-duplicate tolerance in units of the points' machine epsilon
SUSPECT = 1e-6  # a first-neighbour distance this small against the median one is worth a warning


def check_points(X, k: int) -> np.ndarray:
    """X as a finite (N, D) float32/float64 array with N > k and not all rows equal; else ValueError."""
    if not _plain_points(X):
        from sklearn.utils import check_array

        # scikit-learn's own messages for sparse, complex, 1-D and empty input (check_estimator expects them)
        X = check_array(X, accept_sparse=False, dtype=None, ensure_all_finite=False, ensure_min_samples=1)
    if X.dtype == object:
        X = X.astype(np.float64)
    if not np.issubdtype(X.dtype, np.number):
        raise ValueError(f"expected real numbers, got dtype {X.dtype}")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    # a finite sum means finite entries (NaN and inf propagate); only an overflowing sum or a bad entry
    # costs the per-row pass and its (N, D) temporary
    with np.errstate(over="ignore", invalid="ignore"):
        total = X.sum()
    if not np.isfinite(total):
        bad = ~np.isfinite(X).all(axis=1)
        if bad.any():
            raise ValueError(f"{int(bad.sum())} of {len(X)} rows contain NaN or inf (first: row {int(np.argmax(bad))})")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if len(X) <= k:
        raise ValueError(f"need more points than neighbours: N={len(X)} <= K={k} (n_samples = {len(X)})")
    if np.array_equal(X[-1], X[0]) and np.all(X == X[0]):  # the whole pass only when the last row is the first
        raise ValueError("constant data: every row is the same point, so the dimension is undefined")
    return X


def _plain_points(X) -> bool:
    """True for a non-empty 2-D float32/float64 numpy array, which scikit-learn's ``check_array`` (as
    ``check_points`` calls it) returns as it is: such input skips it, so a command that reads a .npy
    imports no scikit-learn (tests/empirics/id/test_lazy_imports.py checks the two agree)."""
    return type(X) is np.ndarray and X.ndim == 2 and X.dtype in (np.float32, np.float64) and X.size > 0


def default_rtol(dtype) -> float:
    """16 units of the points' machine epsilon (float32: 1.9e-6, float64: 3.6e-15)."""
    return ULPS * float(np.finfo(dtype).eps)


def unit_scale(X: np.ndarray) -> float:
    """The power of two s with max |s X| in [1/2, 1): multiplying by it is exact."""
    top = max(float(X.max()), -float(X.min()))  # max |x| without an (N, D) temporary
    return 2.0 ** -np.frexp(top)[1] if top > 0 else 1.0


@dataclass(frozen=True)
class Prepared:
    """Points after the duplicate policy, with their exact kNN (distances in the caller's units).

    kept: original indices of the rows used; representative: for every original row, the position
    (in ``kept``) of the row that stands for it; n_duplicates: rows dropped; rtol: the tolerance used.
    """

    X: np.ndarray
    neighbors: Neighbors
    kept: np.ndarray
    representative: np.ndarray
    n_duplicates: int
    rtol: float


def _near_duplicate_pairs(nb: Neighbors, norms: np.ndarray, rtol: float):
    """(rows, cols) of kNN pairs within rtol * max(|x_i|, |x_j|)."""
    bound = rtol * np.maximum(norms[:, None], norms[nb.indices])  # (N, k)
    close = nb.distances <= bound
    rows = np.repeat(np.arange(len(nb.indices)), nb.indices.shape[1])[close.ravel()]
    return rows, nb.indices.ravel()[close.ravel()]


def identical_rows(X: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """For every row, the lowest index of the rows equal to it (as numbers: distance 0).

    Equal rows have equal norms, so only rows whose norm another row shares are compared (none, in
    data without duplicates: a sort of the N norms); each is compared with the lowest-indexed row of
    its run of equal norms, and only when one differs are those rows sorted (np.unique). That the norms
    of equal rows come out equal is what makes this cheap, not what makes it right: an equal pair it
    missed would still be a near-duplicate pair of the kNN, merged by ``prepare``'s loop. Merging equal
    rows before the search answers token embeddings, where copies are common, with one search instead
    of two (all-MiniLM-L6-v2 tokens, N = 8192: 128 equal rows, and 845 rows that lost a neighbour to
    them were searched again)."""
    n = len(X)
    out = np.arange(n)
    order = np.argsort(norms, kind="stable")  # stable: within a run of equal norms, indices ascend
    s = norms[order]
    start = np.concatenate([[True], s[1:] != s[:-1]])  # where each run of equal norms begins
    head = order[start][np.cumsum(start) - 1]  # the lowest index of each position's run
    mem = order != head
    if not mem.any():
        return out
    if (X[order[mem]] == X[head[mem]]).all():  # the usual case: rows that share a norm are equal
        out[order[mem]] = head[mem]
        return out
    cand = np.unique(np.concatenate([order[mem], head[mem]]))  # ascending: rows sharing a norm
    _, group = np.unique(X[cand], axis=0, return_inverse=True)  # numeric order: -0.0 equals 0.0
    group = group.reshape(-1)
    low = np.full(group.max() + 1, n)
    np.minimum.at(low, group, cand)
    out[cand] = low[group]
    return out


def _clusters(n: int, rows, cols) -> np.ndarray:
    """Label of each row's duplicate cluster: the lowest index in it."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    first = np.full(label.max() + 1, n)
    np.minimum.at(first, label, np.arange(n))
    return first[label]


def _row_norms(X: np.ndarray, scale: float = 1.0, chunk_bytes: int = 16 * 2**20) -> np.ndarray:
    """float64 |x| of every row, measured on ``scale * x`` (a power of two: exact, and in range) and
    returned in X's units; by torch in chunks of rows (threads, no (N, D) temporary): numpy's norm
    took 0.58 s of a 3.9 s MLE fit at N = 32768, D = 768 (quiet profile). One float64 buffer of
    chunk_bytes serves every chunk (float32 rows are widened into it), so the pass adds that much to
    the peak memory and no more."""
    import torch

    x = torch.as_tensor(X)
    chunk = max(1, chunk_bytes // (8 * max(1, x.shape[1])))
    buf = torch.empty(min(chunk, len(x)), x.shape[1], dtype=torch.float64)
    out = torch.empty(len(x), dtype=torch.float64)
    for r0 in range(0, len(x), chunk):
        b = buf[: len(x[r0 : r0 + chunk])]
        b.copy_(x[r0 : r0 + chunk])
        out[r0 : r0 + chunk] = torch.linalg.vector_norm(b.mul_(scale), dim=1) / scale
    return out.numpy()


def _without(X, kept, new, nb: Neighbors, k: int, device: str) -> Neighbors:
    """The exact kNN of the rows X[new] (new: a subset of kept), from nb, the kNN of the rows X[kept].

    A row whose k neighbours all stay keeps them: they are its k nearest among any subset that holds
    them, in the same (distance, index) order, since positions keep the order of the original indices.
    Only the rows that lost a neighbour are searched again (kneighbors' `queries`), unless they are a
    large part of the rows: then one whole search is cheaper.
    """
    stays = np.isin(kept, new)  # per position of kept
    old = nb.indices[stays]  # neighbours (positions in kept) of the rows that stay
    lost = ~stays[old].all(axis=1)
    rows = X[new]
    if lost.sum() * 4 > len(new):
        return kneighbors(rows, k, device=device)
    indices = np.searchsorted(new, kept[old])  # positions in new
    distances = nb.distances[stays]
    again = np.flatnonzero(lost)
    sub = kneighbors(rows, k, device=device, queries=again)
    indices[again], distances[again] = sub.indices, sub.distances
    return Neighbors(distances, indices, nb.n_recomputed + sub.n_recomputed, nb.device)


def prepare(X, k: int, *, duplicates: str = "remove", rtol: float | None = None, device: str = "auto") -> Prepared:
    """Check X, apply the duplicate policy and return its exact kNN (in X's units, at any scale).

    With 'remove', rows equal to an earlier row are dropped before the search (``identical_rows``),
    and the kNN is recomputed on the kept rows until no near-duplicates remain (clusters larger than
    K can need more than one pass); a pass searches again only the rows that lost a neighbour to the
    removal, and the kNN's n_recomputed counts the rows recomputed over all passes.
    'error' raises ValueError with the count; 'keep'
    warns with the count and leaves them (estimates are then degenerate).
    """
    if duplicates not in DUPLICATE_POLICIES:
        raise ValueError(f"duplicates must be one of {DUPLICATE_POLICIES}, got {duplicates!r}")
    X = check_points(X, k)
    rtol = default_rtol(X.dtype) if rtol is None else float(rtol)
    if not (np.isfinite(rtol) and rtol >= 0):
        raise ValueError(f"rtol must be a finite number >= 0, got {rtol}")
    scale = unit_scale(X)  # the norms are taken on X scaled by it (exact), so they neither overflow nor underflow
    norms = _row_norms(X, scale)  # in X's units, as the kNN distances are
    n = len(X)
    label = np.arange(n)  # original row -> original index of its representative
    if duplicates == "remove":
        label = identical_rows(X, norms)  # equal rows are near-duplicates at any rtol: merged before the search
    kept = np.flatnonzero(label == np.arange(n))
    if len(kept) <= k:
        raise ValueError(f"only {len(kept)} distinct points after removing duplicates; need more than K={k}")
    nb = kneighbors(X if len(kept) == n else X[kept], k, device=device)  # no copy of the rows when none is equal
    while True:
        rows, cols = _near_duplicate_pairs(nb, norms[kept], rtol)
        if len(rows) == 0:
            break
        first = _clusters(len(kept), rows, cols)  # positions in kept
        n_dup = int(np.sum(first != np.arange(len(kept))))
        if duplicates == "error":
            raise ValueError(
                f"{n - len(kept) + n_dup} duplicate or near-duplicate rows "
                f"(distance <= {rtol:.3g} x norm); use duplicates='remove' or 'keep'"
            )
        if duplicates == "keep":
            warnings.warn(f"{n_dup} duplicate or near-duplicate rows kept; estimates may be degenerate", stacklevel=3)
            break
        rep = kept[first]
        label = rep[np.searchsorted(kept, label)]  # follow the chain: a representative may be merged later
        new = np.unique(rep)
        if len(new) <= k:
            raise ValueError(f"only {len(new)} distinct points after removing duplicates; need more than K={k}")
        nb = _without(X, kept, new, nb, k, device)
        kept = new
    removed = n - len(kept)
    t1 = nb.distances[:, 0]
    suspect = int(np.sum(t1 < SUSPECT * np.median(t1)))
    if suspect and duplicates != "keep":
        warnings.warn(
            f"{suspect} rows have a neighbour closer than {SUSPECT:g} x the median nearest-neighbour "
            "distance: distinct at this precision, but such pairs dominate TwoNN and the MLE; "
            "merge them with a larger rtol (--rtol) if they are copies",
            stacklevel=3,
        )
    if removed:
        warnings.warn(
            f"removed {removed} duplicate or near-duplicate rows (distance <= {rtol:.3g} x norm)", stacklevel=3
        )
    return Prepared(X if removed == 0 else X[kept], nb, kept, np.searchsorted(kept, label), removed, rtol)


def neighbors_without_duplicates(
    X, k: int, *, duplicates: str = "remove", rtol: float | None = None, device: str = "auto"
) -> tuple[np.ndarray, Neighbors, int]:
    """(points used, their exact kNN, rows removed): ``prepare`` for callers that need only these."""
    p = prepare(X, k, duplicates=duplicates, rtol=rtol, device=device)
    return p.X, p.neighbors, p.n_duplicates
