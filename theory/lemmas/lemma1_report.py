"""Measuring and reporting Lemma 1's network (Section 2.4, Appendix E.1): the error against ε on a dense
sample, the resources against the spec and the paper's formulas, the growth with d, and the verdict, for
`tmcheck lemma 1`. Building lives in `lemmas.lemma1`.

One network is built (exact arithmetic) and reused: the conformance check runs it exactly and in float64,
the error is measured on its float64 evaluation (`fast_eval`, the kernels of its heads computed once), and
the measured resources are taken once.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from tmcheck.theory import spec as resources_spec
from tmcheck.theory.lemmas.lemma1 import Lemma1Plan, construction_of, fhat, lemma1_network, lemma1_plan
from tmcheck.theory.network import Network, Resources, resources
from tmcheck.theory.sparse import F1, grid_points
from tmcheck.theory.targets import paper_error_bound, paper_N, tight_error_bound


def resource_table(plan: Lemma1Plan, net: Network, measured: Resources | None = None) -> list[dict]:
    """Measured resources against the spec (`theory.spec.lemma1_spec`, same layout) and against the
    paper's Appendix E.1 counts (B_1 = B(Nd, 7), log d + 4 blocks, Lemma 3's C = 16 d_embd^4 κ_B^2
    M^2 l^2/π^2 with κ_B = R, M = 1) and O(·) forms at hidden constant 1 (the ratio is the constant hidden)."""
    res = resources(net) if measured is None else measured
    sp = plan.stated(net.arithmetic)
    d, l, eps, beta = plan.d, plan.l, plan.eps, plan.beta
    kB = max(F1, plan.R)
    paper = [
        ("L_T (paper)", "log(d) + 4", math.log2(d) + 4, "L_T"),
        ("L_FFN (paper)", "7 (B_1's FFN)", 7, "L_FFN"),
        (
            "kappa (paper)",
            "16·5^4 κ_B² M² l²/π² (Lemma 3)",
            float(16 * 5**4 * kB**2 * l * l) / math.pi**2,
            "kappa_blocks",
        ),
        ("l / O(·)", "d ε^{-d/β}", d * eps ** (-d / beta), "l"),
        ("m / O(·)", "d ε^{-d/β}", d * eps ** (-d / beta), "m"),
        ("kappa / O(·)", "d² ε^{-2d/β}", d * d * eps ** (-2 * d / beta), "kappa_blocks"),
    ]
    return resources_spec.resource_rows(sp, res, paper)


def measure_error(plan: Lemma1Plan, net: Network, n_points: int, backend: str, rng: np.random.Generator) -> dict:
    """max |T - f| over a dense sample of [0,1]^d (corners, a grid, uniform points), T evaluated by
    `fast_eval` in the given backend; with the exact backend T is also compared with f̂ (==)."""
    from tmcheck.theory.fast_eval import evaluate_structured
    from tmcheck.theory.targets import check_sample

    X = check_sample(plan.d, n_points, rng, per_axis=max(2, min(65, int(round((4 * n_points) ** (1 / plan.d))))))
    if backend == "exact":
        X = X[:n_points]
        Xq = np.array([[Fraction(v).limit_denominator(10**6) for v in x] for x in X], dtype=object)
        T = evaluate_structured(net, Xq, "exact")
        mismatches = sum(1 for x, t in zip(Xq, T, strict=True) if t != fhat(plan, x))
        Xf = np.vectorize(float)(Xq).astype(np.float64)
        Tf = np.vectorize(float)(T).astype(np.float64)
    else:
        mismatches = None
        Xf = X
        Tf = evaluate_structured(net, X, "float64")
    err = np.abs(Tf - plan.target(Xf).real)
    worst = int(np.argmax(err))
    return {
        "max_error": float(err.max()),
        "argmax": Xf[worst].tolist(),
        "n_points": len(Xf),
        "exact_mismatches": mismatches,
        "backend": backend,
    }


def lemma1_report(
    text: str,
    d: int,
    eps: float,
    beta: float,
    H: float,
    R=None,
    grid: str = "tight",
    N: int | None = None,
    backend: str = "float64",
    n_points: int = 2000,
    seed: int = 0,
    trials: int = 4,
    size_limit: int = resources_spec.SIZE_LIMIT,
    certify: bool = False,
) -> dict:
    """Everything `tmcheck lemma 1` prints: grid, error bounds, measured error, resources, and the verdict
    (`check.verify`: check_construction of the exact network on `trials` inputs, and max |T - f| <= ε).
    The network's size is estimated from the spec and checked against `size_limit` before any work.

    With certify, sup |T - f| over all of [0,1]^d is bounded by `theory.certify` and the verdict's error is
    that certificate's ("proven"; a refuted certificate's error is its counterexample's), else the sampled
    maximum ("sampled", a lower bound on the sup); `sup_error` says which and by what method."""
    from tmcheck.theory.targets import check_constants, check_target, parse_target

    check_constants(d, H, beta, eps)
    resources_spec.lemma1_spec(d, N, eps=eps, H_f=H, beta=beta, grid=grid, with_kappa=False).check_size(size_limit)
    target = parse_target(text, d)
    rng = np.random.default_rng(seed)
    rep = check_target(target, H, beta, None if R is None else float(R), rng)
    plan = lemma1_plan(target, H, beta, eps, R, grid, N)
    net = lemma1_network(plan, "exact")
    measured = resources(net)
    err = measure_error(plan, net, n_points if backend != "exact" else min(n_points, 200), backend, rng)
    sup = sup_error(plan, net, err, eps, certify)
    return {
        "target": text,
        "d": d,
        "eps": eps,
        "beta": beta,
        "H_f": H,
        "R": float(plan.R),
        "grid": grid,
        "N": plan.N,
        "grid_points": [str(t) for t in grid_points(plan.N)],
        "paper_N": paper_N(d, H, beta, eps),
        "tight_bound": tight_error_bound(d, H, beta, plan.N) + 2.0**-41,
        "paper_bound": paper_error_bound(d, H, beta, plan.N),
        "sampled_holder_ratio": rep.holder_ratio,
        "error": err,
        "within_eps": sup["value"] <= eps,
        "sup_error": sup,
        "resources": resource_table(plan, net, measured),
        "growth_with_d": growth_table(eps, H, beta, range(1, 7)),
        **verdict_fields(construction_of(plan, net), plan, measured, trials, seed, sup["value"], eps),
    }


def sup_error(plan: Lemma1Plan, net: Network, err: dict, eps: float, certify: bool) -> dict:
    """The error the verdict judges: the sampled maximum ("sampled"), or with certify the sup-norm certificate of
    `theory.certify` over [0,1]^d (`certified_sup`)."""
    sampled = {"kind": "sampled", "value": err["max_error"], "method": f"max over {err['n_points']} points"}
    if not certify:
        return sampled
    from tmcheck.theory.certify import certify_lemma1

    return certified_sup(certify_lemma1(plan, net, eps).as_dict(), sampled)


def certified_sup(cert: dict, sampled: dict) -> dict:
    """A sup-norm certificate (`theory.certify.Certificate.as_dict`) as the error a verdict judges: "proven" (its
    upper bound on sup |T - f|, <= ε), "refuted" (a certified lower bound on |T - f| at its counterexample, > ε), or
    "undecided" (the cell budget ran out: the sampled maximum, a lower bound on the sup, is judged and says so)."""
    status, out = cert["status"], {"kind": cert["status"], "method": cert["method"], "certificate": cert}
    if status == "proven":
        return {**out, "value": cert["bound"]}
    if status == "refuted":
        return {**out, "value": cert["error_at_counterexample"]}
    method = f"certificate undecided after {cert['cells']} cells; {sampled['method']} (a lower bound on the sup)"
    return {**out, "value": sampled["value"], "method": method}


def verdict_fields(construction, plan, measured: Resources, trials: int, seed: int, error: float, eps: float) -> dict:
    """The closing fields of a Lemma 1 or Theorem 2 report (what cli.common.finish_construction reads): the
    measured resources, `check.verify`'s verdict on the construction (its check on `trials` inputs, and
    error <= ε), the network and its plan."""
    from tmcheck.theory.check import verify

    verdict = verify(construction, trials, True, seed, error=error, eps=eps, measured=measured)
    return {
        "measured": measured.as_dict(),
        **{key: verdict[key] for key in ("verdict", "ok", "check", "failed")},
        "network": construction.network,
        "plan": plan,
    }


def growth_table(eps: float, H: float = 1.0, beta: float = 1.0, ds=range(1, 9)) -> list[dict]:
    """l, m and κ (the spec's counts, `theory.spec.lemma1_spec`, float64 κ at R = 1) as functions of d at fixed
    ε, for the paper's and the tight N; `ratio_l` = l / (d ε^{-d/β}) is the factor Lemma 1's O(·) hides (it
    should depend on H_f only)."""
    out = []
    for d in ds:
        for kind in ("paper", "tight"):
            sp = resources_spec.lemma1_spec(d, eps=eps, H_f=H, beta=beta, grid=kind, arithmetic="float64")
            lf = float(sp.l) if sp.l < 1e300 else math.inf
            order = d * eps ** (-d / beta)
            out.append(
                {
                    "d": d,
                    "grid": kind,
                    "N": sp.N,
                    "l": lf,
                    "m": float(sp.m) if lf < math.inf else math.inf,
                    "kappa": float(sp.kappa),
                    "ratio_l": lf / order,
                    "ratio_kappa": float(sp.kappa) / (d * d * eps ** (-2 * d / beta)),
                }
            )
    return out
