"""Lemma 3's case checks where they are tight: C within 1% of the need, l up to 256."""

from fractions import Fraction

import pytest

from tmcheck.proofs_check import lemma3
from tmcheck.proofs_check.registry import Result, Verdict

BELOW = -Fraction(1, 100)  # 1% below the C the case's argument gives


@pytest.mark.parametrize("case", ["1b", "2b"])
def test_cases_1b_2b_are_tight_within_one_percent(case):
    """At 1% above the argument's C every term vanishes; at 1% below, some term does not: the check can fail."""
    heads = [(5, 4, 0), (12, 5, 9), (64, 20, 21)]
    assert Result(lemma3.case_evidence(case, heads)).verdict is Verdict.HOLDS
    assert Result(lemma3.case_evidence(case, heads, margin=BELOW)).verdict is Verdict.FAILS


def test_case_2a_argument_is_loose_but_holds():
    ev = lemma3.case_evidence("2a", [(16, 3, 9)], max_pairs=200)
    assert Result(ev).verdict is Verdict.HOLDS
    assert all(
        w.lhs <= w.rhs / (1 + lemma3.MARGIN) for w in ev.written
    )  # need <= claimed C: 2a divides by a smaller gap


@pytest.mark.slow
@pytest.mark.parametrize("case", ["1b", "2b", "2a"])
def test_cases_up_to_l_256(case):
    ev = lemma3.case_evidence(case, lemma3.BIG_CASES, max_pairs=600 if case == "2a" else None)
    assert Result(ev).verdict is Verdict.HOLDS, ev.note
    if case != "2a":
        assert Result(lemma3.case_evidence(case, lemma3.BIG_CASES, margin=BELOW)).verdict is Verdict.FAILS
