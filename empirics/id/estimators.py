"""Intrinsic-dimension estimators, scikit-learn estimators (paper Section 5, "Estimating the ID").

Every estimator subclasses ``sklearn.base.BaseEstimator``: ``__init__`` only stores parameters, so
``clone``, ``get_params`` and ``set_params`` work; ``fit(X)`` returns self; learned state ends in
``_``: ``dimension_``, ``dimension_pw_`` (pointwise values), ``ci_`` (an interval, or None),
``n_used_``, ``n_duplicates_``, ``n_features_in_``; ``dimension_pw_[representative_]`` gives all N
rows (a removed duplicate gets the value of the row kept for it). ``fit_distances`` takes precomputed
sorted kNN distances (self excluded), so several estimators can share one search.

scikit-dimension's interface is accepted with scikit-dimension's meanings, and only where it means
the same: ``registry.PEER_CALLS`` is the one table of its methods and keywords that tmcheck takes
(tests/empirics/id/test_skdim_interface.py runs every row against scikit-dimension 0.5.0).
``fit_transform`` and ``transform`` return the ID; ``MLE().fit(X, n_neighbors=, comb=, smooth=)``
(comb 'mle', 'mean', 'median'), with k lowered to N - 1 and a warning when N <= k;
``MLE().fit_transform(X)`` combines by 'mean' as scikit-dimension's does (its fit by 'mle');
``MLE().fit_transform_pw(X, n_neighbors=)`` is the pointwise MLE at that k (a local estimator: one
fit); ``fit_pw(X, n_neighbors=100, smooth=)`` of TwoNN and GRIDE refits the estimator in each point's
neighbourhood, and so does their ``fit_transform_pw``; ``transform_pw``. Refused in one line, because
they would compute another number (``registry.PEER_REFUSED``): ``MLE(K=...)`` (scikit-dimension's
default ignores K; tmcheck's is ``k`` or ``n_neighbors``), precomputed neighbours, and the methods
scikit-dimension's class does not have (``MLE().fit_pw``: scikit-dimension's MLE has none).

- ``MLE``: Levina & Bickel (2004). With T_j the j-th neighbour distance,
  m_k(x) = (k - 1) / sum_{j<k} log(T_k / T_j). ``combine='inverse'`` is MacKay & Ghahramani's
  1 / mean(1 / m_k), scikit-dimension's default (``comb='mle'``) and hence the paper's;
  ``combine='mean'`` averages m_k.
- ``MLECurve``: the MLE at several k from ONE search at the largest k: the scale dependence.
- ``TwoNN``: Facco et al. (2017). mu = T_2 / T_1 is Pareto(d). ``method='linear'`` fits
  -log(1 - F_emp(mu)) = d log mu through the origin after discarding the largest
  ``discard_fraction`` of mu (dadapy's 'base', skdim's 'linear'); ``method='mle'`` censors them:
  (n - 1) / (sum log mu + c log mu_max). Pointwise: 1 / log mu_i, the one-point Pareto MLE.
- ``GRIDE``: its arithmetic in ``gride``.
- ``MOM``, ``TLE`` (``local``), ``lPCA`` (``lpca``), ``MADA`` (``mada``), ``ESS`` (``ess``), ``CorrInt``
  (``corrint``), ``KNN`` (``knn_est``) and ``DANCo`` (``danco``): scikit-dimension's estimators, each equal
  to scikit-dimension 0.5.0's numbers on the same points (its modules say where the peer is wrong), with
  MLE's duplicate policy and a bootstrap interval; their classes are built here by ``sklearn_class``.
- ``MLEScaling``: the MLE on disjoint subsets of size N, N/2, N/4, ..., extrapolated to N -> inf
  with m(n) = d + c n^(-2/d) (curvature bias is O(r_k^2) and r_k ~ n^(-1/d)).

What an estimate computes lives in ``core`` (``MLEFit``, ...) and ``gride`` (``GRIDEFit``), which
import no scikit-learn; each class here subclasses its fit class and ``IDEstimator`` and adds only
the interfaces: scikit-learn's from ``BaseEstimator`` and scikit-dimension's spellings.

Bootstrap intervals (percentile method, ``ci_level`` coverage at the design of iid pointwise values)
resample points, all replicates at once. Neighbourhoods overlap, so pointwise values are not
independent and the interval is somewhat narrow; it measures the sampling noise of the average,
not the estimator's bias (MLEScaling and MLECurve show that).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from tmcheck.empirics.id.core import (
    SKDIM_COMB,
    IDFit,
    MLECurveFit,
    MLEFit,
    MLEScalingFit,
    TwoNNFit,
    lowered_k,
    n_rows,
    resolve_k,
    smoothed,
)
from tmcheck.empirics.id.gride import GRIDEFit
from tmcheck.empirics.id.knn import kneighbors
from tmcheck.empirics.id.registry import PEER_REFUSED, refuse_unlisted


def _refit_in_neighbourhoods(est, X: np.ndarray, nbrs: np.ndarray) -> np.ndarray:
    """est's ID on each row's neighbourhood X[nbrs[i]], from the sorted distances inside it (float64,
    in blocks of bounded memory); a neighbourhood holding duplicate points goes through est.fit, which
    applies the duplicate policy."""
    import torch

    need = est._n_neighbors_needed()
    m = nbrs.shape[1]
    if need >= m:
        raise ValueError(f"{type(est).__name__} needs {need + 1} points per neighbourhood, n_neighbors gives {m}")
    out = np.empty(len(nbrs))
    block = max(1, (1 << 24) // (m * m))
    for b0 in range(0, len(nbrs), block):
        idx = nbrs[b0 : b0 + block]
        P = torch.from_numpy(X[idx])  # (b, m, D)
        dist = torch.cdist(P, P).sort(dim=-1).values.numpy()[:, :, 1 : need + 1]  # (b, m, need), self dropped
        for j, d in enumerate(dist):
            row = b0 + j
            out[row] = est.fit(X[idx[j]]).dimension_ if (d[:, 0] <= 0).any() else est.fit_distances(d).dimension_
    return out


def _fit_as(est, changes: dict, X, **fit_kw):
    """Fit a clone of ``est`` with ``changes`` to its parameters and take its learned state (``*_``):
    the parameters the user set stay as given (scikit-learn's rule), the fit says what it used."""
    once = clone(est).set_params(**changes)
    once.fit(X, **fit_kw)
    est.__dict__.update({a: v for a, v in vars(once).items() if a.endswith("_") and not a.startswith("_")})
    return est


class IDEstimator(IDFit, BaseEstimator):
    """scikit-learn's and scikit-dimension's interface over the shared fit of ``core.IDFit``.

    The scikit-dimension methods and keywords each class takes are the rows of ``registry.PEER_CALLS``
    (tests/empirics/id/test_skdim_interface.py checks the signatures against the table and each row
    against scikit-dimension); ``fit_pw`` and ``fit_transform_pw`` of a class without a row are refused."""

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags

        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.non_deterministic = False
        tags.transformer_tags = TransformerTags()  # transform exists (scikit-dimension's: it returns the ID)
        return tags

    def fit(self, X, y=None):
        """Estimate the ID of the rows of X (N, D); y is ignored. Returns self."""
        return IDFit.fit(self, X)

    def fit_transform(self, X, y=None):
        """Fit and return the ID (a float), as scikit-dimension does."""
        return self.fit(X).dimension_

    def transform(self, X=None):
        """The ID of the last fit (X, when given, must have the fitted width), as scikit-dimension."""
        from sklearn.utils.validation import check_array

        check_is_fitted(self, "dimension_")
        if X is not None:
            X = check_array(X)
            if X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input."
                )
        return self.dimension_

    def fit_pw(self, X, precomputed_knn=None, smooth: bool = False, n_neighbors: int = 100, n_jobs=1):
        """Pointwise IDs in ``dimension_pw_``: scikit-dimension's ``fit_pw`` of a global estimator, the
        estimator refitted on each point's ``n_neighbors`` nearest neighbours (the point itself not among
        them); ``smooth`` adds ``dimension_pw_smooth_``, each point's value averaged with its neighbours'.
        n_jobs changes nothing here (the engine uses the threads torch has)."""
        refuse_unlisted(type(self).__name__, "fit_pw")
        if precomputed_knn is not None:
            raise ValueError(PEER_REFUSED["precomputed_knn"])
        X = np.asarray(X)
        if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)) or n_neighbors < 3:
            raise ValueError(f"n_neighbors must be an integer >= 3, got {n_neighbors!r}")
        if X.ndim != 2 or len(X) <= n_neighbors:
            raise ValueError(f"fit_pw needs more than n_neighbors = {n_neighbors} rows, got shape {np.shape(X)}")
        self.fit(X)
        X = np.asarray(X, dtype=np.float64)
        nbrs = kneighbors(X, n_neighbors, device=self.device).indices
        local = clone(self)
        if "bootstrap" in local.get_params():
            local.set_params(bootstrap=0)
        self.dimension_pw_ = _refit_in_neighbourhoods(local, X, nbrs)
        if smooth:
            self.dimension_pw_smooth_ = smoothed(self.dimension_pw_, nbrs)
        return self

    def transform_pw(self, X=None):
        """The pointwise IDs of the last fit (and the smoothed ones when it was smooth)."""
        check_is_fitted(self, "dimension_pw_")
        smooth = getattr(self, "dimension_pw_smooth_", None)
        return self.dimension_pw_ if smooth is None else (self.dimension_pw_, smooth)

    def fit_transform_pw(self, X, precomputed_knn=None, smooth: bool = False, n_neighbors: int = 100, n_jobs=1):
        """fit_pw, then transform_pw."""
        refuse_unlisted(type(self).__name__, "fit_transform_pw")
        return self.fit_pw(X, precomputed_knn, smooth=smooth, n_neighbors=n_neighbors, n_jobs=n_jobs).transform_pw()


class MLE(MLEFit, IDEstimator):
    """Levina-Bickel maximum-likelihood ID from the k nearest neighbours of every point.

    k (alias n_neighbors): neighbours per point (default: the paper's K = 20; lowered to N - 1 with a
    warning when N <= k, as scikit-dimension does). combine: 'inverse' (MacKay-Ghahramani; the
    paper's via skdim), 'mean' (Levina-Bickel) or 'median'; None (the default) is 'inverse' in fit
    and 'mean' in fit_transform, scikit-dimension's defaults there. bootstrap: resamples for a
    percentile interval (0: none). duplicates: 'remove' (default, warns with the count), 'keep' or
    'error'; rtol: near-duplicate tolerance relative to the points' norms (None: 16 eps of their
    dtype). device: 'auto', 'cpu', 'cuda'. scikit-dimension's K is refused (``registry.PEER_REFUSED``).
    """

    def fit(self, X, y=None, precomputed_knn_arrays=None, smooth=False, n_neighbors=None, comb=None, n_jobs=1):
        """Fit; scikit-dimension's ``fit(X, n_neighbors=20, comb='mle', smooth=False)`` with its meanings
        (n_neighbors: k for this fit; comb: 'mle' = combine 'inverse', 'mean', 'median'); n_jobs changes
        nothing here (the engine uses the threads torch has)."""
        if precomputed_knn_arrays is not None:
            raise ValueError(PEER_REFUSED["precomputed_knn_arrays"])
        low = lowered_k(n_neighbors if n_neighbors is not None else resolve_k(self), n_rows(X))
        if low is not None:
            n_neighbors = low
        if n_neighbors is None and comb is None:
            return IDFit.fit(self, X, smooth=smooth)
        if comb is not None and comb not in SKDIM_COMB:
            raise ValueError(f"comb must be one of {', '.join(SKDIM_COMB)} (scikit-dimension's), got {comb!r}")
        changes = {"k": n_neighbors if n_neighbors is not None else resolve_k(self), "n_neighbors": None}
        if comb is not None:
            changes["combine"] = SKDIM_COMB[comb]
        return _fit_as(self, changes, X, smooth=smooth)

    def fit_transform(
        self, X, y=None, precomputed_knn_arrays=None, smooth=False, n_neighbors=None, comb=None, n_jobs=1
    ):
        """The ID of ``fit(X, comb=...)``. comb defaults to 'mean' as in scikit-dimension's
        fit_transform (its fit defaults to 'mle'), unless the estimator was given ``combine``."""
        if comb is None and self.combine is None:
            comb = "mean"
        return self.fit(X, None, precomputed_knn_arrays, smooth=smooth, n_neighbors=n_neighbors, comb=comb).dimension_

    def fit_transform_pw(self, X, precomputed_knn_arrays=None, smooth=False, n_neighbors=None, n_jobs=1):
        """scikit-dimension's ``fit_transform_pw`` of a local estimator: the pointwise MLE of one fit at
        k = n_neighbors (default: the estimator's k), with the smoothed values when ``smooth``."""
        return self.fit(X, None, precomputed_knn_arrays, smooth=smooth, n_neighbors=n_neighbors).transform_pw()


class MLECurve(MLECurveFit, IDEstimator):
    """The MLE as a function of k, all from one kNN search at max(ks).

    ``curve_`` lists {k, dimension, ci}; ``dimension_``, ``dimension_pw_`` and ``ci_`` are those at
    ``k`` (which must be one of ``ks``). A flat curve means the ID does not depend on the scale
    probed; a rising or falling one shows noise (small k) or curvature (large k). On N <= max(ks)
    points every k is lowered to at most N - 1, with a warning (as MLE does).
    """

    def fit(self, X, y=None):
        ks, n = self._ks(), n_rows(X)
        if 3 <= n <= ks[-1]:
            lowered = tuple(sorted({min(v, n - 1) for v in ks}))
            warnings.warn(f"ks up to {ks[-1]} >= the {n} points: ks = {lowered}", stacklevel=2)
            return _fit_as(self, {"ks": lowered, "k": min(self.k, n - 1)}, X)
        return IDFit.fit(self, X)


class TwoNN(TwoNNFit, IDEstimator):
    """TwoNN ID from the ratio of second to first neighbour distances (Facco et al. 2017).

    method: 'linear' (fit through the origin) or 'mle'. discard_fraction: the largest ratios
    dropped (linear) or censored (mle); 0.1 is the convention of dadapy and skdim.
    Other parameters as for MLE.
    """


class MLEScaling(MLEScalingFit, IDEstimator):
    """The MLE as a function of sample size, and its extrapolation to N -> inf.

    The points are split at random into 2^j disjoint subsets of size n_j = N / 2^j for
    j = 0, 1, ... while n_j >= min_size and n_j > k; m(n_j) is the mean of the subset estimates (this
    is the paper's protocol at batch size n_j). ``curve_`` lists (n, m(n), standard error, subsets);
    ``dimension_`` is d in m(n) = d + c n^(-2/d) fitted by weighted least squares (d on a grid,
    c linear), ``exponent_`` is 2/d, ``ci_`` the bootstrap interval of d over subsets,
    ``bias_`` = m(N) - d, ``dimension_pw_`` the pointwise MLE on all N. The extrapolation needs three
    sizes: on fewer than 4 min_size points, min_size and k are lowered so that N/4 points hold more
    than k neighbours, with a warning (an extrapolation from so few points is a conformance answer,
    not a measurement).
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.seed is None  # random subsets (and bootstrap) unless seeded
        return tags

    def fit(self, X, y=None):
        k, n = resolve_k(self), n_rows(X)
        if n < 4 * max(self.min_size, k + 1) and n >= 12:
            low = n // 4
            changes = {"min_size": low, "k": min(k, low - 1), "n_neighbors": None}
            warnings.warn(
                f"{n} points hold fewer than 3 subset sizes >= min_size = {self.min_size} with k = {k}: "
                f"min_size = {low}, k = {changes['k']}",
                stacklevel=2,
            )
            return _fit_as(self, changes, X)
        return MLEScalingFit.fit(self, X)


class GRIDE(GRIDEFit, IDEstimator):
    """GRIDE at (n1, n2) (n2 defaults to 2 n1), optionally at every scale n1 = 1, 2, 4, ... < range_max.

    Attributes: ``dimension_``, ``error_`` (Fisher), ``ci_`` (likelihood ratio, ci_level),
    ``dimension_pw_`` (one-point MLE of each ratio, n1 = 1, n2 = 2 only: 1 / log mu; else the
    global value), ``n_used_``, ``n_ties_``; with multiscale: ``scales_`` (n1), ``dimension_scales_``,
    ``error_scales_``, ``ci_scales_``, ``radius_scales_``. Other parameters as for MLE.
    """


def sklearn_class(record) -> type:
    """The scikit-learn estimator of a ``registry.Estimator``: the class of this module named
    ``record.sklearn_name``, or, for an estimator that declares none here, its fit class with
    ``IDEstimator``'s interfaces (kept in this module under that name, so it pickles)."""
    cls = globals().get(record.sklearn_name)
    if cls is None:
        doc = record.fit_class.__doc__
        cls = type(record.sklearn_name, (record.fit_class, IDEstimator), {"__doc__": doc, "__module__": __name__})
        globals()[record.sklearn_name] = cls
    return cls
