"""The library behind `tmcheck lemma`: `check.construction_report` (the report and its verdict),
`interaction.interaction_extra` (the sinusoidal float64 verdict, vectors and pattern) and `parallel.build_kind`
(the blocks `lemma parallel` combines), called directly; each with an input that makes it fail."""

from __future__ import annotations

from fractions import Fraction

import pytest

from tmcheck.theory.check import FLOAT_CLAIM_TOL, construction_report, measured_resources
from tmcheck.theory.lemmas.interaction import default_kernels, interaction, interaction_extra
from tmcheck.theory.lemmas.parallel import KINDS, build_kind, parallelize


def _head(C=None, kappa=1, l=8):
    Q, K = default_kernels(Fraction(kappa))
    return interaction(l, 1, l - 3, 0, Q, K, Fraction(2), C), Q, K


def test_report_holds_and_lists_what_the_command_prints():
    c, _, _ = _head()
    rep = construction_report(c, trials=3)
    assert rep["verdict"] == "HOLDS" and rep["ok"] and rep["failed"] == []
    assert list(rep)[:9] == [
        "name",
        "paper",
        "claim",
        "constants",
        "stated_kappa_bound",
        "stated_resources",
        "measured",
        "trials",
        "backend",
    ]
    assert rep["measured"] == measured_resources(c) and rep["measured"]["m"] == 1 and rep["measured"]["l"] == 8
    assert rep["backend"] == "exact" and "float_error" not in rep


def test_report_fails_when_C_is_below_the_threshold():
    c, _, _ = _head(C=1)
    rep = construction_report(c, trials=3)
    assert rep["verdict"] == "FAILS" and "exact" in rep["failed"]


def test_report_extra_ok_joins_the_verdict_and_extra_comes_last():
    c, _, _ = _head()
    rep = construction_report(c, trials=2, extra={"note": 1}, extra_ok=False)
    assert rep["verdict"] == "FAILS" and rep["check"]["ok"] and list(rep)[-1] == "note"


def test_report_in_float64_measures_the_claim():
    c, _, _ = _head()
    rep = construction_report(c, trials=2, exact=False)
    assert rep["backend"] == "float64" and rep["float_error"] <= FLOAT_CLAIM_TOL and rep["ok"]


def test_sinusoidal_float_verdict_holds_for_small_kernels_and_fails_for_large_ones():
    c, Q, K = _head(l=16)
    extra, ok = interaction_extra(c, Q, K, Fraction(2), 3, exact=False)
    assert ok and extra["sinusoidal float64 error"] <= FLOAT_CLAIM_TOL and extra["sinusoidal C*"] > 0
    big, Qb, Kb = _head(kappa=1000, l=16)  # C* ~ 2e9: cancellation against C costs more than 1e-9
    extra, ok = interaction_extra(big, Qb, Kb, Fraction(2), 3, exact=False)
    assert not ok and extra["sinusoidal float64 error"] > FLOAT_CLAIM_TOL
    assert construction_report(big, 2, False, extra, ok)["verdict"] == "FAILS"


def test_exact_extra_has_no_float_verdict_and_the_pattern_is_one_entry():
    c, Q, K = _head(l=10)
    extra, ok = interaction_extra(c, Q, K, Fraction(2), 2, exact=True, vectors=True, pattern=True)
    assert ok and list(extra) == ["interaction_vectors", "pattern_nonzero"]
    assert extra["pattern_nonzero"] == [[1, 7]] and len(extra["interaction_vectors"][0]) == 10
    leaky, _, _ = _head(C=1, l=10)
    assert len(interaction_extra(leaky, Q, K, Fraction(2), 2, exact=True, pattern=True)[0]["pattern_nonzero"]) > 1


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_builds_on_l_tokens_and_parallelises(kind):
    c = build_kind(kind, 4, Fraction(2))
    assert c.network.l == 4
    assert construction_report(parallelize(c, build_kind("gating", 4, 2)), trials=2)["verdict"] == "HOLDS"


@pytest.mark.parametrize(
    "kind,l,message",
    [("addition", 3, "even number of tokens"), ("attention", 4, "unknown block kind 'attention'")],
)
def test_build_kind_refuses_bad_input(kind, l, message):
    with pytest.raises(ValueError, match=message):
        build_kind(kind, l, Fraction(2))
