"""Independent recomputations from the paper's formulas (not from the code under test): Lemma 2's corrected
covering number, Lemma 1's proven grid N and Theorem 2's proven grid N. Each oracle below is written from the
derivation (Appendix E.1, E.2, F.2 and their corrections in the docstrings), with nothing from theory.bounds,
theory.targets or theory.spec but the closed-form atlas constants it takes as inputs."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmcheck.theory import bounds
from tmcheck.theory.atlas import atlas_constants
from tmcheck.theory.manifolds import make_manifold
from tmcheck.theory.spec import lemma1_spec, theorem2_spec
from tmcheck.theory.targets import tight_N


# ------------------------------------------------------------------ Lemma 2, corrected (Appendix F.2)
def oracle_log_covering(L_T, L_FFN, w, l, d, m, kappa, M, delta) -> float:
    """log N(δ) <= P log(κ C_T/δ + 1), P = L_T(3d²m + Σ_layers (fan_in + 1) fan_out), C_T from the recursion
    δ_k <= Lip_k δ_{k−1} + π_k η over blocks with hidden-state bounds M_k (plain floats, no logs, small classes)."""
    dims = [d, d] if L_FFN == 1 else [d] + [w] * (L_FFN - 1) + [d]
    P = L_T * (3 * d * d * m + sum((dims[i] + 1) * dims[i + 1] for i in range(len(dims) - 1)))
    Mk, CT = max(M, 1.0), 0.0
    for _ in range(L_T):
        MZ = Mk + m * l * d**4 * kappa**3 * Mk**3
        y, dlt = MZ, 0.0
        for fan_in in dims[:-1]:
            dlt = fan_in * kappa * dlt + fan_in * y + 1.0
            y = fan_in * kappa * y + kappa
        lip_ffn = math.prod(f * kappa for f in dims[:-1])
        lip = (1 + lip_ffn) * (1 + 3 * m * l * d**4 * kappa**3 * Mk**2)
        pert = (1 + lip_ffn) * m * 3 * d**4 * kappa**2 * Mk**3 * l + dlt
        CT = lip * CT + pert
        Mk = MZ + y
    return P * math.log(kappa * CT / delta + 1)


# a class's sizes as (low, high), wider than test_lipschitz.py's (l to 16): a closed form is cheap, no network runs
CLASS_SIZES = {"L_T": (1, 3), "L_FFN": (1, 3), "w": (1, 6), "l": (1, 16), "d": (1, 5), "m": (1, 4)}


@settings(max_examples=60, deadline=None)
@given(
    **{name: st.integers(*span) for name, span in CLASS_SIZES.items()},
    kappa=st.sampled_from([0.01, 0.1, 0.5, 1.0, 2.0]),
    M=st.sampled_from([0.5, 1.0, 2.0]),
    delta=st.sampled_from([1e-6, 1e-3, 0.1]),
)
def test_corrected_covering_number_recomputed(L_T, L_FFN, w, l, d, m, kappa, M, delta):
    c = bounds.TransformerClass(L_T=L_T, L_FFN=L_FFN, w=w, l=l, d_embd=d, m=m, kappa=kappa, M=M)
    want = oracle_log_covering(L_T, L_FFN, w, l, d, m, kappa, M, delta)
    assert bounds.log_covering_corrected(c, delta) == pytest.approx(want, rel=1e-9)


def test_corrected_covering_number_at_the_readme_class():
    c = bounds.TransformerClass(L_T=3, L_FFN=4, w=5, l=64, d_embd=5, m=32, kappa=10.0, M=1.0, D=8)
    got = bounds.log_covering_corrected(c, 1e-3)
    # the hidden-state tower overflows floats here: compare through the class one block shorter, where it does not
    assert math.isfinite(got) and got > bounds.n_params(c) * math.log(10.0)
    small = bounds.TransformerClass(L_T=1, L_FFN=4, w=5, l=64, d_embd=5, m=32, kappa=10.0, M=1.0, D=8)
    assert bounds.log_covering_corrected(small, 1e-3) == pytest.approx(
        oracle_log_covering(1, 4, 5, 64, 5, 32, 10.0, 1.0, 1e-3), rel=1e-9
    )


# ------------------------------------------------------------------ Lemma 1's proven grid (Appendix E.1, corrected)
def oracle_lemma1_N(d, H, beta, eps) -> int:
    """The least N >= 2 with H (2√d/(3(N−1)))^β <= ε, by counting up."""
    N = 2
    while H * (2 * math.sqrt(d) / (3 * (N - 1))) ** beta > eps:
        N += 1
    return N


@pytest.mark.parametrize(
    "d,H,beta,eps",
    [
        (1, 1.0, 1.0, 0.1),
        (2, 3.0, 1.0, 0.1),
        (1, 1.0, 0.5, 0.1),
        (3, 1.8, 1.0, 0.4),
        (4, 1.0, 1.0, 0.5),
        (2, 2.0, 0.7, 0.2),
    ],
)
def test_lemma1_proven_N_recomputed(d, H, beta, eps):
    want = oracle_lemma1_N(d, H, beta, eps)
    assert tight_N(d, H, beta, eps) == want
    assert lemma1_spec(d, eps=eps, H_f=H, beta=beta, with_kappa=False).N == want
    assert bounds.lemma1_N_corrected(d, eps, H, beta) == want


def test_lemma1_proven_N_for_the_kink():
    """abs(x0 - 0.35) at ε = 0.1 (H_f = β = 1): N = 8; a grid chosen from half the bound would take 5."""
    assert oracle_lemma1_N(1, 1.0, 1.0, 0.1) == tight_N(1, 1.0, 1.0, 0.1) == 8


# ------------------------------------------------------------------ Theorem 2's proven grid (Appendix E.2, corrected)
def oracle_theorem2_N(name, D, eps, H_f=1.0, R=1.0, beta=1.0) -> int:
    """δ = ε/(2μ) (only the μ charts containing x contribute), H̃ = H_f L_φ^β + R L_ρ with L_φ = 2r/√(1 − r²)
    (written here) and μ, L_ρ the atlas's closed forms; N the least with H̃ (2√d/(3(N−1)))^β <= δ."""
    m = make_manifold(name, D)
    a = atlas_constants(m)
    L_phi = 2 * m.r / math.sqrt(1 - m.r**2)
    H = H_f * L_phi**beta + R * a.L_rho
    return oracle_lemma1_N(m.d, H, beta, eps / (2 * a.mu))


@pytest.mark.parametrize("name,D,eps", [("circle", 2, 0.9), ("circle", 3, 0.3), ("torus", 4, 0.5), ("sphere", 3, 0.5)])
def test_theorem2_proven_N_recomputed(name, D, eps):
    sp = theorem2_spec(name, D, eps, with_kappa=False)
    assert sp.N == sp.extra["N_proven"] == oracle_theorem2_N(name, D, eps)
    assert sp.extra["delta"] == pytest.approx(eps / (2 * sp.extra["mu"]), rel=1e-15)
