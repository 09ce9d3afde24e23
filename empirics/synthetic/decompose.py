"""Where a transformer's test error comes from, measured with tmcheck's own Lemma 1 construction (d ∈ {1, 2}).

Lemma 1 (theory.lemmas.lemma1) builds a transformer that computes exactly

    f̂_N(u) = Σ_n f_n φ_n(u),   φ_n(u) = Π_i ψ(3(N-1)(u^i - t_{n^i})),   t_j = j/(N-1),

on the intrinsic coordinates u ∈ [0,1]^d (ψ the trapezoid, φ_n a partition of unity). The network is
linear in the values f_n (they sit in the V matrices of its f_n block), so three numbers split a trained
transformer's test MSE against f at one size n, one seed:

- approximation: the construction with f_n = f(t_n), the lemma's choice: its test MSE and its largest
  error on the test points (a sampled maximum; the lemma's bound needs f's Hölder constant, which the
  synthetic field does not state);
- empirical risk: the construction fine-tuned on the n training points, i.e. the f_n fitted by least
  squares to the noisy labels (the minimiser over the construction's class at this N: the fit is convex in
  the f_n; a ridge of 1e-8 of Φ^TΦ's mean diagonal keeps a patch that holds no point at 0). Its test MSE is
  approximation plus estimation error, the best an exact optimiser reaches with this construction;
- optimisation gap: the transformer's test MSE (AdamW from a random start, the sweep's row) minus the
  empirical-risk proxy.

N is chosen per (d, β, n, seed) on the run's own validation split from the whole of ``GRID`` up to
N^d = the training points (the validation error is not monotone in N: a search that stops early can stop
at N = 4) (the theory's N grows as
n^{1/(2β+d)}; choosing it on held-out data uses the rate without its unknown constant). The features are
computed in float64 from the formula above; tests/empirics/test_decompose.py checks them against the
construction's exact value (theory.sparse.grid_value) at rational points.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from tmcheck.empirics.synthetic.problem import Experiment, Split, holder_field

GRID = (2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64, 91, 128, 181, 256)  # N per axis, about √2 apart
MAX_FEATURES = 4096  # N^d at the most (least squares on n × N^d)
DIMS = (1, 2)


def lemma1_features(u: np.ndarray, N: int):
    """φ_n(u) for every patch n (row-major over n ∈ {0..N-1}^d, theory.sparse.patches' order), as a sparse
    (len(u), N^d) CSR matrix: at most 2^d patches are non-zero at a point (ψ ≠ 0 at ≤ 2 grid points an axis)."""
    from scipy import sparse

    u = np.asarray(u, dtype=np.float64)
    if u.ndim != 2 or N < 2:
        raise ValueError(f"need u of shape (n, d) and N >= 2, got shape {u.shape} and N = {N}")
    n, d = u.shape
    scale = 3 * (N - 1)  # theory.sparse.psi_scale
    idx, val = np.zeros((n, 1), dtype=np.int64), np.ones((n, 1))
    for i in range(d):
        j0 = np.clip(np.floor(u[:, i] * (N - 1)).astype(np.int64), 0, N - 2)  # the grid cell [t_j0, t_j0+1]
        js = np.stack([j0, j0 + 1], axis=1)  # ψ vanishes at every other grid point (3 apart in ψ's argument)
        s = np.clip(2.0 - np.abs(scale * (u[:, i, None] - js / (N - 1))), 0.0, 1.0)
        idx = (idx[:, :, None] * N + js[:, None, :]).reshape(n, -1)
        val = (val[:, :, None] * s[:, None, :]).reshape(n, -1)
    k = idx.shape[1]
    return sparse.csr_matrix((val.ravel(), idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, N**d))


def field_on_coords(exp: Experiment, u: np.ndarray) -> np.ndarray:
    """The problem's target f as a function of the intrinsic coordinates (the `holder` field only)."""
    fld = exp.field
    if exp.problem.target != "holder":
        raise ValueError(f"the decomposition needs the holder target (a field of u), got {exp.problem.target!r}")
    return (
        holder_field(np.asarray(u, dtype=np.float64), exp.problem.beta, fld.levels, fld.salt) - fld.mean
    ) / fld.scale


def grid_points(N: int, d: int) -> np.ndarray:
    """t_n for every patch n, in lemma1_features' order: (N^d, d)."""
    t = np.arange(N) / (N - 1)
    return np.stack(np.meshgrid(*([t] * d), indexing="ij"), axis=-1).reshape(-1, d)


RIDGE = 1e-8  # relative to the mean diagonal of Φ^T Φ: keeps a patch without points at f_n = 0


def _fit(phi, y: np.ndarray) -> np.ndarray:
    """Least squares over the f_n: (Φ^T Φ + λ I) f = Φ^T y, Φ^T Φ banded and sparse (2^d non-zeros a row of Φ)."""
    from scipy import sparse
    from scipy.sparse.linalg import spsolve

    gram = (phi.T @ phi).tocsc()
    lam = RIDGE * max(float(gram.diagonal().mean()), 1e-300)
    return spsolve(gram + lam * sparse.identity(gram.shape[0], format="csc"), phi.T @ y)


def decompose_split(exp: Experiment, split: Split, grid: Iterable[int] = GRID) -> dict:
    """The approximation term and the empirical-risk proxy on one split, at the N its validation split picks."""
    coords = exp.manifold.coords
    u_tr, u_val, u_te = (coords(x) for x in (split.X_train, split.X_val, split.X_test))
    d = u_tr.shape[1]
    best = None
    for N in grid:
        if N**d > min(MAX_FEATURES, len(u_tr)):  # no more values f_n than training points
            break
        w = _fit(lemma1_features(u_tr, N), split.y_train)
        val = float(np.mean((lemma1_features(u_val, N) @ w - split.y_val) ** 2))
        if best is None or val < best[0]:
            best = (val, N, w)
    assert best is not None  # GRID starts at N = 2: 2^d <= MAX_FEATURES for d <= 12
    _, N, w = best
    phi_te = lemma1_features(u_te, N)
    interp = phi_te @ field_on_coords(exp, grid_points(N, d))
    return {
        "N": int(N),
        "approx_mse": float(np.mean((interp - split.f_test) ** 2)),
        "approx_max": float(np.max(np.abs(interp - split.f_test))),
        "erm_mse": float(np.mean((phi_te @ w - split.f_test) ** 2)),
    }


def mean_interval(values: Sequence[float], level: float = 0.95) -> dict:
    """The mean over seeds with Student's t interval (method 't over seeds')."""
    from scipy import stats

    v = np.asarray(values, dtype=np.float64)
    m = float(v.mean())
    if len(v) < 2:
        return {"mean": m, "ci": [math.nan, math.nan], "seeds": len(v)}
    half = float(stats.t.ppf((1 + level) / 2, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v)))
    return {"mean": m, "ci": [m - half, m + half], "seeds": len(v)}


def choose_sizes(ns: Sequence[int], count: int = 3) -> list[int]:
    """`count` sizes spread over the design in log n: the smallest, the largest and those between."""
    ns = sorted(set(ns))
    if len(ns) <= count:
        return ns
    idx = np.unique(np.round(np.linspace(0, len(ns) - 1, count)).astype(int))
    return [ns[i] for i in idx]


def decomposition(preset, rows: list[dict], sizes: int = 3) -> list[dict]:
    """The three terms for every (d ∈ DIMS, β) of a synthetic sweep at `sizes` sizes, on the seeds whose
    transformer run stopped on its validation loss (a capped run is not an optimiser's answer)."""
    out = []
    tr = [r for r in rows if r.get("sweep") == "data" and r["method"] == "transformer" and r.get("stop") != "cap"]
    cells = sorted({(r["d"], r["beta"]) for r in tr if r["d"] in DIMS}, key=lambda c: (c[0], -c[1]))
    for d, beta in cells:
        p = preset.at(d, beta)  # the (d, β)'s tuned settings, as the sweep ran them
        if p.target != "holder":
            continue
        exp = Experiment(p.problem(d, beta, p.noise))
        mine = [r for r in tr if (r["d"], r["beta"]) == (d, beta)]
        for n in choose_sizes([r["n"] for r in mine], sizes):
            per = []
            for r in sorted((r for r in mine if r["n"] == n), key=lambda r: r["seed"]):
                split = exp.split(n, max(p.ns), r["seed"], p.n_test, p.val_fraction, p.min_val)
                terms = decompose_split(exp, split)
                per.append({**terms, "seed": r["seed"], "transformer_mse": r["test_mse"]})
            if not per:
                continue
            gap = [q["transformer_mse"] - q["erm_mse"] for q in per]
            out.append(
                {
                    "d": d,
                    "beta": beta,
                    "n": n,
                    "N": [q["N"] for q in per],
                    "approx_mse": mean_interval([q["approx_mse"] for q in per]),
                    "approx_max": max(q["approx_max"] for q in per),
                    "erm_mse": mean_interval([q["erm_mse"] for q in per]),
                    "transformer_mse": mean_interval([q["transformer_mse"] for q in per]),
                    "optimisation_gap": mean_interval(gap),
                    "seeds": [q["seed"] for q in per],
                }
            )
    return out


def attribution(entry: dict) -> str:
    """The optimisation gap's sign, read from its interval: 'short of the construction' (the trained
    transformer is worse than the construction fitted by least squares: the optimiser leaves error), 'at the
    construction' (the interval holds 0), 'better than the construction' (the transformer beats it: the
    proxy is no lower bound there, and what remains is statistical error the construction also pays)."""
    lo, hi = entry["optimisation_gap"]["ci"]
    if math.isnan(lo):
        return "undecided (one seed)"
    if lo > 0:
        return "short of the construction"
    if hi < 0:
        return "better than the construction"
    return "at the construction"
