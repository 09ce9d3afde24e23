"""Column expressions of `tmcheck fit` (--derive, --where): sympy from a checked AST, never eval."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmcheck.empirics.fit import columns as fit_expr

COLS = {
    "Model Size": np.array([1e8, 2e8, 4e8]),
    "Training FLOP": np.array([6e18, 2.4e19, 9.6e19]),
    "loss": np.array([3.0, 2.5, 2.0]),
}


def test_chinchilla_tokens_through_aliases():
    name, D, used = fit_expr.derive("D=C/(6*N)", COLS)
    assert name == "D" and used == {"C": "Training FLOP", "N": "Model Size"}
    np.testing.assert_allclose(D, COLS["Training FLOP"] / (6 * COLS["Model Size"]))


def test_filters_and_functions():
    mask, _ = fit_expr.where("loss < 3 and not N > 3e8", COLS)
    assert mask.tolist() == [False, True, False]
    assert fit_expr.where("2 <= loss <= 2.5", COLS)[0].tolist() == [False, True, True]
    v, _ = fit_expr.evaluate("log(loss) + sqrt(abs(-4)) + exp(0) - loss**2", COLS)
    np.testing.assert_allclose(v, np.log(COLS["loss"]) + 3 - COLS["loss"] ** 2)


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "loss.real",
        "loss[0]",
        "(lambda: 1)()",
        "'a'",
        "open('x')",
        "loss if 1 else 2",
        "[loss]",
        "loss @ loss",
        "f(loss)",
        "getattr(loss, 'x')",
        "log(loss, 2)",
        "True",
    ],
)
def test_unsafe_or_unknown_syntax_is_refused(text):
    with pytest.raises(ValueError, match="not allowed"):
        fit_expr.evaluate(text, COLS)


# why kept: a table of bad inputs, one case a row: the shape of other such tables, other data
@pytest.mark.parametrize(
    "spec,message",
    [
        ("D", "NAME=EXPRESSION"),
        ("=C/N", "NAME=EXPRESSION"),
        ("1D=C", "NAME=EXPRESSION"),
        ("D=q+1", "no column 'q'"),
        ("D=C/(", "cannot parse"),
    ],
)
def test_bad_derive(spec, message):
    with pytest.raises(ValueError, match=message):
        fit_expr.derive(spec, COLS)


def test_ambiguous_alias_is_refused():
    with pytest.raises(ValueError, match="no column 'N'"):
        fit_expr.evaluate("N", {"params": np.ones(2), "parameters": np.ones(2)})


@settings(max_examples=40, deadline=None)
@given(a=st.floats(-100, 100), b=st.floats(0.5, 100), c=st.integers(1, 4))
def test_arithmetic_matches_numpy(a, b, c):
    cols = {"x": np.array([1.0, 2.0, 3.5]), "y": np.array([0.5, 4.0, 2.0])}
    v, _ = fit_expr.evaluate(f"({a}) * x / ({b}) + y ** {c} - -x", cols)
    np.testing.assert_allclose(v, a * cols["x"] / b + cols["y"] ** c + cols["x"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "name,label",
    [
        ("N", "model size N (parameters)"),
        ("Model Size", "model size N (parameters)"),  # an alias reads as its field
        ("tokens", "training data D (tokens)"),
        ("Training FLOP", "training compute C (FLOP)"),
        ("test_loss", "test loss (nats per token)"),
        ("Test_Loss", "test loss (nats per token)"),
        ("n", "training-set size n (samples or tokens)"),
        ("my_metric", "my_metric"),  # unknown: its own name
    ],
)
def test_axis_label_gives_meaning_and_unit(name, label):
    assert fit_expr.axis_label(name) == label


def test_axis_label_keeps_case_where_case_is_meaning():
    """n (samples) and N (parameters) differ only in case: a lowered lookup would confuse them."""
    assert fit_expr.axis_label("n") != fit_expr.axis_label("N")
