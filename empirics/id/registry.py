"""The record of one named ID estimator (paper Section 5, "Estimating the ID of text").

Each estimator declares its ``Estimator`` record once, beside its fit class (``core.ESTIMATORS``,
``gride.ESTIMATORS``); ``protocol.ESTIMATORS`` gathers them from every module of the package that
assigns a top-level ``ESTIMATORS = (...)`` (so a new fit module is found without a list), and
``estimate_id``, the scikit-learn estimators (``estimators.sklearn_class``), the CLI's ``--estimator``
help and the tests read them there.
Its parameters, their defaults and their validation are the fit class's own (``__init__`` only stores
them, scikit-learn's rule, so ``inspect.signature`` lists them; ``_n_neighbors_needed`` validates);
the record says which of the protocol's options (k, bootstrap, seed) reach it, what it fixes, and
what a full-protocol result adds. This module imports nothing of the package, so every fit module
can import it.

``PEER_CALLS`` is the one table of the peers' spellings tmcheck accepts (scikit-dimension's and
dadapy's methods and their keyword arguments): each row is a method of a tmcheck class that takes
exactly the keywords listed, each computing the peer's number (tests/empirics/id/test_skdim_interface.py
and test_peer_data.py run every row against the peer where it is installed, and against its
committed numbers everywhere); a method or keyword outside the table is refused in one line
(``PEER_REFUSED`` says why for the peer's spellings that would compute another number).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

PROTOCOL_OPTIONS = ("k", "bootstrap", "seed")  # estimate_id's options passed to the estimators that take them


def bootstrap_interval(est) -> str:
    """The interval of an estimator whose ``ci_`` is a percentile bootstrap over points."""
    return "none" if est.ci_ is None else f"percentile bootstrap over points, {est.bootstrap} resamples"


def no_details(est) -> dict:
    """An estimator whose full-protocol result adds nothing to the dimension and its interval."""
    return {}


@dataclass(frozen=True)
class Estimator:
    """One ID estimator as ``estimate_id`` and ``tmcheck id`` name it."""

    name: str  # the --estimator spelling
    fit_class: type  # its arithmetic (imports no scikit-learn)
    sklearn_name: str  # its scikit-learn estimator in ``estimators`` (built from fit_class when absent there)
    description: str  # one line, stored with the result (id.json's protocol)
    fixed: Mapping = field(default_factory=dict)  # parameters this name fixes, e.g. combine='mean'
    details: Callable[[object], dict] = no_details  # a full-protocol fit's extra result details
    interval: Callable[[object], str] = bootstrap_interval  # how the fitted ci_ was obtained, in words
    help: str = ""  # its entry in --estimator's help (default: the name)

    def options(self) -> tuple[str, ...]:
        """The protocol options (of PROTOCOL_OPTIONS) the fit class takes as parameters."""
        params = inspect.signature(self.fit_class).parameters
        return tuple(o for o in PROTOCOL_OPTIONS if o in params)

    def make(self, **params):
        """The unfitted fit class with ``params`` (the protocol options it does not take dropped) and the
        fixed parameters."""
        taken = self.options()
        given = {n: v for n, v in params.items() if n not in PROTOCOL_OPTIONS or n in taken}
        return self.fit_class(**given, **self.fixed)


def help_text(records) -> str:
    """The --estimator help: each record's entry, in the registry's order."""
    return ", ".join(r.help or r.name for r in records) + "."


SKDIM = "scikit-dimension 0.5.0"
DADAPY = "dadapy 0.3.4"


@dataclass(frozen=True)
class PeerCall:
    """A peer's method that tmcheck's estimator ``owner`` (the peer's class of the same name) accepts."""

    peer: str  # the library and the version its numbers are checked against
    owner: str  # the class, in tmcheck and in the peer
    method: str
    keywords: tuple[str, ...]  # every keyword argument the method takes besides X (and y), as the peer's
    means: str  # what it computes, in tmcheck's words


_PW = ("smooth", "n_neighbors", "n_jobs")  # a global estimator's fit_pw: refit in each point's n_neighbors
PEER_CALLS = (
    PeerCall(SKDIM, "MLE", "fit", ("smooth", "n_neighbors", "comb", "n_jobs"), "k = n_neighbors (20), comb 'mle'"),
    PeerCall(
        SKDIM, "MLE", "fit_transform", ("smooth", "n_neighbors", "comb", "n_jobs"), "fit's ID, comb 'mean' by default"
    ),
    PeerCall(SKDIM, "MLE", "fit_transform_pw", _PW, "the pointwise MLE at k = n_neighbors (20), one fit"),
    PeerCall(SKDIM, "MLE", "transform", (), "the fitted ID"),
    PeerCall(SKDIM, "MLE", "transform_pw", (), "the fitted pointwise IDs (and the smoothed ones)"),
    *(
        row
        for owner in ("TwoNN", "GRIDE")
        for row in (
            PeerCall(SKDIM, owner, "fit", (), "the ID of all points"),
            PeerCall(SKDIM, owner, "fit_transform", (), "fit's ID"),
            PeerCall(SKDIM, owner, "fit_pw", _PW, "the estimator refitted on each point's n_neighbors (100)"),
            PeerCall(SKDIM, owner, "fit_transform_pw", _PW, "fit_pw's pointwise IDs (and the smoothed ones)"),
            PeerCall(SKDIM, owner, "transform", (), "the fitted ID"),
            PeerCall(SKDIM, owner, "transform_pw", (), "the fitted pointwise IDs (and the smoothed ones)"),
        )
    ),
    # dadapy's Data(X) (tmcheck.empirics.id.peer_data.Data)
    PeerCall(DADAPY, "Data", "compute_id_2NN", ("algorithm", "mu_fraction", "set_attr"), "(TwoNN, 0, mean T_1, T_2)"),
    PeerCall(
        DADAPY,
        "Data",
        "return_id_scaling_gride",
        ("range_max", "set_attr", "return_ranks"),
        "(GRIDE at n1 = 1, 2, 4, ..., Fisher errors, mean T_n1, T_n2 or the ranks n2)",
    ),
)
# the peers' spellings refused because they would compute another number, with tmcheck's way instead
PEER_REFUSED = {
    "K": (
        "K is scikit-dimension's neighbourhood size for neighborhood_based=False, which its default ignores "
        "(it uses fit(X, n_neighbors=20)); tmcheck's neighbours per point are k= (or n_neighbors=)"
    ),
    "precomputed_knn": "precomputed_knn: tmcheck finds the exact neighbours itself; leave it out",
    "precomputed_knn_arrays": "precomputed_knn_arrays: tmcheck finds the exact neighbours itself; use fit_distances",
}


def peer_call(owner: str, method: str) -> PeerCall | None:
    """The row of PEER_CALLS for ``owner.method``, or None."""
    return next((c for c in PEER_CALLS if c.owner == owner and c.method == method), None)


def refuse_unlisted(owner: str, method: str) -> None:
    """TypeError in one line unless ``owner.method`` is a row of PEER_CALLS (for the peer-only methods)."""
    if peer_call(owner, method) is None:
        listed = sorted({c.owner for c in PEER_CALLS if c.method == method})
        raise TypeError(
            f"{owner}.{method} is not a scikit-dimension call tmcheck accepts (there {method} is a method of "
            f"{' and '.join(listed)}); pointwise IDs of {owner}: fit(X).dimension_pw_"
        )
