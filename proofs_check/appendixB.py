"""Appendix B (and Section 3): deriving the scaling exponents from Theorems 1 and 2.

B.1: the model size N = Õ(ε^{−d/β}), α_N = 2β/d, the balance N ≍ n^{d/(2β+d)} and α_D = 2β/(2β+d);
Section 3: the ID-free conversions; B.2: the plug-in classification bound under the margin condition.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import sympy as sp

from tmcheck.proofs_check.registry import Evidence, Kind, Witness, obligation
from tmcheck.theory import bounds

d, beta, eps, n, N = sp.symbols("d beta epsilon n N", positive=True)
# (d, β) at which tmcheck's closed forms (theory.bounds, exact on Fractions) are compared with the derived forms
POINTS = ((F(1), F(1)), (F(2), F(1, 2)), (F(4), F(1)), (F(31, 2), F(1)), (F(8), F(3, 4)))


def derived(expr, dd, b):
    """A sympy form of this module at d = dd, β = b, exactly."""
    return sp.nsimplify(
        expr.subs({d: sp.Rational(dd.numerator, dd.denominator), beta: sp.Rational(b.numerator, b.denominator)})
    )


def _log(a):
    return sp.expand_log(sp.log(a), force=True)


@obligation(
    "appendixB.alpha_N",
    "Appendix B.1 and eq. (4)",
    "N = Õ(ε^{−d/β}) gives ε² = N^{−2β/d}, so the model-scaling exponent is α_N = 2β/d.",
    "symbolic",
    "theory.bounds.alpha_N.",
    kind=Kind.STEP,
)
def alpha_N() -> Evidence:
    """Symbolic; and the exponent of ε² in N derived here against tmcheck's α_N (`bounds.alpha_N`) at POINTS."""
    e_of_N = sp.solve(sp.Eq(N, eps ** (-d / beta)), eps)
    slope = sp.simplify(-N * sp.diff(sp.log(e_of_N[0] ** 2), N)) if e_of_N else None
    return Evidence(
        "symbolic in N, d, β > 0; tmcheck's α_N at (d, β) in " + str([(str(a), str(b)) for a, b in POINTS]),
        [
            Witness({"d": dd, "beta": b, "quantity": "tmcheck α_N"}, bounds.alpha_N(dd, b), derived(slope, dd, b), "==")
            for dd, b in POINTS
        ]
        + [
            Witness({"quantity": "positive solutions ε(N)"}, len(e_of_N), 1, "=="),
            Witness({"quantity": "log ε²"}, _log(e_of_N[0] ** 2) if e_of_N else None, _log(N ** (-2 * beta / d)), "=="),
        ],
    )


@obligation(
    "appendixB.variance_in_N",
    "Appendix B.1",
    "Õ(ε² + D d² ε^{−d/β}/n) = Õ(N^{−2β/d} + N/n) with N = ε^{−d/β}.",
    "symbolic",
    "theory.bounds.alpha_N, alpha_D.",
    kind=Kind.STEP,
)
def variance_in_N() -> Evidence:
    """Symbolic; and tmcheck's α_N against the exponent of N in the bias term ε² at ε = N^(−β/d)."""
    e = N ** (-beta / d)
    slope = sp.simplify(-N * sp.diff(sp.log(e**2), N))
    return Evidence(
        "symbolic in N, n, d, β > 0, ε = N^(−β/d); tmcheck's α_N at POINTS",
        [
            Witness(
                {"d": dd, "beta": b, "term": "tmcheck α_N vs ε²"}, bounds.alpha_N(dd, b), derived(slope, dd, b), "=="
            )
            for dd, b in POINTS
        ]
        + [
            Witness({"term": "ε^(−d/β)/n"}, _log(e ** (-d / beta) / n), _log(N / n), "=="),
            Witness({"term": "ε²"}, _log(e**2), _log(N ** (-2 * beta / d)), "=="),
        ],
    )


@obligation(
    "appendixB.balance",
    "Appendix B.1",
    "N^{−2β/d} ≍ N/n ⟺ n ≍ N^{(2β+d)/d} ⟺ N ≍ n^{d/(2β+d)}, and then L_sq <= Õ(2N/n) = Õ(n^{−2β/(2β+d)}).",
    "symbolic",
    "theory.bounds.theorem1_n_for_eps.",
    kind=Kind.STEP,
)
def balance() -> Evidence:
    """Symbolic; and tmcheck's balancing n for ε (`bounds.theorem1_n_for_eps`) against n ≍ N^{(2β+d)/d} at
    N = ε^{−d/β}, numerically."""
    sol = sp.solve(sp.Eq(N ** (-2 * beta / d), N / n), N)
    s0 = sol[0] if sol else None
    numeric = []
    for dd, b in POINTS:
        for e_ in (0.5, 0.1):
            Nn = e_ ** (-float(dd) / float(b))
            numeric.append(
                Witness(
                    {"d": dd, "beta": b, "eps": e_, "quantity": "tmcheck n(ε) vs N^((2β+d)/d) (relative)"},
                    abs(
                        bounds.theorem1_n_for_eps(e_, float(dd), float(b))
                        / Nn ** ((2 * float(b) + float(dd)) / float(dd))
                        - 1
                    ),
                    1e-9,
                    "<=",
                )
            )
    return Evidence(
        "symbolic in n, d, β > 0; tmcheck's n(ε) at POINTS, ε in (0.5, 0.1)",
        numeric
        + [
            Witness({"quantity": "positive solutions N(n)"}, len(sol), 1, "=="),
            Witness({"quantity": "log N"}, _log(s0) if sol else None, _log(n ** (d / (2 * beta + d))), "=="),
            Witness(
                {"quantity": "log N/n"}, _log(s0 / n) if sol else None, _log(n ** (-2 * beta / (2 * beta + d))), "=="
            ),
        ],
    )


@obligation(
    "appendixB.alpha_D",
    "Appendix B.1 and eq. (3); Section 3 with β = 1",
    "α_D = 2β/(2β+d); with β = 1, α_D = 2/(2+d) and α_N = 2/d.",
    "symbolic",
    "theory.bounds.alpha_D.",
    kind=Kind.STATEMENT,
)
def alpha_D() -> Evidence:
    """Symbolic; and tmcheck's α_D, α_N (`bounds.alpha_D`, `bounds.alpha_N`) against the derived forms at POINTS."""
    aD = 2 * beta / (2 * beta + d)
    return Evidence(
        "symbolic in n, d, β > 0; tmcheck's α_D, α_N at POINTS",
        [
            Witness({"d": dd, "beta": b, "quantity": "tmcheck α_D"}, bounds.alpha_D(dd, b), derived(aD, dd, b), "==")
            for dd, b in POINTS
        ]
        + [
            Witness({"quantity": "log n^(d/(2β+d) − 1)"}, _log(n ** (d / (2 * beta + d) - 1)), _log(n ** (-aD)), "=="),
            Witness({"quantity": "α_D at β = 1"}, aD.subs(beta, 1), 2 / (2 + d), "=="),
            Witness({"quantity": "α_N at β = 1"}, (2 * beta / d).subs(beta, 1), 2 / d, "=="),
        ],
    )


@obligation(
    "appendixB.id_free_conversion",
    "Section 3: predicting α_N from α_D without the ID",
    "α_D = 2/(2+d) = α_N/(α_N+1) and α_N = α_D/(1−α_D).",
    "symbolic",
    "theory.bounds.alpha_D_from_alpha_N, alpha_N_from_alpha_D (valid for every β).",
    kind=Kind.STATEMENT,
)
def id_free_conversion() -> Evidence:
    """Symbolic; and tmcheck's conversions (`bounds.alpha_D_from_alpha_N`, `alpha_N_from_alpha_D`) on its α_N, α_D."""
    aD, aN = 2 * beta / (2 * beta + d), 2 * beta / d
    numeric = []
    for dd, b in POINTS:
        at = {"d": dd, "beta": b}
        numeric += [
            Witness(
                {**at, "identity": "tmcheck α_D from α_N"},
                bounds.alpha_D_from_alpha_N(bounds.alpha_N(dd, b)),
                bounds.alpha_D(dd, b),
                "==",
            ),
            Witness(
                {**at, "identity": "tmcheck α_N from α_D"},
                bounds.alpha_N_from_alpha_D(bounds.alpha_D(dd, b)),
                bounds.alpha_N(dd, b),
                "==",
            ),
        ]
    return Evidence(
        "symbolic in d, β > 0 (not only β = 1); tmcheck's conversions at POINTS",
        numeric
        + [
            Witness({"identity": "α_D = α_N/(α_N+1)"}, aN / (aN + 1), aD, "=="),
            Witness({"identity": "α_N = α_D/(1−α_D)"}, aD / (1 - aD), aN, "=="),
        ],
    )


def excess_risk_trial(rng: np.random.Generator, k: int = 40) -> tuple[float, float]:
    """One random discrete problem: (E(f_θ), 2 c_M ε^{1+γ}) with γ = 1, c_M the least constant of (10), both from
    theory.bounds' closed forms (`plugin_excess_risk`, `margin_constant`, `classification_bound`)."""
    p = rng.dirichlet(np.ones(k))
    eta = rng.uniform(0, 1, k)
    e = rng.uniform(0.01, 0.3)
    eta_t = np.clip(eta + rng.uniform(-e, e, k), 0, 1)
    return bounds.plugin_excess_risk(p, eta, eta_t), bounds.classification_bound(
        bounds.margin_constant(p, eta, 1.0), e, 1.0
    )


@obligation(
    "appendixB.classification",
    "Appendix B.2: from regression to classification",
    "If ||η_θ − η||∞ <= ε and P(0 < |η − 1/2| <= t) <= c_M t^γ, the plug-in rule has excess risk E(f_θ) <= 2 "
    "c_M ε^{1+γ}.",
    "numeric search",
    "theory.bounds.plugin_excess_risk and classification_bound (not used by tmcheck's empirics: a motivation only).",
    kind=Kind.STATEMENT,
)
def classification(trials: int = 2000) -> Evidence:
    rng = np.random.default_rng(0)
    pairs = [excess_risk_trial(rng) for _ in range(trials)]
    return Evidence(
        f"{trials} random discrete distributions (40 atoms), γ = 1, c_M the least constant in (10): E(f_θ) "
        "against 2c_M ε² (+1e-12)",
        [Witness({"trial": i}, a, b * (1 + 1e-12), "<=") for i, (a, b) in enumerate(pairs)],
    )
