"""A parity with scikit-dimension over named cases, as test_local.py and test_lpca.py check theirs:
tmcheck's numbers equal the peer's committed beside the test (everywhere), and both equal the peer's
live where it is installed (CI's beside-anchors stage). ``python tests/empirics/id/<test>.py write``, in a
venv with scikit-dimension, writes the committed numbers."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pytest

try:
    import skdim
except ImportError:
    skdim = None

needs_skdim = pytest.mark.skipif(
    skdim is None, reason="scikit-dimension is not installed (the beside-anchors CI stage has it)"
)


def committed(values: Path) -> dict:
    """The peer's numbers committed in ``values``, by case."""
    return json.loads(values.read_text())


def skdim_parity_tests(values: Path, cases: Iterable[str], ours: Callable, theirs: Callable, atol: float = 1e-9):
    """The two tests of the parity over ``cases`` (``ours(case)`` and ``theirs(case)``: lists of numbers),
    for the test module to bind under these names."""
    cases = list(cases)

    @pytest.mark.parametrize("case", cases)
    def test_equal_to_scikit_dimensions_committed_numbers(case):
        np.testing.assert_allclose(ours(case), committed(values)[case], rtol=0, atol=atol)

    @needs_skdim
    @pytest.mark.parametrize("case", cases)
    def test_equal_to_scikit_dimension(case):
        want = theirs(case)
        np.testing.assert_allclose(ours(case), want, rtol=0, atol=atol)
        np.testing.assert_allclose(committed(values)[case], want, rtol=0, atol=atol)

    return test_equal_to_scikit_dimensions_committed_numbers, test_equal_to_scikit_dimension


def write_when_asked(values: Path, cases: Iterable[str], theirs: Callable) -> None:
    """Run as ``python <test>.py write``: ``values`` from the installed scikit-dimension."""
    if sys.argv[1:] == ["write"]:
        values.write_text(json.dumps({c: theirs(c) for c in cases}) + "\n")
