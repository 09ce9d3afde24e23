"""Lemma 3's case checks (proofs_check/lemma3.py, Appendix G): tight where the proof is (C within 1% of the need, l
up to 256), and case_evidence searches the terms each case covers: pair sets recomputed here from the cases'
definitions (1b: t = t1, k != t2; 2a: t != t1, k != t2; 2b: t != t1, k = t2), a capped search that keeps every pair
of adjacent tokens, witnesses that name their head, and a note whose range is that of need / claimed C (0 for a head
whose kernels read nothing)."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from tmcheck.proofs_check import lemma3
from tmcheck.proofs_check.lemma3 import _case_pairs
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


# --------------------------------------------------------------------------------------------
# the terms each case's search covers

CASES = {
    "1b": lambda t, k, t1, t2: t == t1 and k != t2,
    "2a": lambda t, k, t1, t2: t != t1 and k != t2,
    "2b": lambda t, k, t1, t2: t != t1 and k == t2,
}


def case_terms(case: str, l: int, t1: int, t2: int) -> set[tuple[int, int]]:
    return {(t, k) for t in range(l) for k in range(l) if CASES[case](t, k, t1, t2)}


@pytest.mark.parametrize("case", ["1b", "2a", "2b"])
@pytest.mark.parametrize("head", [(2, 0, 1), (5, 4, 0), (6, 2, 2), (8, 0, 7)])
def test_uncapped_pairs_are_the_cases_terms(case, head):
    pairs = _case_pairs(case, *head, None)
    assert len(pairs) == len(set(pairs))
    assert set(pairs) == case_terms(case, *head)


@pytest.mark.parametrize("head,cap", [((12, 5, 9), 41), ((12, 5, 9), 60), ((16, 3, 9), 200), ((8, 0, 7), 20)])
def test_a_capped_search_keeps_every_tight_pair(head, cap):
    """2a capped: exactly `cap` distinct terms of the case, and all pairs of adjacent tokens (|t − t1| <= 1 or
    |k − t2| <= 1), where the need is largest, among them."""
    l, t1, t2 = head
    terms = case_terms("2a", *head)
    tight = {(t, k) for t, k in terms if abs(t - t1) <= 1 or abs(k - t2) <= 1}
    assert len(tight) <= cap < len(terms)
    pairs = _case_pairs("2a", *head, cap)
    assert len(pairs) == len(set(pairs)) == cap
    assert set(pairs) <= terms
    assert tight <= set(pairs)


def test_a_capped_search_finds_the_full_searchs_worst_term():
    """On these heads the capped 2a search reaches the same largest need and claimed C as the full one."""
    for head, cap in [((12, 5, 9), 60), ((6, 2, 2), 12)]:
        capped = lemma3.case_evidence("2a", [head], max_pairs=cap)
        full = lemma3.case_evidence("2a", [head])
        assert [(w.lhs, w.rhs) for w in capped.written] == [(w.lhs, w.rhs) for w in full.written]


def test_the_witnesses_name_their_head_and_count_its_terms():
    heads = [(5, 4, 0), (6, 2, 2)]
    for case in ("1b", "2a", "2b"):
        ev = lemma3.case_evidence(case, heads)
        want = [
            {"l": l, "t1": t1, "t2": t2, "kernels": n, "pairs": len(case_terms(case, l, t1, t2))}
            for l, t1, t2 in heads
            for n in range(len(lemma3.KERNELS))
        ]
        assert [w.at for w in ev.written] == want
    capped = lemma3.case_evidence("2a", [(12, 5, 9)], max_pairs=50)
    assert {w.at["pairs"] for w in capped.written} == {50}


def _note_range(note: str) -> tuple[float, float]:
    m = re.fullmatch(r"need / claimed C ranges over \[(\S+), (\S+)\] \(1 = tight\)", note)
    assert m, note
    return float(m[1]), float(m[2])


def test_the_note_gives_the_range_of_need_over_claim():
    """1b and 2b are tight (need = claimed C at every head); a head whose kernels read nothing needs C = 0 and its
    claimed C is 0 too: its ratio counts as 0, not as a division by zero."""
    for case in ("1b", "2b"):
        assert _note_range(lemma3.case_evidence(case, [(5, 4, 0), (12, 5, 9)]).note) == (1.0, 1.0)
    zero = [[0] * 5, [0] * 5]
    ev = lemma3.case_evidence("1b", [(5, 4, 0)], kernels=[(zero, zero), lemma3.KERNELS[0]])
    assert [(w.lhs, w.rhs) for w in ev.written][0] == (0, 0)
    assert _note_range(ev.note) == (0.0, 1.0)
    lo, hi = _note_range(lemma3.case_evidence("2a", [(6, 2, 2)]).note)
    assert 0 < lo <= hi < 1  # 2a's argument divides by a smaller gap: loose
