"""The one prediction rule (tmcheck.empirics.fit.prediction.decide): an equivalence test against a margin δ
on the 90% interval of alpha-hat - alpha. Known answers at every boundary, a property over random
intervals, and the mutant that restores "interval excludes 0 => inconsistent", which these tests reject."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tmcheck.empirics.fit import prediction
from tmcheck.empirics.fit.prediction import prediction_test, verdict_words
from tmcheck.theory.bounds import alpha_D


@pytest.mark.parametrize(
    ("lo", "hi", "outcome"),
    [
        (-0.083, -0.008, "equivalent"),  # synth-decide2's d = 4, beta = 1/2 interval, at its stated tolerance 0.1
        (-0.04, -0.01, "equivalent"),  # excludes 0, inside ±0.05: a detectable bias, not a refutation
        (-0.02, 0.03, "equivalent"),
        (-0.05, 0.05, "equivalent"),  # the edge belongs to equivalence (closed interval)
        (0.01, 0.07, "undecided"),  # straddles +δ
        (-0.2, 0.2, "undecided"),  # straddles both
        (0.06, 0.2, "differs"),
        (-0.3, -0.051, "differs"),
    ],
)
def test_known_answers(lo, hi, outcome):
    margin = 0.1 if lo == -0.083 else 0.05
    assert prediction.decide(lo, hi, margin) == outcome


def test_a_bias_inside_the_margin_is_named_not_refuted():
    assert verdict_words("equivalent", 0.05, -0.04, -0.01, -0.025) == (
        "equivalent within ±0.05, with a detectable bias of -0.025"
    )
    assert verdict_words("equivalent", 0.05, -0.02, 0.03, 0.005) == "equivalent within ±0.05"
    assert verdict_words("undecided", 0.05, 0.01, 0.07, 0.04) == "undecided at ±0.05"
    assert verdict_words("differs", 0.05, 0.06, 0.2, 0.1) == "differs by more than 0.05"


def test_the_margin_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        prediction.decide(-0.1, 0.1, 0.0)


intervals = st.tuples(st.floats(-1, 1), st.floats(0, 1)).map(lambda t: (t[0], t[0] + t[1]))


@given(intervals, st.floats(0.001, 0.5))
def test_the_outcomes_partition_the_intervals(iv, margin):
    lo, hi = iv
    out = prediction.decide(lo, hi, margin)
    inside = -margin <= lo and hi <= margin
    outside = lo > margin or hi < -margin
    assert out == ("equivalent" if inside else "differs" if outside else "undecided")
    if lo <= 0 <= hi and hi - lo > 2 * margin:  # contains 0 but too wide: never decided
        assert out == "undecided"


def old_rule(lo, hi, margin):
    """The rule #38 removed: an interval that excludes 0 is 'inconsistent'."""
    return "differs" if not lo <= 0 <= hi else "equivalent" if (hi - lo) / 2 <= margin else "undecided"


def test_the_old_rule_is_a_mutant_these_tests_reject(monkeypatch):
    monkeypatch.setattr(prediction, "decide", old_rule)
    with pytest.raises(AssertionError):
        test_known_answers(-0.04, -0.01, "equivalent")
    # through the test as the library runs it: the biased-but-close case would be called a refutation
    rng = np.random.default_rng(0)
    draws = alpha_D(4, 0.5) - 0.025 + rng.normal(0, 0.008, 4000)
    assert prediction_test(draws, d=4, beta=0.5)["outcome"] == "differs"  # the mutant's answer
    monkeypatch.undo()
    t = prediction_test(draws, d=4, beta=0.5)
    assert t["outcome"] == "equivalent" and "detectable bias" in t["verdict"]


def test_the_paper_margin_is_decided_beside_delta():
    rng = np.random.default_rng(1)
    t = prediction_test(alpha_D(2, 1.0) + 0.03 + rng.normal(0, 0.005, 4000), d=2)
    assert t["verdict"].startswith("equivalent within ±0.05") and t["paper_verdict"] == "differs by more than 0.02"
    assert t["margin"] == 0.05 and t["paper_margin"] == 0.02 and t["size"] == 0.05
    assert "at the paper's ±0.02: differs by more than 0.02" in t["words"]


def test_verdict_classes_drop_the_bias_number():
    from tmcheck.empirics.fit.prediction import verdict_class

    assert verdict_class("equivalent within ±0.05, with a detectable bias of +0.034") == (
        "equivalent within ±0.05 (with a detectable bias)"
    )
    assert verdict_class("undecided at ±0.05") == "undecided at ±0.05"


def _edge_rates(reps=2000):
    from tmcheck.empirics.fit.coverage import Design, rule_error_rates

    law = {"form": "loglog", "B": 2.0, "alpha": 0.5}
    return rule_error_rates(Design((100, 316, 1000, 3162, 10000), 5), law, 0.05, 0.05, reps=reps)


def test_the_rule_keeps_its_level_at_the_margins_edge():
    """A pure power law with log-normal noise: the loglog t interval is exact, so at a true difference of
    exactly ±δ neither wrong call exceeds 5% beyond Monte Carlo error (3 SDs at 2000 sweeps: 6.5%)."""
    r = _edge_rates()
    assert r["nominal"] == 0.05 and r["reps"] == 2000
    assert r["equivalent_at_edge"] <= 0.065 and r["differs_at_edge"] <= 0.065
    assert r["equivalent_at_zero"] > 0.5  # with this noise the design has the power to confirm an exact prediction


def test_a_rule_on_a_narrower_interval_breaks_its_level(monkeypatch):
    """Mutation: deciding on the 80% interval (a = 0.1) doubles the wrong calls at the edge."""
    monkeypatch.setattr(prediction, "SIZE", 0.10)
    r = _edge_rates()
    assert max(r["equivalent_at_edge"], r["differs_at_edge"]) > 0.065


def test_power_known_answers_at_the_extremes_of_noise():
    from tmcheck.empirics.fit.coverage import Design, verdict_power

    law = {"form": "loglog", "E": 0.0, "B": 2.0, "alpha": 0.5}
    design = Design((1e3, 3e3, 1e4, 3e4, 1e5), 5)
    quiet = verdict_power(design, law, 1e-4, 0.05, reps=300)
    # with almost no noise a true prediction is equivalent, and any difference just past the margin differs
    assert quiet["equivalent_if_true"] == 1.0 and quiet["differs_at_2_margins"] == 1.0
    assert quiet["detectable"] == pytest.approx(0.06)
    loud = verdict_power(design, law, 3.0, 0.05, reps=300)
    assert loud["equivalent_if_true"] < 0.05 and loud["differs_at_2_margins"] < 0.5
    assert loud["detectable"] > 0.3


def test_power_grows_with_seeds_and_decades():
    from tmcheck.empirics.fit.coverage import power_table

    law = {"form": "loglog", "E": 0.0, "B": 1.0, "alpha": 0.5}
    rows = power_table(1e5, 2, law, 0.15, 0.05, seeds=(3, 20), decades=(1, 3), reps=400)
    by = {(r["decades"], r["seeds"]): r for r in rows}
    assert by[(1, 3)]["equivalent_if_true"] < by[(1, 20)]["equivalent_if_true"] <= by[(3, 20)]["equivalent_if_true"]
    assert by[(3, 20)]["detectable"] < by[(1, 3)]["detectable"]
    assert {r["sizes"] for r in rows} == {3, 7}  # 2 sizes a decade: 1 decade -> 3 sizes, 3 decades -> 7
