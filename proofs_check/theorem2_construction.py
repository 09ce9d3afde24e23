"""Theorem 2 (Section 2.4, Appendix E.2) checked by running tmcheck's network (theory.lemmas.theorem2).

The symbolic obligations are in proofs_check.theorem2; these build the corrected network on concrete
manifolds (theory.manifolds) and compute: the exact projection (E_{n,2} = 0), the exact claim, the
error split, and what the proven grid costs.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tmcheck.proofs_check.registry import Result, Verdict, obligation
from tmcheck.theory.fast_eval import evaluate_structured, forward_structured
from tmcheck.theory.lemmas.theorem2 import _q, claim_parts, claim_value, error_split, theorem2, theorem2_spec
from tmcheck.theory.manifolds import make_manifold
from tmcheck.theory.targets import parse_target


def _circle():
    return theorem2(make_manifold("circle", 2), parse_target("x0*x1 + x1/2", 2), 0.5, N=3, arithmetic="exact")


@obligation(
    "theorem2.network_exact_projection",
    "Appendix E.2, Step 2.2",
    "We implement φ_n with a transformer block … this approximation is exact, so that E_{n,2} = 0.",
    "construction",
    "Block 1 of theory.lemmas.theorem2: D Lemma 3 heads per coordinate into row 1 and a mailbox FFN (no gating).",
)
def network_exact_projection() -> Result:
    c = _circle()
    spec = c.constants["spec"]
    meta = {**c.network.meta, "interaction_pattern": c.network.meta["interaction_pattern"][:1]}
    first = dataclasses.replace(c.network, blocks=c.network.blocks[:1], meta=meta)
    n_checked = 0
    for x in spec.manifold.sample(np.random.default_rng(0), 5):
        xq = [_q(v) for v in x]
        H1 = forward_structured(first, np.array([xq], dtype=object), "exact")[0]
        for n, (_, _, z) in enumerate(claim_parts(spec, xq)):
            got = [H1[0, n * spec.Lc + spec.D + i] for i in range(spec.d)]
            if got != z:
                return Result(Verdict.FAILS, f"chart {n}: {got} != φ_n(x) = {z}", counterexample={"x": [str(v) for v in xq], "chart": n})
            n_checked += 1
    return Result(Verdict.HOLDS, f"z tokens == φ_n(x) exactly for {n_checked} (point, chart) pairs on the circle (C_M = {spec.manifold.C_M}).")


@obligation(
    "theorem2.network_claim",
    "Appendix E.2, Step 3",
    "T_f(x) = Σ_n T_{f̃_n} ∘ T_{φ_n}(x) · T_{1_{U_n}}(x) is computed by one transformer network.",
    "construction",
    "The indicator is an extra factor of each chart's Lemma 1 product tree; charts share every block's FFN (Lemma 7 without gating).",
)
def network_claim() -> Result:
    c = _circle()
    spec = c.constants["spec"]
    X = np.array([[_q(v) for v in x] for x in spec.manifold.sample(np.random.default_rng(1), 6)], dtype=object)
    T = evaluate_structured(c.network, X, "exact")
    bad = [x for x, t in zip(X, T) if t != claim_value(spec, x)]
    if bad:
        return Result(Verdict.FAILS, "network differs from Σ_n L_n(φ_n) 1̂_n", counterexample={"x": [str(v) for v in bad[0]]})
    return Result(Verdict.HOLDS, f"T(x) == Σ_n L_n(φ_n(x)) 1̂_n(x) exactly at {len(X)} points on the circle "
                                 f"(l = {c.network.l}, {len(c.network.blocks)} blocks).")


@obligation(
    "theorem2.network_error_split",
    "Appendix E.2, Step 2 and Step 3",
    "||f − T_f||_{L∞(M)} <= Σ_{n=1}^{C_M} E_{n,1} + E_{n,2} + E_{n,3}, with δ_{n,1} = δ_{n,3} = ε/(2C_M).",
    "construction",
    "Only the μ charts containing x contribute (1̂_n = 0 outside U_n): theorem2_spec splits ε/(2μ).",
)
def network_error_split() -> Result:
    m = make_manifold("circle", 3)
    f = parse_target("x0*x1 + x2", 3)
    spec = theorem2_spec(m, f, 0.3, N=12)
    X = m.sample(np.random.default_rng(2), 200)
    es = error_split(spec, X)
    per_point = spec.multiplicity * (es["E1"].max() + es["E3"].max())
    total = float(es["E1"].sum() + es["E3"].sum())
    ok = es["err"] <= per_point + 1e-12
    return Result(
        Verdict.HOLDS if ok else Verdict.FAILS,
        f"Circle in R^3, C_M = {m.C_M}, μ = {spec.multiplicity}, N = {spec.N}: measured error {es['err']:.3g} <= "
        f"μ·max(E_n1 + E_n3) = {per_point:.3g} <= the paper's Σ_n (E_n1 + E_n2 + E_n3) = {total:.3g}; max E_n1 = "
        f"{es['E1'].max():.3g}, E_n2 = 0, max E_n3 = {es['E3'].max():.3g}. The sum over all C_M charts is "
        f"{total / max(per_point, 1e-300):.3g} times looser than needed.",
        counterexample=None if ok else {"err": es["err"], "bound": per_point},
    )


@obligation(
    "theorem2.network_proven_grid_size",
    "Theorem 2 (Section 2.4) with the proof's ε-split",
    "There exists a network with l = O(d ε^{−d/β}) tokens achieving ||T − f||_{L∞(M)} <= ε.",
    "construction",
    "theorem2_spec reports the proven N (from an estimated chart Lipschitz constant) and tmcheck theorem 2 builds smaller N on request.",
)
def network_proven_grid_size() -> Result:
    m = make_manifold("sphere", 8)
    spec = theorem2_spec(m, parse_target("x0*x1", 8), 0.2, N=2)
    Np = spec.N_proven
    l_proven = m.C_M * (m.D + m.d + 1 + m.d * Np + (m.d + 1) * Np**m.d)
    return Result(
        Verdict.HOLDS,
        f"Sphere in R^8, f = x0·x1, ε = 0.2: C_M = {m.C_M} charts (r = τ/4), μ = {spec.multiplicity}, estimated chart "
        f"Lipschitz constant {spec.H_est:.3g}, proven N = {Np}, so l = {l_proven} tokens (d ε^−d = {2 * 0.2**-2:.0f}): the "
        "order holds with a constant carrying C_M and the chart Lipschitz constant. tmcheck theorem 2 builds a smaller N "
        "when asked and reports its measured (not guaranteed) error.",
        data={"N_proven": Np, "l_proven": l_proven, "C_M": m.C_M},
    )
