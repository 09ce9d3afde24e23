"""A short mutation check: break the constructions on purpose and show that a named check catches each.

Each `check_*` is an ordinary assertion over tmcheck's constructions; `test_checks_pass` runs them on the
code as it is, and `test_mutation_is_caught` applies one mutation (monkeypatch) and requires that the
checks named for it fail. Mutations (README, "mutation table"):
  rotation_sign  Q^I = C R^T instead of C R (Lemma 3's rotation taking I_t1 to I_t2, flipped)
  psi_paper      ψ's middle piece 1 - |u| (the paper's misprint) in the claim's ψ
  scale_3N       ψ's scale 3N instead of 3(N-1) in BOTH the network's ψ FFN and the claim; exactness
                 (network == claim) cannot see it, only an oracle written from the paper's formulas can
  minimal_C      the exact threshold C* (Lemma 3, `threshold`/`minimal_C`) returned 10% too small
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from tmcheck.theory import netfile, sparse
from tmcheck.theory.backends import run_blocks
from tmcheck.theory.check import check_construction
from tmcheck.theory.lemmas import interaction as lemma3
from tmcheck.theory.lemmas.lemma1 import lemma1
from tmcheck.theory.targets import parse_target

import independent_eval  # tests/theory/independent_eval.py

Q3 = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]]
K3 = [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]
L1_TEXT, L1_D, L1_N = "x0*x1 + x0/4", 2, 3  # f(t_n) dyadic at every grid point: no rounding of the f_n


def _oracle_psi(u: Fraction) -> Fraction:
    """The trapezoid, from Appendix E.1 with the misprint corrected: 1 on |u| <= 1, 2 - |u| up to 2, then 0."""
    a = abs(u)
    return Fraction(1) if a <= 1 else (2 - a if a <= 2 else Fraction(0))


def paper_fhat(x, N: int) -> Fraction:
    """f̂(x) = Σ_n f(t_n) Π_i ψ(3(N-1)(x_i - t_{n_i})), t_j = j/(N-1), straight from the paper's formulas
    (f = x0 x1 + x0/4), with nothing from tmcheck."""
    total = Fraction(0)
    for n in itertools.product(range(N), repeat=len(x)):
        t = [Fraction(j, N - 1) for j in n]
        w = Fraction(1)
        for xi, ti in zip(x, t):
            w *= _oracle_psi(3 * (N - 1) * (xi - ti))
        total += (t[0] * t[1] + t[0] / 4) * w
    return total


def check_interaction_exact():
    """Lemma 3 (Appendix G): check_construction's exactness on random structured inputs and on the critical one."""
    c = lemma3.interaction(8, 2, 6, 1, Q3, K3, Fraction(2))
    rep = check_construction(c, np.random.default_rng(0), n_inputs=12, backends=("exact",))
    assert rep.results["exact"][0], rep.results["exact"]
    H = lemma3.critical_input(8, 2, 6, Q3, K3, Fraction(2))
    assert (run_blocks(c.blocks, H, "exact") == c.expected(H)).all()


def check_threshold_oracle():
    """C* equals the brute-force maximum of the per-pair thresholds (`pair_threshold`, an independent oracle)."""
    l, t1, t2, M = 6, 1, 4, Fraction(2)
    brute = max(
        lemma3.pair_threshold(l, t1, t2, Q3, K3, M, t, k) for t in range(l) for k in range(l) if (t, k) != (t1, t2)
    )
    assert lemma3.minimal_C(l, Q3, K3, M, t1=t1, t2=t2) == brute


def check_partition_of_unity():
    """Σ_j ψ(3(N-1)(x - t_j)) = 1 on [0,1] with tmcheck's ψ and scale (Lemma 1 (a))."""
    for N in (2, 3, 5):
        for k in range(0, 61):
            x = Fraction(k, 60)
            assert sum(sparse.psi(sparse.psi_scale(N) * (x - t)) for t in sparse.grid_points(N)) == 1, (N, x)


def check_lemma1_construction():
    """check_construction of Lemma 1 (the network equals tmcheck's claim f̂, exactly)."""
    c = lemma1(parse_target(L1_TEXT, L1_D), 2.0, 1.0, 0.5, N=L1_N)
    rep = check_construction(c, np.random.default_rng(1), n_inputs=6)
    assert rep.ok, rep.as_dict()


def check_lemma1_against_paper_oracle(tmp_path):
    """The exported network, read and run by `independent_eval`, equals the paper's f̂ (`paper_fhat`)."""
    c = lemma1(parse_target(L1_TEXT, L1_D), 2.0, 1.0, 0.5, N=L1_N)
    spec = independent_eval.load(netfile.save(c.network, tmp_path / "l1.json"))
    for x in [
        (Fraction(1, 7), Fraction(5, 6)),
        (Fraction(1, 3), Fraction(2, 9)),
        (Fraction(0), Fraction(1)),
        (Fraction(5, 11), Fraction(1, 2)),
    ]:
        assert independent_eval.evaluate(spec, list(x)) == paper_fhat(x, L1_N), x


CHECKS = {
    "check_interaction_exact": check_interaction_exact,
    "check_threshold_oracle": check_threshold_oracle,
    "check_partition_of_unity": check_partition_of_unity,
    "check_lemma1_construction": check_lemma1_construction,
    "check_lemma1_against_paper_oracle": check_lemma1_against_paper_oracle,
}


def _run_check(name, tmp_path):
    fn = CHECKS[name]
    return fn(tmp_path) if name == "check_lemma1_against_paper_oracle" else fn()


@pytest.mark.parametrize("name", list(CHECKS))
def test_checks_pass(name, tmp_path):
    _run_check(name, tmp_path)


def _mutate(monkeypatch, mutation: str) -> None:
    if mutation == "rotation_sign":
        orig = lemma3.rotation
        monkeypatch.setattr(lemma3, "rotation", lambda u, w: orig(u, w).T)
    elif mutation == "psi_paper":
        monkeypatch.setattr(
            sparse,
            "psi",
            lambda u: Fraction(1) if abs(u) <= 1 else (max(1 - abs(u), Fraction(0)) if abs(u) <= 2 else Fraction(0)),
        )
    elif mutation == "scale_3N":
        monkeypatch.setattr(sparse, "psi_scale", lambda N: 3 * N)
    elif mutation == "minimal_C":
        orig = lemma3.threshold

        def small(*a, **k):
            th = orig(*a, **k)
            return type(th)(**{**th.__dict__, "C": th.C * Fraction(9, 10)})

        monkeypatch.setattr(lemma3, "threshold", small)
    else:  # pragma: no cover
        raise ValueError(mutation)


CAUGHT_BY = {
    "rotation_sign": ["check_interaction_exact"],
    "psi_paper": ["check_partition_of_unity", "check_lemma1_construction"],
    "scale_3N": ["check_partition_of_unity", "check_lemma1_against_paper_oracle"],
    "minimal_C": ["check_interaction_exact", "check_threshold_oracle"],
}


@pytest.mark.parametrize("mutation,check", [(m, c) for m, cs in CAUGHT_BY.items() for c in cs])
def test_mutation_is_caught(mutation, check, monkeypatch, tmp_path):
    _mutate(monkeypatch, mutation)
    with pytest.raises(AssertionError):
        _run_check(check, tmp_path)


def test_scale_3N_passes_exactness_so_only_the_oracle_sees_it(monkeypatch):
    """Why the oracle is needed: with 3N in both places the network still equals tmcheck's own claim."""
    _mutate(monkeypatch, "scale_3N")
    check_lemma1_construction()
    assert math.isfinite(float(paper_fhat((Fraction(1, 3), Fraction(1, 2)), L1_N)))
