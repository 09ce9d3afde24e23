"""Intrinsic-dimension estimation (paper Section 5, "Estimating the ID of text").

Public API (stable; used by the pretraining part):

    from tmcheck.empirics.id import MLE, MLECurve, TwoNN, GRIDE, MLEScaling, estimate_id, IDResult, validation_points

- ``MLE``, ``MLECurve``, ``TwoNN``, ``GRIDE``, ``MLEScaling``, ``MOM``, ``TLE``, ``lPCA``, ``MADA``, ``ESS``,
  ``CorrInt``, ``KNN``, ``DANCo``, ``I3D``: scikit-learn estimators (``BaseEstimator`` subclasses,
  ``estimators.sklearn_class`` of their records; what they compute is in ``core``, ``gride``, ``local``,
  ``lpca``, ``mada``, ``ess``, ``corrint``, ``knn_est``, ``danco`` and ``discrete``, which import no
  scikit-learn). Units never
  matter and duplicates are counted by a scale-invariant rule (see ``points``).
- ``estimate_id(X, estimator='mle', k=20, protocol='full'|'paper', ...) -> IDResult``: one call
  with a named protocol; ``protocol='paper'`` is the paper's (K = 20, random disjoint batches of
  4096, mean of the batch estimates).
- ``validation_points``: the synthetic validation set with known dimension.
- ``load_points``: points from .npy, .pt or .safetensors.
- ``Data``: dadapy's ``Data(X).compute_id_2NN()`` and ``return_id_scaling_gride()`` (``peer_data``).
"""

# Each name is imported from its module on first use (PEP 562), so that importing one submodule, e.g.
# ``io`` to read points, does not import scikit-learn and scipy.stats (0.8 s): ``tmcheck id estimate``
# reads its file in a thread while torch imports, and ``estimate_id`` needs neither (#28).
_HOME = {
    "ESTIMATORS": "protocol",
    "PROTOCOLS": "protocol",
    "IDResult": "protocol",
    "estimate_id": "protocol",
    "load_points": "io",
    "VALIDATION_SETS": "validation",
    "validation_points": "validation",
    "Data": "peer_data",
}
# the scikit-learn estimators, each ``estimators.sklearn_class`` of the record that names it (those from MOM
# on are built there from their fit classes; the others are declared in ``estimators``)
_SKLEARN = (
    "MLE",
    "MLECurve",
    "TwoNN",
    "GRIDE",
    "MLEScaling",
    "MOM",
    "TLE",
    "lPCA",
    "MADA",
    "ESS",
    "CorrInt",
    "KNN",
    "DANCo",
    "I3D",
)


def __getattr__(name: str):
    if name in _SKLEARN:
        from tmcheck.empirics.id.estimators import sklearn_class
        from tmcheck.empirics.id.protocol import ESTIMATORS

        value = sklearn_class(next(r for r in ESTIMATORS.values() if r.sklearn_name == name))
    elif name in _HOME:
        import importlib

        value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOME) | set(_SKLEARN))


__all__ = [
    *_SKLEARN,
    "Data",
    "estimate_id",
    "IDResult",
    "ESTIMATORS",
    "PROTOCOLS",
    "load_points",
    "validation_points",
    "VALIDATION_SETS",
]
