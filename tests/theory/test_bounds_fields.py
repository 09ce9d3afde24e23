"""Every field of the closed forms' reports (theory.bounds) recomputed from the paper's formulas (Appendix F.1 for
Theorem 1's), the messages of their guards, and the small helpers whose results nothing else pins."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from tmcheck.theory import bounds

CLASS = dict(L_T=2, L_FFN=3, w=4, l=8, d_embd=5, m=3, kappa=2.0, M=1.5, D=7)


def _simplified_log_N(d, eps, n, beta, C_M, D):
    """(F.1): 900 (log d)² log(60 d³ ε^{-4d/β} n) C_M³ D d ε^{-d/β}."""
    return (
        900 * math.log(d) ** 2 * math.log(60 * d**3 * eps ** (-4 * d / beta) * n) * C_M**3 * D * d * eps ** (-d / beta)
    )


def test_covering_report_fields():
    c = bounds.TransformerClass(**CLASS)
    rep = bounds.covering_report(c, 1e-3)
    assert set(rep) == {"class", "delta", "as_written", "corrected"}
    assert rep["class"] == CLASS and rep["delta"] == 1e-3
    P = 4 * 25 * 16 * 7 * (3 + 3) * 2
    L, LF = 2, 3
    log_ct = (
        (L * L + 1) * math.log(2)
        + math.log(LF)
        + 3 * L * math.log(1.5)
        + 18 * L * L * math.log(5)
        + 18 * L * L * LF * math.log(4)
        + 6 * L * L * LF * math.log(2.0)
        + L * L * (math.log(3) + math.log(8))
    )
    w = rep["as_written"]
    assert set(w) == {"n_params", "log_C_T", "log_C_T_proof_last_line", "log_N", "log10_N"}
    assert w["n_params"] == P and w["log_C_T"] == pytest.approx(log_ct, rel=1e-12)
    assert w["log_N"] == pytest.approx(P * (log_ct - math.log(1e-3)), rel=1e-12)
    assert w["log10_N"] == pytest.approx(w["log_N"] * math.log10(math.e), rel=1e-12)
    proof = log_ct - 18 * L * L * math.log(5) - 18 * L * L * LF * math.log(4) + 18 * L * L * LF * math.log(5)
    assert w["log_C_T_proof_last_line"] == pytest.approx(proof, rel=1e-12)
    cr = rep["corrected"]
    assert set(cr) == {"n_params", "log_C_T", "log_hidden_bound_final", "log_N", "log10_N"}
    cl = bounds.corrected_lipschitz(c)
    assert cr["n_params"] == bounds.n_params(c) == 2 * (3 * 25 * 3 + (5 + 1) * 4 + (4 + 1) * 4 + (4 + 1) * 5)
    assert cr["log_C_T"] == cl.log_CT and cr["log_hidden_bound_final"] == cl.log_M_final
    assert cr["log10_N"] == pytest.approx(cr["log_N"] * math.log10(math.e), rel=1e-12)


# F.1's class worked out by hand for each case (an oracle that called bounds.theorem1_class would check nothing):
# (4, 1e6, β 1): ε = 10^-1, l = m = C_M d ε^{-d/β} = 4·10^4, L_T = ⌈log2 4⌉ = 2, L_FFN = ⌈log2 10⌉ = 4, κ = (M l)²;
# (3, 1e4, β 1/2): ε = 10^-1/2, l = m = 2·3·10^3 = 6000, L_T = ⌈log2 3⌉ = 2, L_FFN = ⌈log2 √10⌉ = 2, w = 4 C_M = 8.
THEOREM1_CASES = [
    ((4, 1e6, 1.0, 16, 1.0, 1, 1.0), {"L_T": 2, "L_FFN": 4, "w": 4, "l": 40_000, "m": 40_000, "kappa": 1.6e9}),
    ((3, 1e4, 0.5, 5, 2.0, 2, 1.5), {"L_T": 2, "L_FFN": 2, "w": 8, "l": 6000, "m": 6000, "kappa": 8.1e7}),
]


@pytest.mark.parametrize("case,known", THEOREM1_CASES)
def test_theorem1_bound_fields(case, known):
    d, n, beta, D, R, C_M, M = case
    out = bounds.theorem1_bound(d, n, beta, D=D, R=R, C_M=C_M, M=M)
    eps = n ** (-beta / (2 * beta + d))
    want_class = {**known, "d_embd": 5, "M": M, "D": D}
    assert out["class"] == want_class
    assert out["eps"] == pytest.approx(eps, rel=1e-12) and out["alpha_D"] == pytest.approx(2 * beta / (2 * beta + d))
    assert out["bias"] == pytest.approx(2 * eps**2, rel=1e-12)
    c = bounds.TransformerClass(**want_class)
    delta, tail = 1 / (4 * R * n), (4 + 1 / (2 * R)) / n
    for key, logn in (
        ("as_written", bounds.log_covering_as_written(c, delta)),
        ("corrected", bounds.log_covering_corrected(c, delta)),
    ):
        assert out[key]["log_N"] == pytest.approx(logn, rel=1e-12)
        assert out[key]["variance"] == pytest.approx(104 * R**2 / (3 * n) * logn + tail, rel=1e-12)
        assert out[key]["total"] == pytest.approx(out["bias"] + out[key]["variance"], rel=1e-12)
    assert out["stated_rate"] == pytest.approx(D * d**2 * n ** (-2 * beta / (2 * beta + d)), rel=1e-12)
    assert out["paper_simplified_log_N"] == pytest.approx(_simplified_log_N(d, eps, n, beta, C_M, D), rel=1e-12)
    assert bounds.paper_simplified_log_N(1, eps, n) == 0.0


def test_paper_simplified_log_N_known_answer_and_defaults():
    """β = 1, C_M = 1 and D = 1 by default."""
    for d, eps, n in ((2, 0.5, 100.0), (3, 0.25, 1e6)):
        want = _simplified_log_N(d, eps, n, 1.0, 1.0, 1)
        assert math.isclose(bounds.paper_simplified_log_N(d, eps, n), want, rel_tol=1e-12)
        assert math.isclose(
            bounds.paper_simplified_log_N(d, eps, n, 0.5, 2.0, 7),
            _simplified_log_N(d, eps, n, 0.5, 2.0, 7),
            rel_tol=1e-12,
        )
    assert bounds.paper_simplified_log_N(1, 0.5, 100.0) == 0.0


def test_theorem1_class_defaults():
    c = bounds.theorem1_class(4, 1e6)
    assert (c.M, c.D, c.w) == (1.0, 1, 4) and c.kappa == float(c.l**2)


def test_small_closed_forms():
    assert bounds.id_from_alpha_D(Fraction(1, 2)) == 2 and bounds.id_from_alpha_D(Fraction(1, 2), 2) == 4
    assert bounds.lemma1_resources(2, 3) == {"N": 3, "l": 2 + 6 + 18, "m": 18, "L_T": 5}
    r = bounds.theorem2_resources(2, 3, 0.2, C_M=2)
    assert r["delta_1"] == pytest.approx(0.2 / 4) and r["stated_order_l_m"] == pytest.approx(2 * 0.2**-2)
    assert bounds.theorem2_resources(2, 3, 0.2, C_M=2, mu=1)["delta_1"] == pytest.approx(0.1)
    assert bounds.theorem1_n_for_eps(0.5, 2) == pytest.approx(0.5**-4)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: bounds.alpha_D(-1), "d"),
        (lambda: bounds.alpha_D(2, 0), "beta"),
        (lambda: bounds.alpha_N(0), "d"),
        (lambda: bounds.alpha_N(1, -1), "beta"),
        (lambda: bounds.alpha_D_from_alpha_N(0), "alpha_N"),
        (lambda: bounds.alpha_N_from_alpha_D(0), "alpha_D"),
        (lambda: bounds.id_from_alpha_D(0), "alpha_D"),
        (lambda: bounds.log_covering_as_written(bounds.TransformerClass(**CLASS), 0), "delta"),
        (lambda: bounds.log_covering_corrected(bounds.TransformerClass(**CLASS), -1), "delta"),
        (lambda: bounds.theorem1_bound(2, 0), "n"),
        (lambda: bounds.TransformerClass(**{**CLASS, "m": 0}), "m"),
        (lambda: bounds.TransformerClass(**{**CLASS, "kappa": math.inf}), "kappa"),
        (lambda: bounds.TransformerClass(**{**CLASS, "L_T": 1.5}), "L_T"),
    ],
)
def test_guards_name_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        call()


def test_alpha_N_from_alpha_D_below_one():
    with pytest.raises(ValueError, match="must be < 1"):
        bounds.alpha_N_from_alpha_D(1.0)
    assert bounds.alpha_N_from_alpha_D(Fraction(1, 2)) == 1


def test_block_constants_of_a_small_class_by_hand():
    c = bounds.TransformerClass(L_T=1, L_FFN=1, w=1, l=1, d_embd=1, m=1, kappa=1.0, M=1.0)
    bc = bounds.block_constants(c, 0.0)  # M_in = 1
    assert math.exp(bc.log_M_Z) == pytest.approx(2)  # 1 + 1
    assert math.exp(bc.log_M_out) == pytest.approx(2 + (1 * 2 + 1))  # M_Z + (κ M_Z + κ)
    assert math.exp(bc.log_attn_diff) == pytest.approx(3)
    assert math.exp(bc.log_mha_lip) == pytest.approx(3)
    assert math.exp(bc.log_ffn_lip) == pytest.approx(1)
    assert math.exp(bc.log_block_lip) == pytest.approx(2 * 4)
    assert math.exp(bc.log_block_pert) == pytest.approx(2 * 3 + (2 + 1))  # (1+1)·m·3 + FFN perturbation at M_Z
    assert bounds.log_sum_exp(-math.inf, -math.inf) == -math.inf
    assert bounds.log_sum_exp(0.0, 0.0) == pytest.approx(math.log(2))


def test_table1_rounding():
    assert bounds.round_half_up(Fraction(1, 8), 2) == Fraction(13, 100)
    assert bounds.round_half_up(Fraction(-1, 8), 2) == Fraction(-12, 100)


def test_classification_closed_forms():
    p, eta = np.array([0.5, 0.5]), np.array([0.2, 0.9])
    assert bounds.plugin_excess_risk(p, eta, eta) == 0.0
    assert bounds.plugin_excess_risk(p, eta, np.array([0.8, 0.9])) == pytest.approx(0.5 * 0.6)
    assert bounds.margin_constant(p, eta) == pytest.approx(max(0.5 / 0.3, 1.0 / 0.4))
    assert bounds.margin_constant(p, np.array([0.5, 0.5])) == 0.0
    assert bounds.classification_bound(2.0, 0.1) == pytest.approx(2 * 2.0 * 0.01)
    assert bounds.classification_bound(2.0, 0.1, 2.0) == pytest.approx(2 * 2.0 * 0.001)


def test_size_guard_message_counts():
    from tmcheck.theory.spec import lemma1_spec
    from tmcheck.theory.targets import TargetError

    with pytest.raises(TargetError, match=r"l = 1\.806e\+05 tokens.*limit is 1000 tokens and heads: raise it with --x"):
        lemma1_spec(2, 300, with_kappa=False).check_size(1000, "--x")
    with pytest.raises(TargetError, match=r"10\^3[0-9]\.[0-9] tokens"):
        lemma1_spec(6, 10**5, with_kappa=False).check_size()


def test_theorem1_bound_defaults():
    assert bounds.theorem1_bound(3, 1e5) == bounds.theorem1_bound(3, 1e5, 1.0, D=1, R=1.0, C_M=1, M=1.0)
