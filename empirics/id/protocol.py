"""Named protocols for one ID estimate (paper Section 5).

- ``full``: the estimator on all N points at once, with a bootstrap interval. This is what the
  data support: the small-N bias of the MLE shrinks with N (see ``MLEScaling``).
- ``paper``: the paper's protocol. "We use the MLE ID algorithm (Levina and Bickel, 2004;
  Pedregosa et al., 2011) with K = 20 neighbors. We split the sampled embedding tokens into batches
  of 4096 and run the MLE estimator on each batch, averaging together for the final result."
  Batches are random and disjoint; the remainder (N mod 4096) is dropped and reported. The paper's
  script calls scikit-dimension's MLE, whose default combination is MacKay-Ghahramani's inverse
  mean (``comb='mle'``), so ``estimator='mle'`` is the paper's. The interval is a t-interval over
  batch estimates (or the single batch's bootstrap interval).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from tmcheck.empirics.id.points import check_points

FIT_MODULES = tuple(  # the modules of this package that declare estimators: a top-level `ESTIMATORS = (`
    p.stem
    for p in sorted(Path(__file__).parent.glob("*.py"))
    if re.search(r"^ESTIMATORS = \(", p.read_text("utf-8"), re.M)
)
# every named estimator, by name: each fit module declares its records beside its fit class
# (``registry.Estimator``), and is found by the rule above: a new estimator touches its own module only
ESTIMATORS = {r.name: r for m in FIT_MODULES for r in importlib.import_module(f"{__package__}.{m}").ESTIMATORS}
PROTOCOLS = ("full", "paper")
MAX_FULL_POINTS = 200_000  # a useful cap for the full protocol: its exact search is N^2 D, a minute here on 2 cores


@dataclass
class IDResult:
    """One ID estimate. ``protocol`` holds the protocol's name and details (batch estimates, etc.)."""

    dimension: float
    ci: tuple[float, float] | None
    n_used: int
    n_duplicates: int
    estimator: str
    k: int | None
    protocol: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def estimator_record(estimator: str):
    """The record of a named estimator (a key of ESTIMATORS); an unknown name is refused in one line."""
    if estimator not in ESTIMATORS:
        raise ValueError(f"unknown estimator {estimator!r}; choose from {', '.join(ESTIMATORS)}")
    return ESTIMATORS[estimator]


def make_estimator(
    estimator: str,
    *,
    k: int = 20,
    bootstrap: int = 0,
    duplicates: str = "remove",
    device: str = "auto",
    seed=None,
    ci_level: float = 0.95,
    rtol: float | None = None,
    sklearn: bool = True,
):
    """An unfitted estimator by name (see ESTIMATORS): the scikit-learn estimator, or with
    ``sklearn=False`` its fit class, which computes the same numbers and imports no scikit-learn
    (what ``estimate_id`` fits)."""
    record = estimator_record(estimator)
    fit = record.make(
        k=k, bootstrap=bootstrap, seed=seed, duplicates=duplicates, device=device, ci_level=ci_level, rtol=rtol
    )
    if not sklearn:
        return fit
    from tmcheck.empirics.id.estimators import sklearn_class

    return sklearn_class(record)(**fit.__dict__)


def estimate_id(
    X,
    estimator: str = "mle",
    k: int = 20,
    protocol: str = "full",
    batch_size: int = 4096,
    bootstrap: int = 200,
    duplicates: str = "remove",
    device: str = "auto",
    seed=0,
    ci_level: float = 0.95,
    rtol: float | None = None,
    max_points: int | None = None,
) -> IDResult:
    """Estimate the intrinsic dimension of the rows of X under a named protocol.

    estimator: a key of ESTIMATORS. protocol: 'full' (all points, bootstrap interval) or 'paper'
    (random disjoint batches of batch_size, mean of batch estimates). duplicates: 'remove' (default;
    warns with the count), 'keep', 'error'. Raises ValueError on bad input (NaN/inf, N <= k,
    constant data, too few distinct points). rtol: the near-duplicate tolerance relative to the points'
    norms (None: 16 eps of their dtype; see ``_points``). max_points: refuse the full protocol on more
    rows than this (its exact search costs N^2 D; None: no cap; MAX_FULL_POINTS is a useful one).
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
    record = estimator_record(estimator)

    def make(boot):
        return make_estimator(
            estimator,
            k=k,
            bootstrap=boot,
            duplicates=duplicates,
            device=device,
            seed=seed,
            ci_level=ci_level,
            rtol=rtol,
            sklearn=False,
        )

    est = make(bootstrap)
    need = est._n_neighbors_needed()  # the parameters first, as fit checks them
    if protocol == "full":
        _check_full_size(X, max_points)
        return _full(X, est, record, ci_level)
    X = check_points(X, need)
    if batch_size <= need:
        raise ValueError(f"batch_size={batch_size} must exceed k={getattr(est, 'k', None)}")
    return _paper(X, make, bootstrap, record, getattr(est, "k", None), batch_size, seed, ci_level)


def _check_full_size(X, max_points: int | None) -> None:
    shape = getattr(X, "shape", ())
    if max_points is not None and len(shape) == 2 and shape[0] > max_points:
        raise ValueError(
            f"{shape[0]:,} points: the full protocol's exact search ({shape[0]:,}^2 x {shape[1]} work) is refused "
            f"above max_points {max_points:,}; use the paper protocol (batches of batch_size points) or raise it"
        )


def _full(X, est, record, ci_level: float) -> IDResult:
    """The estimator on all points at once."""
    est.fit(X)  # its prepare checks the points (check_points): one pass over them, not two
    details = {
        "name": "full",
        "description": record.description,
        "ci_level": ci_level,
        "interval": record.interval(est),
        "duplicate_rtol": est.duplicate_rtol_,
        **record.details(est),
    }
    k_used = getattr(est, "k", None)
    return IDResult(est.dimension_, est.ci_, est.n_used_, est.n_duplicates_, record.name, k_used, details)


def _paper(X, make, bootstrap: int, record, k_used, batch_size: int, seed, ci_level: float) -> IDResult:
    """The paper's protocol on checked points X: random disjoint batches, the mean of their estimates."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(X))
    n_batches = max(1, len(X) // batch_size)
    size = min(batch_size, len(X))
    batch_est = [
        make(bootstrap if n_batches == 1 else 0).fit(X[perm[i * size : (i + 1) * size]]) for i in range(n_batches)
    ]
    values = np.array([e.dimension_ for e in batch_est])
    dimension = float(values.mean())
    if n_batches > 1:
        from scipy import stats

        half = stats.t.ppf((1 + ci_level) / 2, n_batches - 1) * values.std(ddof=1) / np.sqrt(n_batches)
        ci = (dimension - half, dimension + half)
    else:
        ci = batch_est[0].ci_
    details = {
        "name": "paper",
        "ci_level": ci_level,
        "interval": (
            f"t-interval over {n_batches} batch estimates" if n_batches > 1 else record.interval(batch_est[0])
        ),
        "duplicate_rtol": batch_est[0].duplicate_rtol_,
        "description": "Havrilla & Liao Sec. 5: K=20, random disjoint batches, mean of batch estimates",
        "estimator": record.description,
        "batch_size": size,
        "n_batches": n_batches,
        "n_dropped_remainder": len(X) - n_batches * size,
        "batch_estimates": values.tolist(),
    }
    n_used, n_duplicates = int(sum(e.n_used_ for e in batch_est)), int(sum(e.n_duplicates_ for e in batch_est))
    return IDResult(dimension, ci, n_used, n_duplicates, record.name, k_used, details)
