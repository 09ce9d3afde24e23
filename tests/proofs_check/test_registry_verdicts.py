"""The verdicts of this part's obligations, pinned: a change of verdict must be deliberate."""

import time

import pytest

from tmcheck.proofs_check import registry

H, F, C = "HOLDS", "FAILS-AS-WRITTEN", "HOLDS-AFTER-CORRECTION"
EXPECTED = {
    "definitions.decoder": C, "definitions.ffn_shapes": C,
    "lemma1.psi_partition_of_unity": C, "lemma1.pou_scale": F, "lemma1.grid_centers": F, "lemma1.error_chain": C,
    "lemma1.choice_of_N": C, "lemma1.resources_d_dependence": F, "lemma1.token_count": F, "lemma1.token_index_s": F,
    "lemma1.token_index_products": H, "lemma1.token_index_final": F, "lemma1.step2_kernel": F, "lemma1.product_tree": F,
    "lemma1.residual_subtraction": F, "lemma1.final_sum_head": H,
    "lemma2.attention_difference": C, "lemma2.mha_output_bound": F, "lemma2.ffn_output_bound": F, "lemma2.ffn_lipschitz": C,
    "lemma2.ffn_perturbation": C, "lemma2.block_perturbation_sum": F, "lemma2.block_output_bound": F,
    "lemma2.block_lipschitz": F, "lemma2.mha_lipschitz": H, "lemma2.composition_exponents": F, "lemma2.induction_power": F,
    "lemma2.statement_vs_proof": F, "lemma2.embedding_bound": C, "lemma2.parameter_count": C, "lemma2.grid_count": C,
    "lemma2.lipschitz_constant": F, "lemma2.intermediate_inequalities_corrected": H,
    "lemma8.local_diffeomorphism": H,
    "theorem1.balancing": H, "theorem1.final_rate": H, "theorem1.parameters": H, "theorem1.log_N_simplification": F,
    "theorem1.plugin_constant": F, "theorem1.cm_dependence": F, "theorem1.d_dependence": F,
    "theorem2.error_decomposition": C, "theorem2.delta_split": H, "theorem2.ramp_indicator": H, "theorem2.deep_ramp": C,
    "theorem2.projection_head": H, "theorem2.final_product": C, "theorem2.resources_d_dependence": F, "theorem2.heads_exponent": F, "theorem2.depth_vs_accuracy": C,
    "appendixB.alpha_N": H, "appendixB.variance_in_N": H, "appendixB.balance": H, "appendixB.alpha_D": H,
    "appendixB.id_free_conversion": H, "appendixB.classification": H,
    "table1.gpt2_alpha_D": F, "table1.gpt2_alpha_N": F, "table1.chinchilla_alpha_D": H, "table1.chinchilla_alpha_N": F,
}


@pytest.fixture(scope="module")
def outcomes():
    obls = {o.id: o for o in registry.all_obligations()}
    t0 = time.perf_counter()
    outs = {oid: registry.run(obls[oid]) for oid in EXPECTED}
    return outs, time.perf_counter() - t0


def test_verdicts(outcomes):
    outs, _ = outcomes
    got = {oid: (o.error or o.result.verdict.value) for oid, o in outs.items()}
    assert got == EXPECTED


def test_fast_enough(outcomes):
    _, seconds = outcomes
    assert seconds < 60


def test_every_numbered_result_has_obligations():
    sections = {o.section for o in registry.all_obligations()}
    assert {"definitions", "lemma1", "lemma2", "lemma8", "theorem1", "theorem2", "appendixB", "table1"} <= sections
