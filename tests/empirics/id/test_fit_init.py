"""fit_init: one declaration of a fit class's parameters, read by scikit-learn as a written-out __init__."""

import inspect

import pytest
from sklearn.base import clone

from tmcheck.empirics.id.core import FIT_TAIL, fit_init
from tmcheck.empirics.id.estimators import GRIDE, MLE, MLEScaling, TwoNN
from tmcheck.empirics.id.lpca import lPCAFit


def _names(cls):
    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


def test_signatures_are_lead_tail_after():
    assert _names(MLE) == ["k", "combine", *FIT_TAIL, "n_neighbors", "K"]
    assert _names(TwoNN) == ["method", "discard_fraction", *FIT_TAIL]
    assert _names(GRIDE) == ["n1", "n2", "multiscale", "range_max", "ci_level", "duplicates", "rtol", "device"]
    assert MLEScaling().get_params()["bootstrap"] == 200 and MLEScaling().seed == 0
    assert lPCAFit().duplicates == "keep" and MLE().duplicates == "remove"


def test_binds_positional_and_keyword_and_stores_as_given():
    est = MLE(7, "mean", seed=3)
    assert (est.k, est.combine, est.seed, est.K) == (7, "mean", 3, None)
    assert clone(est).get_params() == est.get_params()
    obj = object()
    assert TwoNN(method=obj).method is obj  # stored as given, not copied or checked


@pytest.mark.parametrize(
    "call",
    [
        lambda: MLE(kk=3),  # an unknown name
        lambda: TwoNN("linear", 0.1, 0, 0.95, "remove", None, "auto", None, "extra"),  # too many
        lambda: MLE(5, k=5),  # one parameter twice
    ],
)
def test_refuses_what_a_written_init_refuses(call):
    with pytest.raises(TypeError):
        call()


def test_declaration_errors():
    with pytest.raises(TypeError, match="not in FIT_TAIL"):
        fit_init({"k": 1}, drop=("bootstraps",))
    with pytest.raises(TypeError, match="not in FIT_TAIL"):
        fit_init({"k": 1}, seeds=1)


def test_mutant_without_signature_is_seen_by_sklearn():
    """The check above can fail: an __init__ without __signature__ exposes no parameters to scikit-learn."""
    init = fit_init({"k": 1})
    del init.__signature__

    class Bare(MLE):
        __init__ = init

    with pytest.raises(RuntimeError, match="varargs"):
        Bare().get_params()
