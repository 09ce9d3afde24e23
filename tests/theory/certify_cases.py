"""Shared cases of the certificate tests: the Theorem 2 circle network (f = x0 in R^3, ε = 0.3) at grid N."""

from __future__ import annotations


def circle_enclosure(N: int):
    """(plan, certify.ErrorEnclosure over θ) of the exact circle network at grid N."""
    from tmcheck.theory import certify
    from tmcheck.theory.lemmas.theorem2 import theorem2_network, theorem2_plan
    from tmcheck.theory.manifolds import make_manifold
    from tmcheck.theory.targets import parse_target

    m = make_manifold("circle", 3, 0)
    plan = theorem2_plan(m, parse_target("x0", 3), 0.3, N, None, True, 0)
    net = theorem2_network(plan, "exact")
    return plan, certify.ErrorEnclosure(net, domain=certify.CircleDomain(m.Q, plan.target))
