"""The registry derives verdicts from evidence; every verdict is pinned (a change must be deliberate), no check
can state one, and every finding flips to HOLDS when its check is given a search where the claim is satisfied."""

import ast
import inspect
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp

from tmcheck.proofs_check import registry
from tmcheck.proofs_check.registry import Evidence, Kind, Result, Unevaluable, Verdict, Witness

H, F, C, U = "HOLDS", "FAILS-AS-WRITTEN", "HOLDS-AFTER-CORRECTION", "NOT-EVALUABLE"
EXPECTED = {
    "definitions.decoder": U,
    "definitions.ffn_shapes": U,
    "lemma1.choice_of_N": C,
    "lemma1.error_chain": C,
    "lemma1.final_sum_head": H,
    "lemma1.grid_centers": C,
    "lemma1.network_error_vs_eps": H,
    "lemma1.network_exact": H,
    "lemma1.network_resources_measured": F,
    "lemma1.pou_scale": C,
    "lemma1.product_tree": C,
    "lemma1.psi_partition_of_unity": C,
    "lemma1.residual_subtraction": C,
    "lemma1.resources_d_dependence": F,
    "lemma1.step2_kernel": C,
    "lemma1.token_count": C,
    "lemma1.token_index_final": C,
    "lemma1.token_index_products": H,
    "lemma1.token_index_s": C,
    "lemma2.attention_difference": C,
    "lemma2.block_lipschitz": C,
    "lemma2.block_output_bound": C,
    "lemma2.block_perturbation_sum": C,
    "lemma2.composition_exponents": C,
    "lemma2.embedding_bound": C,
    "lemma2.ffn_lipschitz": C,
    "lemma2.ffn_output_bound": C,
    "lemma2.ffn_perturbation": C,
    "lemma2.grid_count": C,
    "lemma2.induction_power": F,
    "lemma2.intermediate_inequalities_corrected": H,
    "lemma2.lipschitz_constant": C,
    "lemma2.mha_lipschitz": H,
    "lemma2.mha_output_bound": C,
    "lemma2.parameter_count": C,
    "lemma2.statement_vs_proof": F,
    "lemma3.adjacent_max": H,
    "lemma3.case1a": H,
    "lemma3.case1b": H,
    "lemma3.case2a": H,
    "lemma3.case2b": H,
    "lemma3.case2b_rotation": C,
    "lemma3.numerator_bound": H,
    "lemma3.taylor": H,
    "lemma3.threshold_tight": H,
    "lemma3.weight_bound": H,
    "lemma4.first_layer": H,
    "lemma4.gated_tokens": C,
    "lemma4.kept_tokens": H,
    "lemma4.pivot_bound": H,
    "lemma4.pivot_sign": H,
    "lemma4.residual": H,
    "lemma4.weight_bound": H,
    "lemma5.ffn": H,
    "lemma5.kernels": C,
    "lemma5.relu": H,
    "lemma5.statement": H,
    "lemma5.weight_bound": C,
    "lemma6.ffn_output": H,
    "lemma6.replaces": H,
    "lemma7.duplication": C,
    "lemma7.gating_composition": C,
    "lemma7.heads_reindexed": C,
    "lemma7.mha": C,
    "lemma7.statement": C,
    "lemma8.local_diffeomorphism": H,
    "theorem1.balancing": H,
    "theorem1.cm_dependence": F,
    "theorem1.d_dependence": F,
    "theorem1.final_rate": H,
    "theorem1.log_N_simplification": F,
    "theorem1.parameters": H,
    "theorem1.plugin_constant": F,
    "theorem2.deep_ramp": C,
    "theorem2.delta_split": H,
    "theorem2.depth_vs_accuracy": C,
    "theorem2.error_decomposition": C,
    "theorem2.final_product": C,
    "theorem2.heads_exponent": F,
    "theorem2.network_claim": H,
    "theorem2.network_error_split": H,
    "theorem2.network_error_vs_eps": H,
    "theorem2.network_exact_projection": H,
    "theorem2.network_proven_grid_size": H,
    "theorem2.projection_head": C,
    "theorem2.ramp_indicator": H,
    "theorem2.resources_d_dependence": F,
    "appendixB.alpha_D": H,
    "appendixB.alpha_N": H,
    "appendixB.balance": H,
    "appendixB.classification": H,
    "appendixB.id_free_conversion": H,
    "appendixB.variance_in_N": H,
    "table1.chinchilla_alpha_D": H,
    "table1.chinchilla_alpha_N": F,
    "table1.gpt2_alpha_D": F,
    "table1.gpt2_alpha_N": F,
}
PACKAGE = Path(registry.__file__).parent


OBLIGATIONS = {o.id: o for o in registry.all_obligations()}


@pytest.mark.parametrize("oid", sorted(EXPECTED))
def test_verdict(oid):
    """One obligation's verdict (one test each, so a mutation run selects the obligations a function reaches)."""
    assert registry.run(OBLIGATIONS[oid]).label == EXPECTED[oid]


def test_the_registry_is_the_expected_one():
    assert sorted(OBLIGATIONS) == sorted(EXPECTED)


def test_every_section_has_obligations():
    assert {o.section for o in registry.all_obligations()} == set(registry.SECTIONS)


# ------------------------------------------------------------------ the judge: verdicts follow from evidence
def _w(lhs, rhs, rel="<=", x=0):
    return Witness({"x": x}, lhs, rhs, rel)


def test_verdict_rule():
    ok, bad = _w(1, 2), _w(3, 2, x=1)
    assert Result(Evidence("d", [ok])).verdict is Verdict.HOLDS
    assert Result(Evidence("d", [ok, bad])).verdict is Verdict.FAILS
    fixed = Evidence("d", [ok, bad], [_w(1, 2), _w(3, 4, x=1)], "corrected")
    assert Result(fixed).verdict is Verdict.CORRECTED
    still = Evidence("d", [ok, bad], [_w(1, 2), _w(5, 4, x=1)], "corrected")
    assert Result(still).verdict is Verdict.FAILS
    assert Result(Unevaluable("a definition", "reading")).verdict is Verdict.UNEVALUABLE
    # a correction does not turn a claim that holds as written into a finding
    assert Result(Evidence("d", [ok], [_w(5, 4)], "c")).verdict is Verdict.HOLDS


def test_the_verdict_moves_with_the_witness_values():
    """The mha_output_bound witness of the issue: at M = 1 both sides are 2 and the claim holds."""
    assert Result(Evidence("d", [_w(Fraction(2), Fraction(2))])).verdict is Verdict.HOLDS
    assert Result(Evidence("d", [_w(Fraction(10), Fraction(4))])).verdict is Verdict.FAILS


def test_relations_and_symbolic_equality():
    x = sp.symbols("x", positive=True)
    assert _w(sp.log(x**2), 2 * sp.log(x), "==").holds  # sympy decides equal forms
    assert _w(sp.log(x**2), sp.log(x), "==").holds is False
    assert _w(None, x, "==").holds is False and _w(1, 2, "!=").holds and _w(2, 1, ">").holds
    with pytest.raises(ValueError):
        _w(1, 2, "~")


def test_evidence_must_search_something_and_correct_the_same_witnesses():
    with pytest.raises(ValueError):
        Evidence("d", [])
    with pytest.raises(ValueError):
        Evidence("d", [_w(1, 2)], [_w(1, 2, x=5)], "c")
    with pytest.raises(ValueError):
        Evidence("d", [_w(1, 2)], [_w(1, 2)], "")
    with pytest.raises(TypeError):
        Result("HOLDS")


def test_gaps_are_findings_on_steps_and_resources_only():
    bad = Evidence("d", [_w(3, 2)])
    assert Result(bad, Kind.STEP).gap and Result(bad, Kind.RESOURCE).gap
    assert not Result(bad, Kind.STATEMENT).gap and not Result(Evidence("d", [_w(1, 2)]), Kind.STEP).gap
    assert "statement is not refuted" in Result(bad, Kind.RESOURCE).summary


def test_no_check_can_state_a_verdict():
    """No verdict argument anywhere a check can reach, and no Verdict outside the registry and the errata."""
    for cls in (Evidence, Witness, Unevaluable, Result):
        assert not {"verdict", "status", "ok"} & set(inspect.signature(cls).parameters), cls
    for path in PACKAGE.glob("*.py"):
        if path.name in ("registry.py", "errata.py", "report.py"):  # they read verdicts; no check lives there
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
            a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
        }
        assert not {"Verdict", "Result"} & names, f"{path.name} names Verdict or Result"


def test_every_check_returns_evidence():
    for o in registry.all_obligations():
        ret = inspect.signature(o.check).return_annotation
        assert ret in ("Evidence", "Unevaluable", Evidence, Unevaluable), (o.id, ret)


# ------------------------------------------------------------------ every finding can be overturned by evidence
FINDINGS = sorted(oid for oid, v in EXPECTED.items() if v in (F, C))


def test_every_finding_declares_a_satisfying_search():
    obls = {o.id: o for o in registry.all_obligations()}
    assert [oid for oid in FINDINGS if obls[oid].satisfied is None] == []


def _varied(witnesses) -> set[str]:
    values = defaultdict(set)
    for w in witnesses:
        for k, v in w.at.items():
            values[k].add(repr(v))
    return {k for k, v in values.items() if len(v) > 1}


@pytest.mark.parametrize("oid", FINDINGS)
def test_finding_flips_to_holds_on_satisfying_evidence(oid):
    """The satisfying search holds, searches at least as many witnesses as the finding's search (the witness
    ratio), over the same coordinates, and varies some of them (never a single point)."""
    obl = OBLIGATIONS[oid]
    found, res = obl.judge(), obl.judge(**obl.satisfied)
    assert res.verdict is Verdict.HOLDS, res.summary
    ratio = len(res.evidence.written) / len(found.evidence.written)
    assert ratio >= 1, f"the satisfying search has {ratio:.2f} times the witnesses of the finding's"
    keys = lambda ev: {k for w in ev.written for k in w.at}  # noqa: E731
    assert keys(res.evidence) == keys(found.evidence)
    if _varied(found.evidence.written):
        assert _varied(res.evidence.written), "the satisfying search collapses to one point"
