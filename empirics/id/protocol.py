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

from dataclasses import asdict, dataclass, field

import numpy as np

from tmcheck.empirics.id.core import MLECurveFit, MLEFit, MLEScalingFit, TwoNNFit
from tmcheck.empirics.id.gride import GRIDEFit
from tmcheck.empirics.id.points import check_points

# name -> (fit class, fixed parameters, description); the fit classes import no scikit-learn (see
# ``core``), ``estimators.SKLEARN`` maps each to its scikit-learn estimator
ESTIMATORS = {
    "mle": (
        MLEFit,
        {"combine": "inverse"},
        "Levina-Bickel MLE, MacKay-Ghahramani inverse mean (skdim default; the paper's)",
    ),
    "mle-mean": (MLEFit, {"combine": "mean"}, "Levina-Bickel MLE, mean of pointwise estimates"),
    "twonn": (TwoNNFit, {"method": "linear"}, "TwoNN, linear fit through the origin, 10% discarded"),
    "twonn-mle": (TwoNNFit, {"method": "mle"}, "TwoNN maximum likelihood, 10% censored"),
    "scaling": (MLEScalingFit, {}, "MLE on subsets N, N/2, ..., extrapolated to N -> inf"),
    "mle-curve": (MLECurveFit, {}, "MLE at k = 5, 10, 20, 40, 80 from one kNN search (dimension at k)"),
    "gride": (
        GRIDEFit,
        {"multiscale": True},
        "GRIDE (Denti et al. 2022), n1=1, n2=2, likelihood-ratio interval; scales n1 = 1..32",
    ),
}
PROTOCOLS = ("full", "paper")


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
    if estimator not in ESTIMATORS:
        raise ValueError(f"unknown estimator {estimator!r}; choose from {', '.join(ESTIMATORS)}")
    cls, fixed, _ = ESTIMATORS[estimator]
    params = dict(duplicates=duplicates, device=device, ci_level=ci_level, rtol=rtol, **fixed)
    if cls is not GRIDEFit:
        params.update(bootstrap=bootstrap, seed=seed)
    if cls not in (TwoNNFit, GRIDEFit):
        params["k"] = k
    if sklearn:
        from tmcheck.empirics.id.estimators import SKLEARN

        cls = SKLEARN[cls]
    return cls(**params)


def _interval_method(est) -> str:
    if isinstance(est, GRIDEFit):
        return "likelihood ratio (chi2_1)"
    if est.ci_ is None:
        return "none"
    if isinstance(est, MLEScalingFit):
        return f"percentile bootstrap of the extrapolation over subsets, {est.bootstrap} resamples"
    return f"percentile bootstrap over points, {est.bootstrap} resamples"


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
) -> IDResult:
    """Estimate the intrinsic dimension of the rows of X under a named protocol.

    estimator: a key of ESTIMATORS. protocol: 'full' (all points, bootstrap interval) or 'paper'
    (random disjoint batches of batch_size, mean of batch estimates). duplicates: 'remove' (default;
    warns with the count), 'keep', 'error'. Raises ValueError on bad input (NaN/inf, N <= k,
    constant data, too few distinct points). rtol: the near-duplicate tolerance relative to the points'
    norms (None: 16 eps of their dtype; see ``_points``).
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")

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
    k_used = getattr(est, "k", None)
    need = est._n_neighbors_needed()  # the parameters first, as fit checks them
    if protocol == "full":
        est.fit(X)  # its prepare checks the points (check_points): one pass over them, not two
        details = {
            "name": "full",
            "description": ESTIMATORS[estimator][2],
            "ci_level": ci_level,
            "interval": _interval_method(est),
            "duplicate_rtol": est.duplicate_rtol_,
        }
        if isinstance(est, MLEScalingFit):
            details.update(curve=est.curve_, bias_at_N=est.bias_, exponent=est.exponent_)
        if isinstance(est, MLECurveFit):
            details.update(curve=est.curve_)
        if isinstance(est, GRIDEFit):
            details.update(
                error=est.error_,
                scales=[
                    {
                        "n1": int(s),
                        "n2": int(2 * s),
                        "dimension": float(d),
                        "error": float(e),
                        "ci": list(c),
                        "radius": float(r),
                    }
                    for s, d, e, c, r in zip(
                        est.scales_,
                        est.dimension_scales_,
                        est.error_scales_,
                        est.ci_scales_,
                        est.radius_scales_,
                        strict=True,
                    )
                ],
            )
        return IDResult(est.dimension_, est.ci_, est.n_used_, est.n_duplicates_, estimator, k_used, details)

    X = check_points(X, need)
    if batch_size <= need:
        raise ValueError(f"batch_size={batch_size} must exceed k={k_used}")
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
            f"t-interval over {n_batches} batch estimates" if n_batches > 1 else _interval_method(batch_est[0])
        ),
        "duplicate_rtol": batch_est[0].duplicate_rtol_,
        "description": "Havrilla & Liao Sec. 5: K=20, random disjoint batches, mean of batch estimates",
        "estimator": ESTIMATORS[estimator][2],
        "batch_size": size,
        "n_batches": n_batches,
        "n_dropped_remainder": len(X) - n_batches * size,
        "batch_estimates": values.tolist(),
    }
    return IDResult(
        dimension,
        ci,
        int(sum(e.n_used_ for e in batch_est)),
        int(sum(e.n_duplicates_ for e in batch_est)),
        estimator,
        k_used,
        details,
    )
