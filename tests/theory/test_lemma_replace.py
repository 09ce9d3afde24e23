"""Replacing FFN (Appendix G, Lemma 6): row 0 becomes row 1 inside a block (or back), and the claim says which."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tmcheck.theory.backends import run_blocks
from tmcheck.theory.lemmas.replace import replace, replace_ffn


@given(st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_replace_copies_row(l, seed):
    c = replace(l, 3)
    H = c.sample_inputs(np.random.default_rng(seed), 5)
    out = run_blocks(c.blocks, H, "exact")
    assert (out[:, 0] == H[:, 1]).all() and (out[:, 1:] == H[:, 1:]).all()


def test_replace_other_direction_and_errors():
    c = replace(4, 2, src=0, dst=1)
    H = c.sample_inputs(np.random.default_rng(0), 3)
    assert (run_blocks(c.blocks, H, "exact")[:, 1] == H[:, 0]).all()
    with pytest.raises(ValueError):
        replace_ffn(2, 0)
    with pytest.raises(ValueError):
        replace_ffn(1, 1)


def test_replace_claim_names_the_rows():
    for src, dst in ((1, 0), (0, 1)):
        claim = replace(3, 1, src, dst).claim
        assert isinstance(claim, str) and f"row {dst} replaced by row {src}" in claim
