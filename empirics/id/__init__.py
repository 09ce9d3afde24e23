"""Intrinsic-dimension estimation (paper Section 5, "Estimating the ID of text").

Public API (stable; used by the pretraining part):

    from tmcheck.empirics.id import MLE, MLECurve, TwoNN, GRIDE, MLEScaling, estimate_id, IDResult, validation_points

- ``MLE``, ``MLECurve``, ``TwoNN``, ``GRIDE``, ``MLEScaling``: scikit-learn estimators (``BaseEstimator``
  subclasses; see ``estimators`` and ``gride``). Units never matter and duplicates are counted by a
  scale-invariant rule (see ``_points``).
- ``estimate_id(X, estimator='mle', k=20, protocol='full'|'paper', ...) -> IDResult``: one call
  with a named protocol; ``protocol='paper'`` is the paper's (K = 20, random disjoint batches of
  4096, mean of the batch estimates).
- ``validation_points``: the synthetic validation set with known dimension.
- ``load_points``: points from .npy, .pt or .safetensors.
"""

from tmcheck.empirics.id.estimators import MLE, MLECurve, MLEScaling, TwoNN
from tmcheck.empirics.id.gride import GRIDE
from tmcheck.empirics.id.protocol import ESTIMATORS, PROTOCOLS, IDResult, estimate_id
from tmcheck.empirics.id.io import load_points
from tmcheck.empirics.id.validation import VALIDATION_SETS, validation_points

__all__ = [
    "MLE",
    "MLECurve",
    "TwoNN",
    "GRIDE",
    "MLEScaling",
    "estimate_id",
    "IDResult",
    "ESTIMATORS",
    "PROTOCOLS",
    "load_points",
    "validation_points",
    "VALIDATION_SETS",
]
