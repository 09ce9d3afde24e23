"""dadapy's ``Data(X)`` calls for TwoNN and GRIDE, computed by tmcheck's estimators on the exact kNN
(paper Section 5, "Estimating the ID of text").

    from tmcheck.empirics.id.peer_data import Data

    Data(X).compute_id_2NN()               # (id, id_err, scale), dadapy 0.3.4's numbers
    Data(X).return_id_scaling_gride()      # (ids, errors, scales) at n1 = 1, 2, 4, ... (n2 = 2 n1)

A researcher's dadapy code runs unchanged where it uses these two calls, and each keyword computes
what it computes in dadapy (the rows of ``registry.PEER_CALLS``; tests/empirics/id/test_peer_data.py
compares each with dadapy where it is installed and with its committed numbers everywhere). What
would compute another number is refused in one line: ``data_fraction`` and ``n_iter`` (dadapy draws
the subsets with its own generator), ``mu_fraction`` with ``algorithm='ml'`` (dadapy's 'ml' uses every
ratio whatever ``mu_fraction`` says; tmcheck's censored MLE is ``TwoNN(method='mle')``), GRIDE's
``d0``, ``d1`` and ``eps`` (dadapy's root search; tmcheck solves the likelihood to machine precision).
Unlike dadapy, duplicated rows are removed first (with a warning), where dadapy returns inf or nan.

- ``compute_id_2NN``: mu = T_2 / T_1; 'base' fits -log(1 - F(mu)) = d log mu through the origin on the
  smallest ``mu_fraction`` of the ratios (``TwoNN(method='linear')``); 'ml' (and 'base' at
  mu_fraction = 1, as dadapy switches) is (N - 1) / sum log mu; the scale is the mean of T_1 and T_2.
- ``return_id_scaling_gride``: GRIDE at n1 = 2^j, n2 = 2^(j+1) up to the largest power of two
  min(N, range_max) holds, with dadapy's count of scales (``int(math.log(max_rank, 2))``); the scales
  are the mean of T_n1 and T_n2 (or the ranks n2 with ``return_ranks``).
"""

from __future__ import annotations

import math

import numpy as np

from tmcheck.empirics.id.core import TwoNNFit
from tmcheck.empirics.id.gride import GRIDEFit
from tmcheck.empirics.id.points import prepare


class Data:
    """The points of dadapy's ``Data(coordinates=X)``, for its TwoNN and GRIDE calls."""

    def __init__(self, coordinates):
        self.X = coordinates
        self.intrinsic_dim = self.intrinsic_dim_err = self.intrinsic_dim_scale = self.intrinsic_dim_mus = None

    def compute_id_2NN(self, algorithm: str = "base", mu_fraction: float | None = None, set_attr: bool = True):
        """(id, id_err, scale): dadapy's 2NN on all points (id_err is 0, as dadapy's without decimation)."""
        if algorithm not in ("base", "ml"):
            raise ValueError(f"algorithm must be 'base' or 'ml' (dadapy's), got {algorithm!r}")
        if algorithm == "ml" and mu_fraction is not None and not math.isclose(mu_fraction, 1.0):
            raise ValueError(
                "dadapy's algorithm='ml' uses every ratio whatever mu_fraction says; "
                "tmcheck's censored MLE is TwoNN(method='mle', discard_fraction=...)"
            )
        fraction = 0.9 if mu_fraction is None else mu_fraction
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"mu_fraction must be in (0, 1] (dadapy's), got {fraction}")
        if math.isclose(fraction, 1.0):  # dadapy's switch: the linear fit would need F = 1
            algorithm = "ml"
        T = prepare(self.X, 2).neighbors.distances  # (N, 2), self excluded
        fit = (
            TwoNNFit(method="mle", discard_fraction=0.0)
            if algorithm == "ml"
            else TwoNNFit(method="linear", discard_fraction=1.0 - fraction)
        ).fit_distances(T)
        result = (fit.dimension_, 0.0, float(np.mean(T[:, :2])))
        if set_attr:
            self.intrinsic_dim, self.intrinsic_dim_err, self.intrinsic_dim_scale = result
            self.intrinsic_dim_mus = T[:, 1] / T[:, 0]
        return result

    def return_id_scaling_gride(self, range_max: int = 64, set_attr: bool = False, return_ranks: bool = False):
        """(ids, errors, scales) of GRIDE at n1 = 1, 2, 4, ... (n2 = 2 n1), as dadapy's."""
        n = len(self.X)
        if isinstance(range_max, bool) or not isinstance(range_max, (int, np.integer)) or range_max < 2:
            raise ValueError(f"range_max must be an integer >= 2, got {range_max!r}")
        max_step = int(math.log(min(n, int(range_max)), 2))  # dadapy's count of scales, its rounding included
        if max_step < 1 or 2**max_step >= n:
            raise ValueError(f"range_max = {range_max} on {n} points leaves no scale with n2 < N")
        est = GRIDEFit(multiscale=True, range_max=2**max_step)
        p = prepare(self.X, est._n_neighbors_needed())
        est.fit_distances(p.neighbors.distances)
        ids, errors = est.dimension_scales_, est.error_scales_
        scales = 2 * est.scales_ if return_ranks else est.radius_scales_
        if set_attr:
            self.intrinsic_dim_gride, self.intrinsic_dim_err_gride = ids, errors
            self.intrinsic_dim_scale_gride = est.radius_scales_
        return ids, errors, scales
