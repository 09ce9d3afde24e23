"""Every obligation of Lemmas 3-7 runs and reaches the verdict found by computation."""

from __future__ import annotations

import pytest

from tmcheck.proofs_check import registry

EXPECTED = {
    "lemma3.case1a": "HOLDS",
    "lemma3.case1b": "HOLDS",
    "lemma3.case2a": "HOLDS",
    "lemma3.case2b": "HOLDS",
    "lemma3.case2b_rotation": "HOLDS-AFTER-CORRECTION",
    "lemma3.numerator_bound": "HOLDS",
    "lemma3.adjacent_max": "HOLDS",
    "lemma3.taylor": "HOLDS",
    "lemma3.weight_bound": "HOLDS",
    "lemma3.threshold_tight": "HOLDS",
    "lemma4.pivot_sign": "HOLDS",
    "lemma4.first_layer": "HOLDS",
    "lemma4.kept_tokens": "HOLDS",
    "lemma4.gated_tokens": "HOLDS-AFTER-CORRECTION",
    "lemma4.residual": "HOLDS-AFTER-CORRECTION",
    "lemma4.pivot_bound": "HOLDS",
    "lemma4.weight_bound": "HOLDS",
    "lemma5.kernels": "HOLDS-AFTER-CORRECTION",
    "lemma5.relu": "HOLDS",
    "lemma5.ffn": "HOLDS-AFTER-CORRECTION",
    "lemma5.weight_bound": "HOLDS-AFTER-CORRECTION",
    "lemma5.statement": "HOLDS",
    "lemma6.ffn_output": "HOLDS",
    "lemma6.replaces": "HOLDS",
    "lemma7.heads_reindexed": "HOLDS-AFTER-CORRECTION",
    "lemma7.mha": "HOLDS-AFTER-CORRECTION",
    "lemma7.duplication": "HOLDS-AFTER-CORRECTION",
    "lemma7.gating_composition": "HOLDS-AFTER-CORRECTION",
    "lemma7.statement": "HOLDS-AFTER-CORRECTION",
}
OBLIGATIONS = {o.id: o for o in registry.all_obligations() if o.section in {"lemma3", "lemma4", "lemma5", "lemma6", "lemma7"}}


def test_every_lemma_obligation_is_listed():
    assert set(OBLIGATIONS) == set(EXPECTED)


@pytest.mark.parametrize("oid", sorted(EXPECTED))
def test_verdict(oid):
    out = registry.run(OBLIGATIONS[oid])
    assert out.error is None, out.error
    assert out.result.verdict.value == EXPECTED[oid], out.result.evidence
    if out.result.verdict is not registry.Verdict.HOLDS:
        assert out.result.counterexample is not None and out.result.corrected
