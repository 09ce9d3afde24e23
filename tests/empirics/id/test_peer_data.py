"""dadapy's Data(X).compute_id_2NN() and return_id_scaling_gride() in tmcheck (peer_data.Data) compute
dadapy 0.3.4's numbers: every keyword of their rows of ``registry.PEER_CALLS`` is called by a case,
each case is compared with dadapy where it is installed (CI's beside-anchors stage) and, everywhere,
with dadapy's numbers committed in dadapy_values.json (written by
`python tests/empirics/id/test_peer_data.py write` in a venv with dadapy). 2NN agrees to 1e-9 (dadapy
fits with scipy's curve_fit); GRIDE to 1e-7, the precision of dadapy's root search (eps = 1e-7; tmcheck
solves the likelihood to machine precision), its Fisher errors and scales to 1e-9."""

from __future__ import annotations

import ast
import inspect
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from tmcheck.empirics.id.peer_data import Data
from tmcheck.empirics.id.registry import DADAPY, PEER_CALLS

X = np.random.default_rng(0).standard_normal((500, 5)) @ np.random.default_rng(1).standard_normal((5, 12))
VALUES = Path(__file__).with_name("dadapy_values.json")
ROWS = [r for r in PEER_CALLS if r.peer == DADAPY]
TOL = {"compute_id_2NN": (1e-9, 1e-9, 1e-9), "return_id_scaling_gride": (1e-7, 1e-9, 1e-9)}

CASES = {  # spelling -> its call on a Data object (ours or dadapy's)
    "Data(X).compute_id_2NN()": lambda d: d.compute_id_2NN(),
    "Data(X).compute_id_2NN(algorithm='ml')": lambda d: d.compute_id_2NN(algorithm="ml"),
    "Data(X).compute_id_2NN(mu_fraction=0.8, set_attr=False)": lambda d: d.compute_id_2NN(
        mu_fraction=0.8, set_attr=False
    ),
    "Data(X).compute_id_2NN(mu_fraction=1.0)": lambda d: d.compute_id_2NN(mu_fraction=1.0),
    "Data(X).return_id_scaling_gride()": lambda d: d.return_id_scaling_gride(),
    "Data(X).return_id_scaling_gride(range_max=100, set_attr=True)": lambda d: d.return_id_scaling_gride(
        range_max=100, set_attr=True
    ),
    "Data(X).return_id_scaling_gride(range_max=8, return_ranks=True)": lambda d: d.return_id_scaling_gride(
        range_max=8, return_ranks=True
    ),
}


def run(case: str, make) -> list[list[float]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [np.atleast_1d(np.asarray(v, dtype=np.float64)).tolist() for v in CASES[case](make(X))]


def _close(case: str, got, want) -> None:
    method = ast.parse(case).body[0].value.func.attr
    for g, w, tol in zip(got, want, TOL[method], strict=True):
        np.testing.assert_allclose(g, w, rtol=0, atol=tol, err_msg=case)


def test_the_table_is_what_the_methods_take():
    for row in ROWS:
        params = set(inspect.signature(getattr(Data, row.method)).parameters) - {"self"}
        assert params == set(row.keywords), row.method


def test_every_row_and_keyword_is_called_by_a_case():
    covered = set()
    for case in CASES:
        call = ast.parse(case).body[0].value
        covered |= {(call.func.attr, None)} | {(call.func.attr, kw.arg) for kw in call.keywords}
    needed = {(r.method, None) for r in ROWS} | {(r.method, kw) for r in ROWS for kw in r.keywords}
    assert needed <= covered, sorted(needed - covered)


@pytest.mark.parametrize("case", CASES)
def test_each_call_gives_dadapys_committed_numbers(case):
    _close(case, run(case, Data), json.loads(VALUES.read_text())[case])


def test_set_attr_keeps_what_dadapy_keeps():
    d = Data(X)
    ids, _, scales = d.compute_id_2NN()
    assert d.intrinsic_dim == ids and d.intrinsic_dim_scale == scales and len(d.intrinsic_dim_mus) == len(X)
    d.return_id_scaling_gride(set_attr=True)
    assert len(d.intrinsic_dim_gride) == 6


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda d: d.compute_id_2NN(algorithm="ml", mu_fraction=0.9), "uses every ratio whatever mu_fraction"),
        (lambda d: d.compute_id_2NN(algorithm="gride"), "algorithm must be 'base' or 'ml'"),
        (lambda d: d.compute_id_2NN(mu_fraction=0), r"mu_fraction must be in \(0, 1\]"),
        (lambda d: d.compute_id_2NN(data_fraction=0.5), "unexpected keyword argument 'data_fraction'"),
        (lambda d: d.return_id_scaling_gride(eps=1e-3), "unexpected keyword argument 'eps'"),
        (lambda d: d.return_id_scaling_gride(range_max=1), "range_max must be an integer >= 2"),
    ],
)
def test_what_would_compute_another_number_is_refused_in_one_line(call, message):
    with pytest.raises((ValueError, TypeError), match=message) as caught:
        call(Data(X))
    assert len(str(caught.value).splitlines()) == 1


def write() -> None:
    """dadapy_values.json from the installed dadapy (run it where dadapy is installed)."""
    from dadapy import Data as Theirs

    VALUES.write_text(json.dumps({c: run(c, lambda x: Theirs(coordinates=x, verbose=False)) for c in CASES}) + "\n")


if __name__ == "__main__" and sys.argv[1:] == ["write"]:
    write()

try:  # the tests below need dadapy (it pins numpy < 2); those above run everywhere
    from dadapy import Data as Theirs
except ImportError:
    Theirs = None


@pytest.mark.skipif(Theirs is None, reason="dadapy is not installed (the beside-anchors CI stage has it)")
@pytest.mark.parametrize("case", CASES)
def test_each_call_is_dadapys(case):
    theirs = run(case, lambda x: Theirs(coordinates=x, verbose=False))
    _close(case, run(case, Data), theirs)
    _close(case, json.loads(VALUES.read_text())[case], theirs)  # the committed numbers are dadapy's


@pytest.mark.skipif(Theirs is None, reason="dadapy is not installed (the beside-anchors CI stage has it)")
def test_the_comparison_can_fail():
    theirs = run("Data(X).compute_id_2NN()", lambda x: Theirs(coordinates=x, verbose=False))
    censored = run("Data(X).compute_id_2NN(algorithm='ml')", Data)  # another algorithm's number
    with pytest.raises(AssertionError):
        _close("Data(X).compute_id_2NN()", censored, theirs)
