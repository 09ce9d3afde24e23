"""Intrinsic-dimension estimation (paper Section 5, "Estimating the ID of text").

Public API (stable; used by the pretraining part):

    from tmcheck.empirics.id import MLE, MLECurve, TwoNN, GRIDE, MLEScaling, estimate_id, IDResult, validation_points

- ``MLE``, ``MLECurve``, ``TwoNN``, ``GRIDE``, ``MLEScaling``: scikit-learn estimators (``BaseEstimator``
  subclasses, in ``estimators``; what they compute is in ``core`` and ``gride``, which import no
  scikit-learn). Units never matter and duplicates are counted by a scale-invariant rule (see ``points``).
- ``estimate_id(X, estimator='mle', k=20, protocol='full'|'paper', ...) -> IDResult``: one call
  with a named protocol; ``protocol='paper'`` is the paper's (K = 20, random disjoint batches of
  4096, mean of the batch estimates).
- ``validation_points``: the synthetic validation set with known dimension.
- ``load_points``: points from .npy, .pt or .safetensors.
"""

# Each name is imported from its module on first use (PEP 562), so that importing one submodule, e.g.
# ``io`` to read points, does not import scikit-learn and scipy.stats (0.8 s): ``tmcheck id estimate``
# reads its file in a thread while torch imports, and ``estimate_id`` needs neither (#28).
_HOME = {
    "MLE": "estimators",
    "MLECurve": "estimators",
    "MLEScaling": "estimators",
    "TwoNN": "estimators",
    "GRIDE": "estimators",
    "ESTIMATORS": "protocol",
    "PROTOCOLS": "protocol",
    "IDResult": "protocol",
    "estimate_id": "protocol",
    "load_points": "io",
    "VALIDATION_SETS": "validation",
    "validation_points": "validation",
}


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOME))


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
