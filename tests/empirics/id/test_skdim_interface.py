"""Every scikit-dimension spelling tmcheck accepts computes what it computes in scikit-dimension, on the
same points, to 1e-9; the others are refused in one line naming tmcheck's spelling.

The spellings are the rows of ``registry.PEER_CALLS`` (one table): the signatures of tmcheck's methods
are checked against it, every (class, method, keyword) of it is called by a case of CASES, and each case
is compared with scikit-dimension 0.5.0 where it is installed (the beside-anchors stage of CI) and,
everywhere, with scikit-dimension's numbers committed in skdim_values.json (written by
`python tests/empirics/id/test_skdim_interface.py write` in a venv with scikit-dimension; the
beside-anchors stage also checks that file against the installed scikit-dimension).
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from tmcheck.empirics.id import GRIDE, MLE, MLECurve, MLEScaling, TwoNN
from tmcheck.empirics.id.registry import PEER_CALLS, PEER_REFUSED, SKDIM

X = np.random.default_rng(0).standard_normal((500, 5)) @ np.random.default_rng(1).standard_normal((5, 12))
VALUES = Path(__file__).with_name("skdim_values.json")
OURS = {"MLE": MLE, "TwoNN": TwoNN, "GRIDE": GRIDE}
ROWS = [r for r in PEER_CALLS if r.peer == SKDIM]  # dadapy's rows: test_peer_data.py

# spelling -> (the class, in both libraries, and the call); the docs' peers guide lists these keys
CASES = {
    "MLE().fit(X)": ("MLE", lambda e: e.fit(X).dimension_),
    "MLE().fit(X, n_neighbors=10)": ("MLE", lambda e: e.fit(X, n_neighbors=10).dimension_),
    "MLE().fit(X, comb='mean')": ("MLE", lambda e: e.fit(X, comb="mean").dimension_),
    "MLE().fit(X, comb='median')": ("MLE", lambda e: e.fit(X, comb="median").dimension_),
    "MLE().fit(X, n_jobs=1).dimension_pw_": ("MLE", lambda e: e.fit(X, n_jobs=1).dimension_pw_),
    "MLE().fit(X, smooth=True)": ("MLE", lambda e: e.fit(X, smooth=True).dimension_pw_smooth_),
    "MLE().fit_transform(X)": ("MLE", lambda e: e.fit_transform(X)),
    "MLE().fit_transform(X, comb='mle')": ("MLE", lambda e: e.fit_transform(X, comb="mle")),
    "MLE().fit_transform(X, n_neighbors=10, smooth=True, n_jobs=1)": (
        "MLE",
        lambda e: e.fit_transform(X, n_neighbors=10, smooth=True, n_jobs=1),
    ),
    "MLE().fit_transform_pw(X)": ("MLE", lambda e: e.fit_transform_pw(X)),
    "MLE().fit_transform_pw(X, n_neighbors=50)": ("MLE", lambda e: e.fit_transform_pw(X, n_neighbors=50)),
    "MLE().fit_transform_pw(X, smooth=True, n_jobs=1)": (
        "MLE",
        lambda e: e.fit_transform_pw(X, smooth=True, n_jobs=1),
    ),
    "MLE().fit(X).transform()": ("MLE", lambda e: e.fit(X).transform()),
    "MLE().fit(X, n_neighbors=30).transform_pw()": ("MLE", lambda e: e.fit(X, n_neighbors=30).transform_pw()),
    "TwoNN().fit(X)": ("TwoNN", lambda e: e.fit(X).dimension_),
    "TwoNN().fit_transform(X)": ("TwoNN", lambda e: e.fit_transform(X)),
    "TwoNN().fit(X).transform(X)": ("TwoNN", lambda e: e.fit(X).transform(X)),
    "TwoNN().fit_pw(X)": ("TwoNN", lambda e: e.fit_pw(X).dimension_pw_),
    "TwoNN().fit_pw(X, n_neighbors=40, smooth=True)": (
        "TwoNN",
        lambda e: e.fit_pw(X, n_neighbors=40, smooth=True).dimension_pw_smooth_,
    ),
    "TwoNN().fit_pw(X, n_neighbors=40, n_jobs=1).transform_pw()": (
        "TwoNN",
        lambda e: e.fit_pw(X, n_neighbors=40, n_jobs=1).transform_pw(),
    ),
    "TwoNN().fit_transform_pw(X, n_neighbors=40)": ("TwoNN", lambda e: e.fit_transform_pw(X, n_neighbors=40)),
    "TwoNN().fit_transform_pw(X, n_neighbors=40, smooth=True, n_jobs=1)": (
        "TwoNN",
        lambda e: e.fit_transform_pw(X, n_neighbors=40, smooth=True, n_jobs=1),
    ),
    "GRIDE().fit(X)": ("GRIDE", lambda e: e.fit(X).dimension_),
    "GRIDE().fit_transform(X)": ("GRIDE", lambda e: e.fit_transform(X)),
    "GRIDE().fit(X).transform()": ("GRIDE", lambda e: e.fit(X).transform()),
    "GRIDE().fit_pw(X, n_neighbors=80)": ("GRIDE", lambda e: e.fit_pw(X, n_neighbors=80).dimension_pw_),
    "GRIDE().fit_pw(X, n_neighbors=40, smooth=True, n_jobs=1).transform_pw()": (
        "GRIDE",
        lambda e: e.fit_pw(X, n_neighbors=40, smooth=True, n_jobs=1).transform_pw(),
    ),
    "GRIDE().fit_transform_pw(X, n_neighbors=40, smooth=True, n_jobs=1)": (
        "GRIDE",
        lambda e: e.fit_transform_pw(X, n_neighbors=40, smooth=True, n_jobs=1),
    ),
}


def run(case: str, cls) -> np.ndarray:
    """The case's call on a fresh ``cls()``, warnings silenced, as one flat float array."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.ravel(np.asarray(CASES[case][1](cls()), dtype=np.float64))


def summary(values: np.ndarray) -> list[float]:
    """What skdim_values.json keeps of a result: its size, mean, min, max and first three values."""
    return [float(len(values)), float(values.mean()), float(values.min()), float(values.max()), *values[:3].tolist()]


def called(case: str) -> set[tuple[str, str, str | None]]:
    """(class, method, keyword or None) of every call in a case's spelling."""
    out, owner = set(), case.split("(")[0]
    for node in ast.walk(ast.parse(case)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            out.add((owner, node.func.attr, None))
            out |= {(owner, node.func.attr, kw.arg) for kw in node.keywords}
    return out


def test_the_table_is_what_the_methods_take():
    """Each row's keywords are exactly its method's parameters (besides X, y and the refused ones)."""
    for row in ROWS:
        params = set(inspect.signature(getattr(OURS[row.owner], row.method)).parameters) - {"self", "X", "y"}
        assert params - set(PEER_REFUSED) == set(row.keywords), (row.owner, row.method)


def test_every_row_of_the_table_is_called_by_a_case():
    covered = set().union(*(called(c) for c in CASES))
    needed = {(r.owner, r.method, None) for r in ROWS} | {(r.owner, r.method, kw) for r in ROWS for kw in r.keywords}
    assert needed <= covered, sorted(needed - covered)


@pytest.mark.parametrize("case", CASES)
def test_each_spelling_gives_scikit_dimensions_committed_number(case):
    want = json.loads(VALUES.read_text())[case]
    np.testing.assert_allclose(summary(run(case, OURS[CASES[case][0]])), want, rtol=0, atol=1e-9)


def test_the_committed_numbers_catch_an_ignored_n_neighbors():
    """The issue's case: fit_transform_pw(X, n_neighbors=50) once returned the k = 20 answer."""
    want = json.loads(VALUES.read_text())["MLE().fit_transform_pw(X, n_neighbors=50)"]
    k20 = summary(np.ravel(MLE(k=20).fit(X).dimension_pw_))
    assert np.abs(np.subtract(k20, want)).max() > 0.1
    np.testing.assert_allclose(summary(np.ravel(MLE(k=50).fit(X).dimension_pw_)), want, rtol=0, atol=1e-9)


def test_refused_spellings_name_tmchecks():
    with pytest.raises(ValueError, match=r"K is scikit-dimension's .* k= \(or n_neighbors=\)"):
        MLE(K=5).fit(X)
    with pytest.raises(ValueError, match="comb must be one of mle, mean, median"):
        MLE().fit(X, comb="harmonic")
    with pytest.raises(ValueError, match="precomputed_knn: tmcheck finds the exact neighbours itself"):
        TwoNN().fit_pw(X, precomputed_knn=np.zeros((500, 100), int))
    with pytest.raises(ValueError, match="precomputed_knn_arrays: .* use fit_distances"):
        MLE().fit(X, precomputed_knn_arrays=(None, None))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: MLE().fit_pw(X, n_neighbors=50), "MLE.fit_pw is not a scikit-dimension call"),
        (lambda: MLECurve().fit_transform_pw(X), "MLECurve.fit_transform_pw is not a scikit-dimension call"),
        (lambda: MLEScaling().fit_pw(X), "MLEScaling.fit_pw is not a scikit-dimension call"),
        (lambda: MLE().fit_transform_pw(X, comb="mean"), "unexpected keyword argument 'comb'"),
        (lambda: TwoNN().fit(X, smooth=True), "unexpected keyword argument 'smooth'"),
        (lambda: GRIDE().fit_transform(X, n_neighbors=10), "unexpected keyword argument 'n_neighbors'"),
    ],
)
def test_a_spelling_outside_the_table_is_refused_in_one_line(call, message):
    # before: MLE().fit_pw(X, n_neighbors=50) and fit_transform_pw(X, n_neighbors=50) returned k = 20's answer
    with pytest.raises(TypeError, match=message) as caught:
        call()
    assert len(str(caught.value).splitlines()) == 1


def write() -> None:
    """skdim_values.json from the installed scikit-dimension (run it where scikit-dimension is installed)."""
    import skdim

    VALUES.write_text(json.dumps({c: summary(run(c, getattr(skdim.id, CASES[c][0]))) for c in CASES}, indent=1) + "\n")


if __name__ == "__main__" and sys.argv[1:] == ["write"]:
    write()


try:  # the tests below need scikit-dimension; those above run everywhere
    import skdim
except ImportError:
    skdim = None
needs_skdim = pytest.mark.skipif(
    skdim is None, reason="scikit-dimension is not installed (the beside-anchors CI stage has it)"
)


@needs_skdim
@pytest.mark.parametrize("case", CASES)
def test_each_accepted_spelling_means_what_it_means_in_scikit_dimension(case):
    name = CASES[case][0]
    np.testing.assert_allclose(run(case, OURS[name]), run(case, getattr(skdim.id, name)), rtol=0, atol=1e-9)


@needs_skdim
def test_the_committed_numbers_are_scikit_dimensions():
    committed = json.loads(VALUES.read_text())
    assert set(committed) == set(CASES)
    for case, (name, _) in CASES.items():
        np.testing.assert_allclose(summary(run(case, getattr(skdim.id, name))), committed[case], rtol=0, atol=1e-9)


@needs_skdim
def test_the_table_takes_what_scikit_dimension_takes():
    """Each row's keywords are the peer method's parameters, less the refused ones (precomputed kNN)."""
    for row in ROWS:
        theirs = set(inspect.signature(getattr(getattr(skdim.id, row.owner), row.method)).parameters)
        assert theirs - {"self", "X", "y"} - set(PEER_REFUSED) == set(row.keywords), (row.owner, row.method)


@needs_skdim
def test_the_parity_check_can_fail():
    theirs = run("TwoNN().fit_transform_pw(X, n_neighbors=40)", skdim.id.TwoNN)
    one_point = TwoNN().fit(X).dimension_pw_  # the old meaning of fit_pw: one-point values
    assert np.abs(one_point - theirs).max() > 1.0
