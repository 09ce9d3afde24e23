"""tmcheck.util.jsonable.plain, the one JSON normaliser: known answers, and for any nesting of the
values it meets, output that json.dumps takes (with allow_nan=False) and that is unchanged by a second pass."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tmcheck.util.jsonable import plain


def test_known_answers():
    assert plain(Fraction(3, 4)) == "3/4"
    assert plain({1: (Fraction(1, 2), [np.float64(2.5)])}) == {"1": ["1/2", [2.5]]}
    assert plain(np.array([[1, 2]])) == [[1, 2]] and type(plain(np.int64(3))) is int
    assert plain(np.bool_(True)) is True and plain(np.float32(0.5)) == 0.5
    assert plain(float("nan")) == "nan" and plain(float("inf")) == "inf" and plain(np.float64("-inf")) == "-inf"
    assert plain(None) is None and plain(True) is True and plain("s") == "s" and plain(1.5) == 1.5
    assert plain(Path("a/b")) == "a/b"


leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.fractions(),
    st.text(max_size=5),
    st.floats().map(np.float64),
    st.integers(-(2**62), 2**62).map(np.int64),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.one_of(st.integers(), st.text(max_size=3)), inner, max_size=4),
    ),
    max_leaves=20,
)


@given(values)
def test_output_is_strict_json_and_a_fixed_point(obj):
    out = plain(obj)
    assert json.loads(json.dumps(out, allow_nan=False)) == out
    assert plain(out) == out


def test_a_normaliser_that_keeps_nan_fails():
    """Mutation: NaN passed through as a float is refused by strict JSON, which the property test uses."""
    try:
        json.dumps([float("nan")], allow_nan=False)
    except ValueError:
        return
    raise AssertionError("strict JSON took NaN")
