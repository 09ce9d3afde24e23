"""fast_eval: the structured evaluator equals the dense one (exactly) and refuses inputs outside the
domain on which its skipped scores are proven zero."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tmcheck.theory.backends import evaluate, forward
from tmcheck.theory.examples import worked_example
from tmcheck.theory.fast_eval import evaluate_structured, forward_structured
from tmcheck.theory.lemmas.lemma1 import lemma1_network, lemma1_plan
from tmcheck.theory.network import NetworkError, convert
from tmcheck.theory.targets import parse_target


def _net(d, N, text="x0*x1 - x0/3"):
    return lemma1_network(lemma1_plan(parse_target(text, d), 2, 1, 0.5, N=N), "exact")


@pytest.mark.parametrize("d,N", [(2, 2), (3, 2), (1, 5)])
def test_structured_equals_dense_hidden_states_exactly(d, N):
    net = _net(d, N, "x0" if d == 1 else "x0*x1 - x0/3")
    rng = np.random.default_rng(d)
    X = np.array([[Fraction(int(v), 12) for v in row] for row in rng.integers(0, 13, size=(3, d))], dtype=object)
    dense = forward(net, X, "exact")
    fast = forward_structured(net, X, "exact")
    assert (dense == fast).all()  # every entry of every token, not only the output


def test_float_structured_matches_dense_float():
    net = convert(_net(2, 3), "float64")
    X = np.random.default_rng(0).random((20, 2))
    assert np.max(np.abs(evaluate(net, X, "float64") - evaluate_structured(net, X, "float64"))) < 1e-9


def test_outside_certified_domain_is_refused():
    net = _net(2, 2)
    with pytest.raises(NetworkError, match="outside the domain"):
        evaluate_structured(net, np.array([[Fraction(3), Fraction(0)]], dtype=object), "exact")
    with pytest.raises(NetworkError, match="outside the domain"):
        evaluate_structured(convert(net, "float64"), np.array([[0.5, -2.0]]), "float64")


def test_needs_a_pattern():
    with pytest.raises(NetworkError, match="interaction pattern"):
        evaluate_structured(worked_example(), [[Fraction(1, 2), Fraction(3, 2)]])
