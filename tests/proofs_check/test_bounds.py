"""theory.bounds: exponents, conversions, Table 1, Lemma 2 log covering (as written and corrected), Theorem 1."""

import math
from fractions import Fraction as F
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tmcheck.proofs_check import lipschitz
from tmcheck.theory import bounds


def test_exponents_exact():
    assert bounds.alpha_D(F(2)) == F(1, 2)
    assert bounds.alpha_N(F(4)) == F(1, 2)
    assert bounds.alpha_D(F(78, 5), F(1)) == F(10, 88)
    assert bounds.alpha_N_from_alpha_D(F(1, 4)) == F(1, 3)
    with pytest.raises(ValueError):
        bounds.alpha_N_from_alpha_D(F(1))
    with pytest.raises(ValueError):
        bounds.alpha_D(0)


@given(st.fractions(min_value=F(1, 10), max_value=100), st.fractions(min_value=F(1, 10), max_value=1))
def test_conversions_roundtrip(d, beta):
    aD, aN = bounds.alpha_D(d, beta), bounds.alpha_N(d, beta)
    assert bounds.alpha_D_from_alpha_N(aN) == aD
    assert bounds.alpha_N_from_alpha_D(aD) == aN
    assert bounds.id_from_alpha_D(aD, beta) == d


def test_table1_recomputed():
    rows = {(r["model"], r["quantity"]): r for r in bounds.table1()}
    assert rows["GPT-2", "alpha_D"]["exact"] == F(19, 269) and rows["GPT-2", "alpha_D"]["recomputed_3dp"] == "0.071"
    assert rows["GPT-2", "alpha_N"]["exact"] == F(19, 181) and rows["GPT-2", "alpha_N"]["recomputed_3dp"] == "0.105"
    assert rows["Chinchilla", "alpha_D"]["matches"] and rows["Chinchilla", "alpha_D"]["recomputed_3dp"] == "0.254"
    assert rows["Chinchilla", "alpha_N"]["exact"] == F(7, 18) and not rows["Chinchilla", "alpha_N"]["matches"]


def test_log_CT_statement_matches_exact_integer():
    c = bounds.TransformerClass(L_T=2, L_FFN=3, w=4, l=6, d_embd=5, m=3, kappa=7.0, M=2.0)
    L, LF = 2, 3
    exact = (
        2 ** (L * L + 1)
        * LF
        * 2 ** (3 * L)
        * 5 ** (18 * L * L)
        * 4 ** (18 * L * L * LF)
        * 7 ** (6 * L * L * LF)
        * 3 ** (L * L)
        * 6 ** (L * L)
    )
    assert bounds.log_CT_statement(c) == pytest.approx(math.log(exact), rel=1e-12)
    P = 4 * 25 * 16 * 1 * (3 + 3) * 2
    assert bounds.n_params_paper(c) == P
    assert bounds.log_covering_as_written(c, 1e-3) == pytest.approx(P * (math.log(exact) + math.log(1000)), rel=1e-12)


def test_log_space_survives_LT_20():
    c = bounds.TransformerClass(L_T=20, L_FFN=4, w=5, l=64, d_embd=5, m=32, kappa=10.0, M=1.0, D=8)
    rep = bounds.covering_report(c, 1e-3)
    for key in ("as_written", "corrected"):
        assert math.isfinite(rep[key]["log_N"]) and rep[key]["log_N"] > 0
    # the corrected hidden-state bound is a tower: its log at least triples per block
    logs = [b.log_M_in for b in bounds.corrected_lipschitz(c).blocks]
    assert all(b > 2.9 * a for a, b in pairwise(logs[3:]))


def test_n_params_counts_the_weights():
    rng = np.random.default_rng(0)
    for LF, w in ((1, 5), (2, 3), (4, 7)):
        c = bounds.TransformerClass(L_T=3, L_FFN=LF, w=w, l=2, d_embd=4, m=2, kappa=1.0, M=1.0)
        blocks = lipschitz.draw_blocks(rng, c)
        count = sum(a.size for b in blocks for h in b.heads for a in (h.Q, h.K, h.V)) + sum(
            x.W.size + x.b.size for b in blocks for x in b.ffn
        )
        assert bounds.n_params(c) == count
        assert count <= bounds.n_params_paper(c)


@given(st.integers(1, 4), st.floats(0.01, 10), st.floats(0.1, 5))
def test_corrected_constant_grows_with_kappa_and_M(LT, kappa, M):
    a = bounds.TransformerClass(L_T=LT, L_FFN=2, w=3, l=3, d_embd=3, m=2, kappa=kappa, M=M)
    b = bounds.TransformerClass(L_T=LT, L_FFN=2, w=3, l=3, d_embd=3, m=2, kappa=kappa * 2, M=M * 2)
    assert bounds.corrected_lipschitz(b).log_CT > bounds.corrected_lipschitz(a).log_CT
    assert bounds.corrected_lipschitz(a).log_CT >= 0  # the residual alone gives |T − T'| up to η


@given(st.floats(10, 1e12), st.integers(1, 20), st.floats(0.1, 1))
def test_theorem1_balancing(n, d, beta):
    eps = bounds.theorem1_eps(n, d, beta)
    assert eps**2 == pytest.approx(eps ** (-d / beta) / n, rel=1e-9)
    assert bounds.theorem1_n_for_eps(eps, d, beta) == pytest.approx(n, rel=1e-9)


def test_theorem1_bound_and_lemma1_resources():
    out = bounds.theorem1_bound(4, 1e6, 1.0, D=16)
    assert out["eps"] == pytest.approx(0.1)
    assert out["stated_rate"] == pytest.approx(16 * 16 * 1e6 ** (-1 / 3))
    assert out["corrected"]["total"] == pytest.approx(out["bias"] + out["corrected"]["variance"])
    r = bounds.lemma1_resources(3, 4)
    assert r == {"N": 4, "l": 3 + 12 + 3 * 64, "m": 3 * 64, "L_T": 2 + 2 + 2}
    assert bounds.lemma1_N_corrected(4, 0.5) == math.ceil((2 / 3) * 2 * 2) + 1


def test_bad_class_rejected():
    with pytest.raises(ValueError):
        bounds.TransformerClass(L_T=0, L_FFN=1, w=1, l=1, d_embd=1, m=1, kappa=1.0, M=1.0)
    with pytest.raises(ValueError):
        bounds.TransformerClass(L_T=1, L_FFN=1, w=1, l=1, d_embd=1, m=1, kappa=float("inf"), M=1.0)
