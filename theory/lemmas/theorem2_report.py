"""Measuring and reporting Theorem 2's network (Section 2.4, Appendix E.2): resources against the spec
and the paper's orders, the error on the manifold and its split, for `tmcheck theorem 2`."""

from __future__ import annotations

import math

import numpy as np

from tmcheck.theory import spec as resources_spec
from tmcheck.theory.lemmas.lemma1_report import certified_sup, verdict_fields
from tmcheck.theory.lemmas.theorem2 import (
    Theorem2Plan,
    construction_of,
    error_split,
    theorem2_network,
    theorem2_plan,
)
from tmcheck.theory.manifolds import Manifold
from tmcheck.theory.network import Network, resources
from tmcheck.theory.sparse import grid_points
from tmcheck.theory.targets import TargetError


def resource_table(plan: Theorem2Plan, net: Network, measured=None) -> list[dict]:
    """Measured resources against the spec (`theory.spec.theorem2_spec`, same layout and atlas), the
    proof's head count C_M (d N^d + d D) (Step 3) and Theorem 2's orders at hidden constant 1."""
    res = resources(net) if measured is None else measured
    sp = plan.stated(net.arithmetic)
    d, D, eps, C = plan.d, plan.D, plan.eps, plan.manifold.C_M
    paper = [
        ("L_T (paper)", "O(log d): log2(d) + 5", math.log2(d) + 5 if d > 1 else 5, "L_T"),
        ("L_FFN (paper)", "O(log 1/ε): log(1/ε)", math.log(1 / eps), "L_FFN"),
        ("m (proof)", "C_M (d N^d + d D)", C * (d * plan.N**d + d * D), "m"),
        ("l / O(·)", "d ε^{-d/β}", d * eps ** (-d), "l"),
        ("m / O(·)", "d ε^{-d/β}", d * eps ** (-d), "m"),
        ("kappa / O(·)", "d² ε^{-2d/β}", d * d * eps ** (-2 * d), "kappa_blocks"),
    ]
    return resources_spec.resource_rows(sp, res, paper)


# theorem2_plan's parameters again, spelled out: this is the library call `tmcheck theorem 2` wraps
def theorem2_report(
    manifold: str,
    D: int,
    eps: float,
    text: str,
    N: int | None = None,
    max_tokens: int | None = None,
    deep: bool = True,
    n_points: int = 300,
    seed: int = 0,
    H_f: float = 1.0,
    R: float = 1.0,
    trials: int = 2,
    size_limit: int | None = None,
    certify: bool = False,
) -> dict:
    """Everything `tmcheck theorem 2` prints: atlas, grid (proven and used), error and its split, resources,
    and the verdict (`check.verify`: check_construction of the exact network on `trials` manifold points,
    and max |T - f| <= ε on n_points).

    With certify (the circle only), sup |T - f| over the whole circle is bounded by `theory.certify.certify_circle`
    and the verdict judges that certificate (`lemma1_report.certified_sup`: "proven", "refuted" or "undecided")
    instead of the sampled maximum."""
    from tmcheck.theory.fast_eval import evaluate_structured
    from tmcheck.theory.manifolds import make_manifold
    from tmcheck.theory.targets import parse_target

    if not (0 < eps < 1):
        raise TargetError(f"ε must lie in (0, 1) as in Theorem 2, got {eps}")
    if certify and manifold != "circle":
        raise TargetError(f"--certify proves the sup-norm error on the circle only, not the {manifold}")
    limit = resources_spec.SIZE_LIMIT if size_limit is None else size_limit
    m = make_manifold(manifold, D, seed)
    target = parse_target(text, D)
    if max_tokens is None:  # the size guard, before the grid values are computed (--max-tokens lowers N instead)
        _check_size(m, eps, H_f, R, N, deep, seed, limit)
    plan = theorem2_plan(m, target, eps, N, max_tokens, deep, seed, H_f=H_f, R=R)
    _check_size(m, eps, H_f, R, plan.N, deep, seed, limit)
    net = theorem2_network(plan, "exact")
    measured = resources(net)
    X = m.sample(n_points, np.random.default_rng(seed + 7))
    T = evaluate_structured(net, X, "float64")
    split = error_split(plan, X)
    err = float(np.abs(T - target(X).real).max())
    fields = _error_fields(plan, T, split, err, eps, n_points)
    if certify:
        from tmcheck.theory.certify import certify_circle

        fields["sup_error"] = certified_sup(certify_circle(plan, net, eps).as_dict(), fields["sup_error"])
        fields["within_eps"] = fields["sup_error"]["value"] <= eps
    return {
        **_plan_fields(plan, manifold, text),
        "l": net.l,
        "m": measured.m,
        "L_T": measured.L_T,
        **fields,
        "grid_points": [str(t) for t in grid_points(plan.N)],
        "resources": resource_table(plan, net, measured),
        **verdict_fields(construction_of(plan, net), plan, measured, trials, seed, fields["sup_error"]["value"], eps),
    }


def _plan_fields(plan: Theorem2Plan, manifold: str, text: str) -> dict:
    """The report's atlas and grid: manifold, D, d, τ, r, C_M, target, ε, H_f, R, N (used and proven), μ, H̃, Δ."""
    m = plan.manifold
    return {
        "manifold": manifold,
        "D": m.D,
        "d": m.d,
        "tau": m.tau,
        "r": m.r,
        "C_M": m.C_M,
        "target": text,
        "eps": plan.eps,
        "H_f": plan.H_f,
        "R_declared": plan.R_declared,
        "N": plan.N,
        "N_proven": plan.N_proven,
        "proven": plan.N >= plan.N_proven,
        "mu": plan.multiplicity,
        "H_chart": plan.H_est,
        "Delta": str(plan.Delta),
        "L_indicator": plan.L_ind,
        "deep": plan.deep,
    }


def _check_size(
    m: Manifold, eps: float, H_f: float, R: float, N: int | None, deep: bool, seed: int, limit: int
) -> None:
    """The spec's size estimate at grid N (`theory.spec.theorem2_spec`, without κ) checked against the limit."""
    resources_spec.theorem2_spec(m, eps=eps, H_f=H_f, R=R, N=N, deep=deep, seed=seed, with_kappa=False).check_size(
        limit
    )


def _error_fields(plan: Theorem2Plan, T, split: dict, err: float, eps: float, n_points: int) -> dict:
    """The report's error on the manifold and its split (Step 3): max |T - f| against ε, the network
    against the claimed T, max E_n1, E_n2 = 0 (exact projection), max E_n3 and the bound μ (E_1 + E_3)."""
    return {
        "error": err,
        "within_eps": err <= eps,
        "n_points": n_points,
        # a sampled maximum is a lower bound on the sup; theorem2_report(certify=True) replaces it on the circle
        "sup_error": {"kind": "sampled", "value": err, "method": f"max over {n_points} manifold points"},
        "network_vs_claim": float(np.abs(T - split["T"]).max()),
        "E1_max": float(split["E1"].max()),
        "E2_max": 0.0,
        "E3_max": float(split["E3"].max()),
        "bound_mu_E": plan.multiplicity * float(split["E1"].max() + split["E3"].max()),
    }


def theorem2_local_report(
    manifold: str,
    D: int,
    eps: float,
    text: str,
    N: int | None = None,
    deep: bool = True,
    n_points: int = 48,
    seed: int = 0,
    H_f: float = 1.0,
    R: float = 1.0,
) -> dict:
    """`tmcheck theorem 2 --local`: the network at its proven N (or N) never built. The plan is lazy (grid
    values on demand, R the declared bound); T(x) at each of n_points manifold points comes from
    `local_eval.Theorem2Local`, with its certificate of locality, and must equal the claim
    Σ_n L_n(φ_n(x)) 1̂_n(x) exactly. Resources: the spec's l, m, L_T, L_FFN, κ (`theory.spec.theorem2_spec`)
    beside the evaluator's own count of tokens and of heads per block over its partition. The error is a sampled
    maximum: a lower bound on the sup, over the points named."""
    from tmcheck.theory.manifolds import make_manifold
    from tmcheck.theory.targets import parse_target

    if not (0 < eps < 1):
        raise TargetError(f"ε must lie in (0, 1) as in Theorem 2, got {eps}")
    m = make_manifold(manifold, D, seed)
    target = parse_target(text, D)
    plan = theorem2_plan(m, target, eps, N, None, deep, seed, H_f=H_f, R=R, lazy=True)
    sp = plan.stated("float64")  # exact κ needs the l rational interaction vectors: not at 10^9 tokens
    X = m.sample(n_points, np.random.default_rng(seed + 7))
    errs, failures, off_claim, chosen, heads, covered = _local_points(plan, X, target(X).real)
    err = max(errs, default=math.nan)
    spec_heads = [n for _, n in sp.heads_per_block]
    resources_ok = heads == spec_heads and covered == sp.l
    checks = {
        "certified": {
            "passed": not failures,
            "detail": f"{len(failures)} of {n_points} points uncertified" + (f": {failures[0]}" if failures else ""),
        },
        "claim": {"passed": off_claim == 0, "detail": f"T(x) != the claim at {off_claim} points"},
        "resources": {
            "passed": resources_ok,
            "detail": f"evaluator: l = {covered}, heads per block {heads}; spec: l = {sp.l}, {spec_heads}",
        },
    }
    within = bool(errs) and err <= eps
    ok = all(c["passed"] for c in checks.values()) and within
    return {
        "mode": "local",
        **_plan_fields(plan, manifold, text),
        "l": sp.l,
        "m": sp.m,
        "L_T": sp.L_T,
        "L_FFN": sp.L_FFN,
        "kappa": float(sp.kappa),
        "kappa_arithmetic": "float64",
        # T(x) is the output of the network with the plan's rational weights, in exact arithmetic (a float64
        # network at 10^9 tokens would lose Lemma 3's cancellation of C ~ κ; not claimed here)
        "evaluation": "exact, local (theory.lemmas.local_eval), certified per point",
        "evaluated": {"l": covered, "L_T": len(heads or []), "m": max(heads or [0]), "heads_per_block": heads},
        "tokens_chosen_max": max(chosen, default=0),
        "error": err,
        "within_eps": within,
        "n_points": n_points,
        "sup_error": {
            "kind": "sampled",
            "value": err,
            "method": f"max over {n_points} manifold points, T(x) by certified local evaluation (a lower bound on sup)",
        },
        "check": {"results": checks},
        "failed": [k for k, c in checks.items() if not c["passed"]] + ([] if within else ["error > ε"]),
        "ok": ok,
        "verdict": "HOLDS" if ok else "FAILS",
    }


def _local_points(plan, X, f):
    """Each point's certified local value against f and the claim: (errors of the certified points, the first
    failure of each uncertified one, how many certified values differ from the claim, tokens chosen per point,
    the evaluator's heads per block, its token count)."""
    from fractions import Fraction

    from tmcheck.theory.lemmas.local_eval import Theorem2Local
    from tmcheck.theory.lemmas.theorem2 import claim_value, rational

    local = Theorem2Local(plan)
    errs, failures, off_claim, chosen, heads, covered = [], [], 0, [], None, None
    for x, fx in zip(X, f, strict=True):
        xr = [rational(v) for v in x]
        res = local.evaluate(xr)
        heads, covered = res.heads, res.l
        chosen.append(res.tokens_chosen)
        if not res.certified:
            failures.append(res.failures[0])
            continue
        off_claim += res.value != claim_value(plan, xr)
        errs.append(abs(float(res.value - Fraction(float(fx)))))
    return errs, failures, off_claim, chosen, heads, covered
