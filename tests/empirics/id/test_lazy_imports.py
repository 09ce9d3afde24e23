"""`tmcheck.empirics.id` imports its names on first use (PEP 562), so reading points (``id.io``) costs no
scikit-learn, scipy.stats or torch import: ``tmcheck id estimate`` reads its file in a thread while those
import (#28). Each check is shown to catch its mutation."""

from __future__ import annotations

import ast
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmcheck.empirics.id.protocol import ESTIMATORS

PROBE = "import sys, {mod}; print(sorted(m for m in ('sklearn', 'scipy.stats', 'torch') if m in sys.modules))"


def heavy_after(mod: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(mod=mod)], capture_output=True, text=True, check=True)
    return ast.literal_eval(out.stdout.strip())


def test_reading_points_imports_neither_sklearn_nor_torch():
    assert heavy_after("tmcheck.empirics.id.io") == []


def test_the_probe_sees_an_eager_import():
    """The mutation: a package that imports its estimators at once (as it did) is caught by the probe."""
    assert "sklearn" in heavy_after("tmcheck.empirics.id.estimators")


def test_every_public_name_resolves_and_an_unknown_one_is_refused():
    import tmcheck.empirics.id as pkg

    for name in pkg.__all__:
        assert getattr(pkg, name) is not None
        assert name in dir(pkg)
    from tmcheck.empirics.id.estimators import MLE

    assert pkg.MLE is MLE
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pkg.nope  # noqa: B018


ESTIMATE = (
    "import sys, numpy as np; from tmcheck.empirics.id import estimate_id; "
    "X = np.random.default_rng(0).normal(size=(300, 8)); "
    "[estimate_id(X, estimator=e, bootstrap=20) for e in ('mle', 'twonn', 'gride', 'mle-curve')]; "
    "print(sorted(m for m in ('sklearn', 'scipy.stats') if m in sys.modules))"
)


def test_an_estimate_imports_no_sklearn():
    """``estimate_id`` (what ``tmcheck id estimate`` calls) fits the classes of ``core`` and ``gride``,
    which import no scikit-learn, and on a plain float array skips ``check_array``. (GRIDE's interval
    imports scipy.stats when it runs, so only sklearn is asked about after it.)"""
    for mod in ("tmcheck.empirics.id.core", "tmcheck.empirics.id.gride", "tmcheck.empirics.id.protocol"):
        assert heavy_after(mod) == [], mod
    out = subprocess.run([sys.executable, "-c", ESTIMATE], capture_output=True, text=True, check=True)
    assert "sklearn" not in ast.literal_eval(out.stdout.strip())


def test_the_estimate_probe_sees_check_array():
    """The mutation: input that is not a plain float array goes through scikit-learn's check_array,
    and the probe sees that import."""
    probe = ESTIMATE.replace("normal(size=(300, 8))", "normal(size=(300, 8)).tolist()")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "sklearn" in ast.literal_eval(out.stdout.strip())


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_the_fit_class_and_the_sklearn_estimator_compute_the_same(name):
    from sklearn.base import BaseEstimator

    from tmcheck.empirics.id import estimators, validation_points
    from tmcheck.empirics.id.protocol import make_estimator

    X = validation_points("sphere", 2048, d=4, D=12, seed=1)
    if name == "i3d":  # a lattice estimator: integer points (it refuses real-valued ones)
        X = np.rint(X * 4)
    fit = make_estimator(name, bootstrap=30, seed=3, sklearn=False)
    est = make_estimator(name, bootstrap=30, seed=3)
    record = ESTIMATORS[name]
    assert type(fit) is record.fit_class and type(est) is getattr(estimators, record.sklearn_name)
    assert isinstance(est, type(fit)) and isinstance(est, BaseEstimator) and not isinstance(fit, BaseEstimator)
    fit.fit(X), est.fit(X)
    assert fit.dimension_ == est.dimension_ and fit.ci_ == est.ci_
    assert np.array_equal(fit.dimension_pw_, est.dimension_pw_)


def test_the_comparison_sees_another_number():
    """The mutation: a fit class with other parameters than its estimator computes another number, and the
    comparison above would see it."""
    from tmcheck.empirics.id import validation_points
    from tmcheck.empirics.id.protocol import make_estimator

    X = validation_points("sphere", 2048, d=4, D=12, seed=1)
    assert make_estimator("mle", k=10, sklearn=False).fit(X).dimension_ != make_estimator("mle").fit(X).dimension_


@settings(max_examples=60, deadline=None)
@given(
    shape=st.tuples(st.integers(0, 5), st.integers(0, 4)) | st.tuples(st.integers(0, 5)),
    dtype=st.sampled_from([np.float64, np.float32, np.float16, np.int64, np.complex128, bool]),
    fortran=st.booleans(),
)
def test_plain_points_are_exactly_those_check_array_returns_as_they_are(shape, dtype, fortran):
    """``check_points`` skips scikit-learn's check_array only for input it would return unchanged: the
    same object, for every 2-D float32/float64 array in either memory order; anything else (other
    dtypes, other ranks, empty) still goes through it, with its messages."""
    from sklearn.utils import check_array

    from tmcheck.empirics.id.points import _plain_points

    X = np.ones(shape, dtype=dtype, order="F" if fortran else "C")
    if _plain_points(X):
        out = check_array(X, accept_sparse=False, dtype=None, ensure_all_finite=False, ensure_min_samples=1)
        assert out is X
    else:
        assert X.ndim != 2 or X.size == 0 or X.dtype not in (np.float32, np.float64)


def test_a_subclass_or_a_list_is_not_plain():
    """The mutation: np.matrix (which check_array converts) and nested lists must not take the fast path."""
    from tmcheck.empirics.id.points import _plain_points

    assert _plain_points(np.zeros((2, 2)))
    assert not _plain_points(np.asmatrix(np.zeros((2, 2))))
    assert not _plain_points([[0.0, 1.0], [1.0, 0.0]])
