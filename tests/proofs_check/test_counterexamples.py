"""Every FAILS-AS-WRITTEN (and HOLDS-AFTER-CORRECTION) finding of definitions, Lemma 1, Lemma 2, Lemma 8,
Theorems 1-2, Appendix B and Table 1 re-checked here, independently of the obligation's own code where
possible (hand arithmetic, tmcheck's backend, plain numpy)."""

import math
from fractions import Fraction as F

import numpy as np
import pytest

from tmcheck.proofs_check import lemma1, lemma2, registry, theorem1
from tmcheck.theory import bounds
from tmcheck.theory.backends import run_blocks
from tmcheck.theory.examples import worked_example_value
from tmcheck.theory.network import Block, Head, Layer

MINE = tuple(f"tmcheck.proofs_check.{m}" for m in ("definitions", "lemma1", "lemma2", "lemma8", "theorem1", "theorem2", "appendixB", "table1"))


def relu(v):
    return max(v, 0)


def recheck_definitions_decoder():
    x1, x2 = F(1, 2), F(3, 2)
    row1 = relu(x1) * x1 + relu(x2) * x2  # the head writes Σ_k σ(x_k) x_k to row 1 of every token
    assert worked_example_value(x1, x2) == 3  # H[0, l−1] = x2 + σ(row1 − 1)
    assert x1 + relu(row1 - 1) == 2  # H[0, 0]: the other reading


def recheck_definitions_ffn_shapes():
    with pytest.raises(ValueError):
        np.ones((6, 5)) @ np.ones(5) + np.ones(5)


def recheck_lemma1_psi_partition_of_unity():
    assert lemma1.psi_as_written(F(3, 2)) == 1 - F(3, 2) == F(-1, 2)
    # N = 3, x = 1/4: arguments 6·(1/4) and 6·(1/4 − 1/2), both |3/2|; the third is 6·(−3/4), |.| > 2
    assert 2 * (1 - F(3, 2)) == -1


def recheck_lemma1_pou_scale():
    # N = 2, x = 1/2, scale 3N = 6: arguments 3 and −3, both beyond the support |x| < 2
    assert lemma1.psi(F(3)) == 0 and lemma1.psi(F(-3)) == 0


def recheck_lemma1_grid_centers():
    assert F(2, 2 - 1) > 1


def recheck_lemma1_error_chain():
    centres = [F(1, 2), F(1), F(3, 2)]  # n/(N−1) for N = 3, as written
    assert sum(abs(F(1) - c) <= F(1, 2) for c in centres) == 3 > 2**1


def recheck_lemma1_choice_of_N():
    N = 1 * (2 * 1 / F(3, 10)) + 1
    assert N == F(23, 3) and N.denominator != 1


def recheck_lemma1_resources_d_dependence():
    N = math.ceil(4 * 16 / F(1, 2)) + 1
    assert N == 129
    assert F(4 + 4 * N + 4 * N**4, 4 * 2**4) > 10**7


def recheck_lemma1_token_count():
    assert 2 + 2 * 2 + 2**2 != 2 + 2 * 2 + 2**2 * 2


def recheck_lemma1_token_index_s():
    d = 2
    assert d + 1 * d + 3 == d + 2 * d + 1 == 7


def recheck_lemma1_token_index_final():
    d, N = 2, 2
    assert d + N * d + (2 - 1) * N**1 + (1 - 1) * N**2 + 1 == 9
    assert d + N * d + d * ((2 - 1) * N ** (d - 1) + (1 - 1)) + 1 == 11


def recheck_lemma1_step2_kernel():
    x, j, N = F(1, 2), 1, 3
    assert 1 * x + 1 * (1 - F(j, N - 1)) == 1 != x - F(j - 1, N - 1) + 1


def recheck_lemma1_product_tree():
    s = [2, 3, 5, 7]
    level1 = s[: 4 // 2]  # i <= d/2^1 at k = 1
    top = level1[0] * level1[1]  # k = 2 = log2 d, i <= 1
    assert top == 6 != 2 * 3 * 5 * 7


def recheck_lemma1_residual_subtraction():
    R, fphi = F(1), F(1, 2)
    W = np.zeros((5, 5), dtype=object)
    W[:] = F(0)
    W[1, 1], W[1, 4] = F(1), -R
    H = np.array([[0], [fphi + R], [0], [1], [1]], dtype=object)
    out = run_blocks([Block((), (Layer(W, np.zeros(5, dtype=object)),))], H, "exact")[0]
    assert out[1, 0] == 2 * (fphi + R) - R == 2 != fphi


def recheck_lemma2_attention_difference():
    k, eta = F(1, 10), F(1, 1000)
    diff = k * k * k - k * (k - eta) * k  # σ(κ·κ)·κ − σ(κ(κ−η))·κ at h = 1
    assert diff == k * k * eta == F(1, 100000) > 3 * k**3 * eta


def recheck_lemma2_mha_output_bound():
    M = 2
    assert M + (M * M) * M == 10 > M + 1 * 1 * 1 * M


def recheck_lemma2_ffn_output_bound():
    assert 5 * 1 + 1 == 6 > 1 + F(1, 25)
    assert 5 * (5 * 1 + 1) + 1 == 31 > 25 + 1


def recheck_lemma2_ffn_lipschitz():
    W1, W2 = np.ones((1, 5)), np.ones((5, 1))
    d = 1 / 7
    moved = W2 @ np.maximum(W1 @ np.full(5, d), 0)
    assert moved.max() == pytest.approx(5 / 7) and 5 / 7 > 1 / 7


def recheck_lemma2_ffn_perturbation():
    assert F(1, 100) > 2 * 3 * F(1, 100) * F(1, 100)


def recheck_lemma2_block_perturbation_sum():
    assert 3 + 3 > 4


def recheck_lemma2_block_output_bound():
    lhs, rhs = lemma2.block_output_terms(5, 5, F(10), 2, 1, 1, F(1))
    X = 2 * 5**6 * 10**3
    assert lhs == X + 250 * X + 10 * 1 and rhs == 4 * 5**4 * 5**4 * 10**3
    assert lhs > rhs


def recheck_lemma2_block_lipschitz():
    z = np.zeros((3, 3))
    blk = Block((Head(z, z, z),), (Layer(z, np.zeros(3)), Layer(z, np.zeros(3))))
    H, H2 = np.ones((1, 3, 2)), np.zeros((1, 3, 2))
    out = run_blocks([blk], np.concatenate([H, H2]), "float64")
    assert np.abs(out[0] - out[1]).max() == 1.0  # Lipschitz constant 1
    assert lemma2.block_lipschitz_paper(5, F(1, 1000), 2, 5, F(1), 1, 1) < 1


def recheck_lemma2_composition_exponents():
    LT = 2
    assert 3 * (LT - 1) + 1 == 4 > LT


def recheck_lemma2_induction_power():
    LT, LF = 2, 2
    assert 2 ** (7 * LT * LT) > 2 ** (LT * LT + 1) and LF**LT > LF


def recheck_lemma2_statement_vs_proof():
    L, LF, d, w, k, l, m = 2, 2, 5, 1, 10, 8, 4
    proof = (L * L + 1) * math.log(2) + math.log(LF) + 18 * L * L * LF * math.log(d) + 6 * L * L * LF * math.log(k) + L * L * math.log(m * l) + math.log(k)
    stated = (L * L + 1) * math.log(2) + math.log(LF) + 18 * L * L * math.log(d) + 18 * L * L * LF * math.log(w) + 6 * L * L * LF * math.log(k) + L * L * math.log(m * l)
    assert proof > stated


def recheck_lemma2_embedding_bound():
    assert max(F(1, 2), 1) == 1 != F(1, 2) + 1


def recheck_lemma2_parameter_count():
    assert 3 * 25 + 2 * (5 * 5 + 5) == 135 != 3 * 25 + 2 * 25


def recheck_lemma2_grid_count():
    pts = [F(-3, 5), F(1, 5), F(1)]  # within 2/5 of every point of [−1, 1]
    assert all(min(abs(t - p) for p in pts) <= F(2, 5) for t in (F(k, 100) for k in range(-100, 101)))
    assert len(pts) == 3 > F(5, 2)


def recheck_lemma2_lipschitz_constant():
    gap, ct_eta = lemma2.zero_network_gap(0.01, 0.01)
    assert gap == pytest.approx(0.01) and ct_eta < gap
    c = bounds.TransformerClass(L_T=1, L_FFN=1, w=1, l=1, d_embd=1, m=1, kappa=0.01, M=1.0)
    assert math.exp(bounds.log_CT_statement(c)) == pytest.approx(2**2 * 0.01**6)


def test_tower_example_by_hand():
    """d = w = l = m = L_FFN = 1, every weight t: a block maps h to z + (t z + t), z = h + t³h³."""

    def T(t, h=2.0):
        for _ in range(3):
            z = h + t**3 * h**3
            h = z + t * z + t
        return h

    eta = 1e-7
    stated = 2 ** (3 * 3 + 1) * 2.0 ** (3 * 3)  # 2^{L_T²+1} L_FFN M^{3L_T}, all other factors 1
    assert abs(T(1.0) - T(1.0 - eta)) / eta > 1e6 * stated
    assert lemma2.tower_example() > 1


def recheck_theorem1_log_N_simplification():
    lhs = math.log(2**2 * 5**18 * 5**18)
    rhs = 5 * math.log(2 * 5)
    assert lhs > rhs
    assert (1 + 1) * 1 > 1 * 1**2


def recheck_theorem1_plugin_constant():
    ours, paper = theorem1.plugin(8, 0.5, 1e6)
    assert ours > paper
    assert 20 * 25 * 16 == 8000 != 900


def recheck_theorem1_cm_dependence():
    a, _ = theorem1.plugin(8, 0.5, 1e6, C_M=1.0)
    b, _ = theorem1.plugin(8, 0.5, 1e6, C_M=2.0)
    assert b / a > 8


def recheck_theorem1_d_dependence():
    vals = []
    for d in (2, 4, 6, 8):
        e = 1e6 ** (-1 / (2 + d))
        vals.append(bounds.theorem2_resources(d, 1, e)["m"] / (d * e ** (-d)))
    assert vals == sorted(vals) and vals[-1] > 1e4 * vals[0] / 10


def recheck_theorem2_error_decomposition():
    assert abs(F(1, 10) - F(1, 10)) < 2 * F(1, 10)


def recheck_theorem2_deep_ramp():
    assert math.log(10) != int(math.log(10))


def recheck_theorem2_final_product():
    c_f, c_U, M = F(2), F(0), F(1)
    assert c_f + relu(c_f * c_U - c_f + M) - M == 1 != c_f * c_U


def recheck_theorem2_resources_d_dependence():
    r = [bounds.theorem2_resources(d, 1, 0.5)["m"] / (d * 2.0**d) for d in (1, 3, 6)]
    assert r[0] < r[1] < r[2] and r[2] > 1000


def recheck_theorem2_heads_exponent():
    assert F(4) ** 2 < F(4) ** 4


def recheck_theorem2_depth_vs_accuracy():
    assert math.ceil(math.log(2 * 10**6)) == 15 > math.ceil(math.log(200)) == 6


def recheck_table1_gpt2_alpha_D():
    v = F("0.076") / (1 + F("0.076"))
    assert F(70, 1000) < v and abs(v - F(71, 1000)) < F(1, 2000)


def recheck_table1_gpt2_alpha_N():
    v = F("0.095") / (1 - F("0.095"))
    assert abs(v - F(105, 1000)) < F(1, 2000) and abs(v - F(106, 1000)) > F(1, 2000)


def recheck_table1_chinchilla_alpha_N():
    assert F("0.28") / F("0.72") == F(7, 18)
    assert abs(F(7, 18) - F(33, 100)) > F(5, 100)
    assert F("0.25") / F("0.75") == F(1, 3)


RECHECKS = {name[len("recheck_"):].replace("_", ".", 1): fn for name, fn in globals().items() if name.startswith("recheck_")}


@pytest.mark.parametrize("oid", sorted(RECHECKS))
def test_recheck(oid):
    RECHECKS[oid]()


def test_every_finding_is_rechecked_and_carries_a_counterexample():
    obls = [o for o in registry.all_obligations() if o.check.__module__ in MINE]
    findings = []
    for o in obls:
        out = registry.run(o)
        assert out.error is None, (o.id, out.error)
        if out.result.verdict is not registry.Verdict.HOLDS:
            assert out.result.counterexample is not None, o.id
            assert out.result.corrected, o.id
            findings.append(o.id)
    missing = sorted(set(findings) - set(RECHECKS))
    assert not missing, f"findings without an independent re-check: {missing}"
    stale = sorted(set(RECHECKS) - set(findings))
    assert not stale, f"re-checks of claims that are no longer findings: {stale}"
