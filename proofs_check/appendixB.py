"""Appendix B (and Section 3): deriving the scaling exponents from Theorems 1 and 2.

B.1: the model size N = Õ(ε^{−d/β}), α_N = 2β/d, the balance N ≍ n^{d/(2β+d)} and α_D = 2β/(2β+d);
Section 3: the ID-free conversions; B.2: the plug-in classification bound under the margin condition.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from tmcheck.proofs_check.registry import Result, Verdict, obligation

d, beta, eps, n, N = sp.symbols("d beta epsilon n N", positive=True)


def _same(a, b) -> bool:
    return sp.simplify(sp.expand_log(sp.log(a) - sp.log(b), force=True)) == 0


@obligation(
    "appendixB.alpha_N",
    "Appendix B.1 and eq. (4)",
    "N = Õ(ε^{−d/β}) gives ε² = N^{−2β/d}, so the model-scaling exponent is α_N = 2β/d.",
    "symbolic",
    "theory.bounds.alpha_N.",
)
def alpha_N() -> Result:
    e_of_N = sp.solve(sp.Eq(N, eps ** (-d / beta)), eps)
    ok = len(e_of_N) == 1 and _same(e_of_N[0] ** 2, N ** (-2 * beta / d))
    return Result(Verdict.HOLDS if ok else Verdict.FAILS, f"ε = {e_of_N}, ε² = N^(−2β/d): {ok}.", counterexample=None if ok else {"eps": str(e_of_N)})


@obligation(
    "appendixB.variance_in_N",
    "Appendix B.1",
    "Õ(ε² + D d² ε^{−d/β}/n) = Õ(N^{−2β/d} + N/n) with N = ε^{−d/β}.",
    "symbolic",
    "theory.bounds.alpha_N, alpha_D.",
)
def variance_in_N() -> Result:
    e = N ** (-beta / d)
    ok = _same(e ** (-d / beta) / n, N / n) and _same(e**2, N ** (-2 * beta / d))
    return Result(Verdict.HOLDS if ok else Verdict.FAILS, f"substituting ε = N^(−β/d): {ok}.", counterexample=None if ok else {})


@obligation(
    "appendixB.balance",
    "Appendix B.1",
    "N^{−2β/d} ≍ N/n ⟺ n ≍ N^{(2β+d)/d} ⟺ N ≍ n^{d/(2β+d)}, and then L_sq <= Õ(2N/n) = Õ(n^{−2β/(2β+d)}).",
    "symbolic",
    "theory.bounds.theorem1_n_for_eps.",
)
def balance() -> Result:
    sol = sp.solve(sp.Eq(N ** (-2 * beta / d), N / n), N)
    ok = len(sol) == 1 and _same(sol[0], n ** (d / (2 * beta + d))) and _same(sol[0] / n, n ** (-2 * beta / (2 * beta + d)))
    return Result(Verdict.HOLDS if ok else Verdict.FAILS, f"N = {sol}; N/n = n^(−2β/(2β+d)): {ok}.", counterexample=None if ok else {"N": str(sol)})


@obligation(
    "appendixB.alpha_D",
    "Appendix B.1 and eq. (3); Section 3 with β = 1",
    "α_D = 2β/(2β+d); with β = 1, α_D = 2/(2+d) and α_N = 2/d.",
    "symbolic",
    "theory.bounds.alpha_D.",
)
def alpha_D() -> Result:
    aD = 2 * beta / (2 * beta + d)
    ok = _same(n ** (d / (2 * beta + d) - 1), n ** (-aD)) and sp.simplify(aD.subs(beta, 1) - 2 / (2 + d)) == 0
    return Result(Verdict.HOLDS if ok else Verdict.FAILS, f"n^(d/(2β+d) − 1) = n^(−2β/(2β+d)) and β = 1 gives 2/(2+d): {ok}.", counterexample=None if ok else {})


@obligation(
    "appendixB.id_free_conversion",
    "Section 3: predicting α_N from α_D without the ID",
    "α_D = 2/(2+d) = α_N/(α_N+1) and α_N = α_D/(1−α_D).",
    "symbolic",
    "theory.bounds.alpha_D_from_alpha_N, alpha_N_from_alpha_D (valid for every β).",
)
def id_free_conversion() -> Result:
    aD, aN = 2 * beta / (2 * beta + d), 2 * beta / d
    ok = sp.simplify(aN / (aN + 1) - aD) == 0 and sp.simplify(aD / (1 - aD) - aN) == 0
    return Result(Verdict.HOLDS if ok else Verdict.FAILS, f"both identities hold for every β > 0, d > 0 (not only β = 1): {ok}.", counterexample=None if ok else {})


def excess_risk_trial(rng: np.random.Generator, k: int = 40) -> tuple[float, float]:
    """One random discrete problem: (E(f_θ), 2 c_M ε^{1+γ}) with γ = 1, c_M the smallest constant of (10)."""
    p = rng.dirichlet(np.ones(k))
    eta = rng.uniform(0, 1, k)
    e = rng.uniform(0.01, 0.3)
    eta_t = np.clip(eta + rng.uniform(-e, e, k), 0, 1)
    f_star, f_t = eta >= 0.5, eta_t >= 0.5
    excess = float(np.sum(p * np.abs(2 * eta - 1) * (f_star != f_t)))
    m = np.abs(eta - 0.5)
    ts = np.unique(m[m > 0])
    c_M = max(float(np.sum(p[(m > 0) & (m <= t)])) / t for t in ts) if len(ts) else 0.0
    return excess, 2 * c_M * e**2


@obligation(
    "appendixB.classification",
    "Appendix B.2: from regression to classification",
    "If ||η_θ − η||∞ <= ε and P(0 < |η − 1/2| <= t) <= c_M t^γ, the plug-in rule has excess risk E(f_θ) <= 2 c_M ε^{1+γ}.",
    "numeric search",
    "not used by tmcheck's empirics (a motivation only).",
)
def classification() -> Result:
    rng = np.random.default_rng(0)
    worst = max((a / b if b > 0 else (np.inf if a > 0 else 0.0)) for a, b in (excess_risk_trial(rng) for _ in range(2000)))
    ok = worst <= 1 + 1e-12
    return Result(Verdict.HOLDS if ok else Verdict.FAILS,
                  f"2000 random discrete distributions (40 atoms), γ = 1, c_M the least constant in (10): worst E(f_θ)/(2c_M ε²) = {worst:.4f}.",
                  counterexample=None if ok else {"worst_ratio": worst})
