"""One exact k-nearest-neighbour engine for every ID estimator (paper Section 5, "Estimating the ID").

The whole cost of MLE and TwoNN at D = 768 is the kNN search, so it is done once, here, in torch
(CUDA when present), in three steps:

1. **Candidate search in float32.** The data are centred in float64 (which removes most of the
   cancellation of the Gram trick) and cast to float32. Squared distances
   ``|q|^2 + |x|^2 - 2 q.x`` are formed tile by tile over the upper triangle of the (N, N) matrix,
   each tile serving the rows of both of its blocks, so every product is computed once. A running
   top-m (m = k + margin) is kept per row. The diagonal is excluded by index, never by distance.
   Memory is bounded by one (block, block) tile plus O(N m).
2. **Exact re-ranking in float64.** The m candidates of each row are re-measured as the float64
   norm of the difference vector and the first k kept (ties broken by index).
3. **Certificate.** For a dot product of length D, rounding moves a float32 squared distance by at
   most ``gamma = (D + 3) u`` times ``(|q| + |x|)^2 <= 2(|q|^2 + R^2)`` (u = 2^-24, R the largest
   centred norm) [Higham, Accuracy and Stability, Thm 3.5]. Every non-candidate had a float32 value
   of at least t (the m-th candidate's), so its true squared distance is at least ``t - err``. A row
   whose exact k-th squared distance is below that is provably exact; any other row is recomputed
   against all N points in float64. Results are therefore exact on every device, and CPU and GPU
   agree up to ties.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

U32 = 2.0**-24


@dataclass(frozen=True)
class Neighbors:
    """Exact k nearest neighbours of every row, self excluded.

    distances: (N, k) float64, ascending per row; indices: (N, k) int64.
    n_recomputed: rows whose float32 candidate set could not be certified and were searched
    exhaustively in float64.
    """

    distances: np.ndarray
    indices: np.ndarray
    n_recomputed: int
    device: str


def resolve_device(device: str = "auto"):
    """'auto' is CUDA when torch sees a GPU, else CPU; anything else is passed to torch.device."""
    import torch

    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but torch sees no CUDA device")
    return dev


def _merge(best_d, best_i, new_d, new_i, m):
    """Keep the m smallest of two (rows, *) candidate lists."""
    import torch

    vals = torch.cat([best_d, new_d], dim=1)
    idx = torch.cat([best_i, new_i], dim=1)
    top, pos = torch.topk(vals, m, dim=1, largest=False, sorted=False)
    return top, torch.gather(idx, 1, pos)


def _update(best_d, best_i, r0: int, d2, c0: int, m: int) -> None:
    """Merge the tile d2 (its rows are points r0.., its columns points c0..) into the running top-m.

    A point left out had a value >= the m-th value kept at that time, which only decreases, so it
    is >= the final threshold the certificate uses. (A sparse variant that gathers only entries
    below the running threshold was slower on CPU: torch.nonzero costs more than topk there.)
    """
    import torch

    rows = slice(r0, r0 + d2.shape[0])
    v, p = torch.topk(d2, min(m, d2.shape[1]), dim=1, largest=False, sorted=False)
    best_d[rows], best_i[rows] = _merge(best_d[rows], best_i[rows], v, p + c0, m)


def kneighbors(
    X,
    k: int,
    *,
    device: str = "auto",
    block_size: int | None = None,
    margin: int | None = None,
    rerank_bytes: int = 128 * 2**20,
) -> Neighbors:
    """Exact k nearest neighbours (Euclidean) of each row of X among the other rows.

    block_size: rows per tile of the float32 search (default 4096 on CPU, 16384 on CUDA; a tile
    holds block_size^2 float32 values). margin: extra float32 candidates per row re-ranked in float64
    (default max(8, k // 2)); a larger margin means fewer rows fail the certificate.
    """
    import torch

    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"expected a 2-D array of points, got shape {X.shape}")
    n, dim = X.shape
    if not 1 <= k < n:
        raise ValueError(f"need 1 <= k < N for kNN, got k={k}, N={n}")
    dev = resolve_device(device)
    if block_size is None:
        block_size = 16384 if dev.type == "cuda" else 4096
    m = min(n - 1, k + (max(8, k // 2) if margin is None else margin))

    x64 = torch.as_tensor(X, dtype=torch.float64).to(dev)
    x64 = x64 - x64.mean(dim=0, keepdim=True)  # (N, D) centred
    sq64 = (x64 * x64).sum(dim=1)  # (N,)
    xf = x64.to(torch.float32)
    sq = sq64.to(torch.float32)

    inf = torch.tensor(float("inf"), device=dev)
    best_d = torch.full((n, m), float("inf"), dtype=torch.float32, device=dev)
    best_i = torch.full((n, m), -1, dtype=torch.int64, device=dev)
    starts = list(range(0, n, block_size))
    for a, i0 in enumerate(starts):
        i1 = min(n, i0 + block_size)
        for j0 in starts[a:]:
            j1 = min(n, j0 + block_size)
            # (bi, bj) squared distances in float32
            d2 = torch.addmm(sq[None, j0:j1], xf[i0:i1], xf[j0:j1].T, alpha=-2.0).add_(sq[i0:i1, None])
            if i0 == j0:
                d2.fill_diagonal_(inf)
            _update(best_d, best_i, i0, d2, j0, m)
            if i0 != j0:
                _update(best_d, best_i, j0, d2.T, i0, m)
            del d2

    # certificate slack per row: 4 gamma (|q|^2 + R^2), twice the bound for safety
    gamma = (dim + 3) * U32 / (1 - (dim + 3) * U32)
    slack = 4.0 * gamma * (sq64 + sq64.max())
    threshold = best_d.max(dim=1).values.to(torch.float64)  # the m-th candidate's float32 value
    cand = best_i.cpu().numpy() if dev.type == "cpu" else best_i
    out_d, out_i = _rerank(x64, cand, k, rerank_bytes)
    if m < n - 1:
        bad = torch.nonzero(out_d[:, -1] ** 2 >= threshold[:] - slack).flatten()
    else:  # every other point was a candidate
        bad = torch.empty(0, dtype=torch.int64, device=dev)
    for r0 in range(0, len(bad), 256):
        rows = bad[r0 : r0 + 256]
        dist = torch.cdist(x64[rows], x64, compute_mode="donot_use_mm_for_euclid_dist")  # (c, N)
        dist[torch.arange(len(rows), device=dev), rows] = float("inf")
        # stable (distance, index) order: indices are already ascending along each row
        order = torch.sort(dist, dim=1, stable=True).indices[:, :k]
        out_d[rows], out_i[rows] = torch.gather(dist, 1, order), order
    return Neighbors(out_d.cpu().numpy(), out_i.cpu().numpy(), int(len(bad)), str(dev))


def _rerank(x64, cand, k: int, rerank_bytes: int):
    """Exact float64 distances to each row's candidates; keep the k nearest, ties by index.

    cand is a numpy array (CPU: numpy's take and einsum are several times faster than torch's
    gather there) or a torch tensor (CUDA). Returns torch tensors (N, k) on x64's device.
    """
    import torch

    n, dim = x64.shape
    m = cand.shape[1]
    chunk = max(1, min(64, rerank_bytes // (8 * m * dim)))
    if isinstance(cand, np.ndarray):
        xn = x64.numpy()
        dist = np.empty(cand.shape, dtype=np.float64)
        for r0 in range(0, n, chunk):
            r1 = min(n, r0 + chunk)
            g = np.take(xn, cand[r0:r1].ravel(), axis=0).reshape(r1 - r0, m, dim)
            g -= xn[r0:r1, None, :]
            dist[r0:r1] = np.sqrt(np.einsum("ijk,ijk->ij", g, g))
        dist, cand = torch.from_numpy(dist), torch.from_numpy(cand)
    else:
        chunk = max(1, rerank_bytes // (8 * m * dim))
        dist = torch.empty(cand.shape, dtype=torch.float64, device=x64.device)
        for r0 in range(0, n, chunk):
            r1 = min(n, r0 + chunk)
            dist[r0:r1] = torch.linalg.vector_norm(x64[cand[r0:r1]] - x64[r0:r1, None, :], dim=2)
    # sort by (distance, index): order by index, then a stable sort by distance
    order = torch.argsort(cand, dim=1)
    cand, dist = torch.gather(cand, 1, order), torch.gather(dist, 1, order)
    order = torch.sort(dist, dim=1, stable=True).indices[:, :k]
    return torch.gather(dist, 1, order).to(x64.device), torch.gather(cand, 1, order).to(x64.device)
