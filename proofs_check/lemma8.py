"""Lemma 8 (Appendix H, cited from Chen et al. 2022, Lemma 2): local charts by tangent projection.

For r <= τ/4, U = B(c, r) ∩ M is mapped diffeomorphically onto its image by the orthogonal projection
P onto T_c M. Checked on manifolds with known reach: the circle and the 2-sphere of radius τ (reach τ),
by sampling U densely and testing injectivity of P (minimum separation of images relative to the
points) and the rank of its differential.
"""

from __future__ import annotations

import numpy as np

from tmcheck.proofs_check.registry import Evidence, Kind, Witness, obligation
from tmcheck.theory.atlas import chart_lipschitz
from tmcheck.theory.manifolds import make_manifold


def circle_check(tau: float, r: float, n: int = 20001) -> tuple[float, float]:
    """(min over U of d/dθ of the tangent coordinate, min spacing of sorted images) for the circle of radius τ."""
    theta_max = 2 * np.arcsin(min(1.0, r / (2 * tau)))  # ||x − c|| < r  <=>  |θ| < θ_max
    th = np.linspace(-theta_max, theta_max, n)[1:-1]
    coord = tau * np.sin(th)  # c = (τ, 0): the tangent coordinate of x = τ(cos θ, sin θ)
    deriv = tau * np.cos(th)
    return float(deriv.min()), float(np.diff(coord).min())


def sphere_check(tau: float, r: float, rng: np.random.Generator, n: int = 4000) -> tuple[float, float]:
    """(min height above the tangent plane's orthogonal direction, min |det| of the chart's differential) on U for S²
    of radius τ."""
    theta_max = 2 * np.arcsin(min(1.0, r / (2 * tau)))
    th = np.arccos(rng.uniform(np.cos(theta_max), 1, n))
    z = tau * np.cos(th)  # c = (0, 0, τ); P(x) = (x1, x2) is injective on {z > 0}
    # the map (θ, φ) -> P(x) = τ sin θ (cos φ, sin φ) has |det| = τ² sin θ cos θ; relative to the area element τ² sin θ
    det_rel = np.cos(th)
    return float(z.min()), float(det_rel.min())


def atlas_check(name: str, D: int, rng: np.random.Generator, n: int = 400) -> tuple[float, float]:
    """On tmcheck's atlas (`manifolds.make_manifold`, r = τ/4): (the largest |φ_n^{-1}(φ_n(x)) − x| over sampled x in
    each U_n, the largest |x − x'| / (L_φ |φ_n(x) − φ_n(x')|) over pairs in U_n, L_φ = `atlas.chart_lipschitz`)."""
    m = make_manifold(name, D)
    X = m.sample(n * 8, rng)
    inside = m.in_chart(X)
    back, ratio = 0.0, 0.0
    for c in range(m.C_M):
        P = X[inside[:, c]][:n]
        if len(P) < 2:
            continue
        Z = m.chart(c, P)
        inv = [m.chart_inverse(c, z) for z in Z]
        back = max(back, max(np.linalg.norm(x - y) if y is not None else np.inf for x, y in zip(P, inv, strict=True)))
        dz = np.linalg.norm(Z[1:] - Z[:-1], axis=1)
        ratio = max(ratio, float((np.linalg.norm(P[1:] - P[:-1], axis=1) / (chart_lipschitz(m.r) * dz)).max()))
    return back, ratio


@obligation(
    "lemma8.local_diffeomorphism",
    "Appendix H, Lemma 8 (Chen et al. 2022, Lemma 2)",
    "If r <= τ/4, U_n = B(c_n, r) ∩ M is diffeomorphic to a subset of R^d; the orthogonal projection P_n onto "
    "T_{c_n}M is a diffeomorphism.",
    "numeric search",
    "theory's charts project onto the tangent space at c_n with r <= τ/4.",
    kind=Kind.STATEMENT,
)
def local_diffeomorphism(taus=(0.5, 1.0, 3.0)) -> Evidence:
    rng = np.random.default_rng(0)
    wits = []
    for tau in taus:
        r = tau / 4
        dmin, gap = circle_check(tau, r)
        zmin, det = sphere_check(tau, r, rng)
        for name, v in (
            ("circle min dP/dθ", dmin),
            ("circle min image gap", gap),
            ("sphere min height", zmin),
            ("sphere min relative Jacobian", det),
        ):
            wits.append(Witness({"tau": tau, "r": r, "quantity": name}, v, 0.0, ">"))
    for name, D in (("circle", 3), ("sphere", 3), ("torus", 4)):
        back, ratio = atlas_check(name, D, rng)
        wits.append(Witness({"tau": 1.0, "r": 0.25, "quantity": f"tmcheck {name}: |φ^-1(φ(x)) − x|"}, back, 1e-9, "<="))
        wits.append(
            Witness({"tau": 1.0, "r": 0.25, "quantity": f"tmcheck {name}: |Δx| / (L_φ |Δz|)"}, ratio, 1.0, "<=")
        )
    return Evidence(
        f"circle and 2-sphere of radius τ in {list(taus)} (reach τ), r = τ/4, U sampled densely: injectivity and the "
        "differential's rank (each quantity must be > 0); tmcheck's atlases (circle, sphere, torus, τ = 1): the chart "
        "inverted on sampled points of every U_n, and its Lipschitz constant L_φ",
        wits,
        note="On U = B(c, τ/4) ∩ M the angle from c is below 2 arcsin(1/8) ≈ 0.25 < π/2.",
    )
