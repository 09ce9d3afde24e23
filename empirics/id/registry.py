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
    peers: Mapping = field(default_factory=dict)  # scikit-dimension / dadapy spelling -> what it means here
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
