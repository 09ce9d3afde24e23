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

import independent_eval  # tests/theory/independent_eval.py
import numpy as np
import pytest

from tmcheck.theory import heads, netfile, sparse
from tmcheck.theory.backends import run_blocks
from tmcheck.theory.check import check_construction
from tmcheck.theory.lemmas import interaction as lemma3
from tmcheck.theory.lemmas.lemma1 import lemma1
from tmcheck.theory.targets import parse_target

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
        for xi, ti in zip(x, t, strict=True):
            w *= _oracle_psi(3 * (N - 1) * (xi - ti))
        total += (t[0] * t[1] + t[0] / 4) * w
    return total


def check_interaction_exact():
    """Lemma 3 (Appendix G): check_construction's exactness on random structured inputs and on the critical one."""
    c = lemma3.interaction(8, 2, 6, 1, Q3, K3, Fraction(2))
    rep = check_construction(c, np.random.default_rng(0), n_inputs=12, backends=("exact",))
    assert rep.results["exact"][0], rep.results["exact"]
    H = heads.critical_input(8, 2, 6, Q3, K3, Fraction(2))
    assert (run_blocks(c.blocks, H, "exact") == c.expected(H)).all()


def check_threshold_oracle():
    """C* equals the brute-force maximum of the per-pair thresholds (`pair_threshold`, an independent oracle)."""
    l, t1, t2, M = 6, 1, 4, Fraction(2)
    brute = max(
        heads.pair_threshold(l, t1, t2, Q3, K3, M, t, k) for t in range(l) for k in range(l) if (t, k) != (t1, t2)
    )
    assert heads.minimal_C(l, Q3, K3, M, t1=t1, t2=t2) == brute


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
        orig = heads.rotation
        monkeypatch.setattr(heads, "rotation", lambda u, w: orig(u, w).T)
    elif mutation == "psi_paper":
        monkeypatch.setattr(
            sparse,
            "psi",
            lambda u: Fraction(1) if abs(u) <= 1 else (max(1 - abs(u), Fraction(0)) if abs(u) <= 2 else Fraction(0)),
        )
    elif mutation == "scale_3N":
        monkeypatch.setattr(sparse, "psi_scale", lambda N: 3 * N)
    elif mutation == "minimal_C":
        orig = heads.threshold

        def small(*a, **k):
            th = orig(*a, **k)
            return type(th)(**{**th.__dict__, "C": th.C * Fraction(9, 10)})

        monkeypatch.setattr(heads, "threshold", small)  # where minimal_C reads it
        monkeypatch.setattr(lemma3, "threshold", small)  # where Lemma 3's construction reads it
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


# ------------------------------------------------------------------ ten source mutations of theory/
# Each rewrites one line of a theory/ function (the mutated source is compiled and patched in, also where a
# module imported the name) and must fail a named check here or change a registry verdict:
#   covering_P_half     Lemma 2's corrected covering number with half the parameters (theory/bounds.py)
#   covering_no_plus1   ... without the +1 of (κ/η + 1)^P (theory/bounds.py)
#   grid_bound_half     Lemma 1's tight error bound halved, so the grid is chosen too coarse (theory/targets.py)
#   delta_eps_over_mu   Theorem 2's δ_1 = ε/μ instead of ε/(2μ) (theory/spec.py)
#   psi_ramp            the network's ψ FFN outputs a ramp, not the trapezoid (theory/sparse.py)
#   perturbation_factor the block perturbation bound without the residual's (1 + Lip(FFN)) (theory/bounds.py)
#   grid_shift          the grid points t_j = (j + 1)/(N − 1), the paper's shifted centres (theory/sparse.py)
#   mailbox_off_by_one  Theorem 2's mailbox FFN with b instead of 1 + b (theory/lemmas/theorem2.py)
#   float_ffn_1e_6      the float64 structured pass adds 1e-6 to what an FFN writes (theory/fast_eval.py)
#   atlas_sampled       Theorem 2's atlas constants estimated on samples again (theory/atlas.py)
import inspect as _inspect  # noqa: E402
import sys as _sys  # noqa: E402
import textwrap as _textwrap  # noqa: E402

from tmcheck.proofs_check import registry as _registry  # noqa: E402
from tmcheck.theory import atlas as _atlas  # noqa: E402
from tmcheck.theory import bounds as _bounds  # noqa: E402
from tmcheck.theory import fast_eval as _fast_eval  # noqa: E402
from tmcheck.theory import spec as _spec  # noqa: E402
from tmcheck.theory import targets as _targets  # noqa: E402
from tmcheck.theory.lemmas import theorem2 as _theorem2  # noqa: E402

SOURCE_MUTATIONS = {
    "covering_P_half": (
        _bounds,
        "log_covering_corrected",
        "return n_params(c) * log_sum_exp(",
        "return n_params(c) / 2 * log_sum_exp(",
    ),
    "covering_no_plus1": (
        _bounds,
        "log_covering_corrected",
        "log_sum_exp(math.log(c.kappa) + lct - math.log(delta), 0.0)",
        "(math.log(c.kappa) + lct - math.log(delta))",
    ),
    "grid_bound_half": (_targets, "tight_error_bound", "(3 * (N - 1))) ** beta", "(3 * (N - 1))) ** beta / 2"),
    "delta_eps_over_mu": (_spec, "theorem2_spec", "delta = eps / (2 * atlas.mu)", "delta = eps / atlas.mu"),
    "psi_ramp": (sparse, "psi_ffn_layers", "[1, -1, -1, 1, 0], [0, 0, 0, 0, -1]", "[1, -1, 0, 0, 0], [0, 0, 0, 0, -1]"),
    "perturbation_factor": (
        _bounds,
        "block_constants",
        "log_pert = log_sum_exp(log_sum_exp(0.0, log_ffn_lip) + math.log(c.m) + log_attn,",
        "log_pert = log_sum_exp(math.log(c.m) + log_attn,",
    ),
    "grid_shift": (
        sparse,
        "grid_points",
        "Fraction(j, N - 1) for j in range(N)",
        "Fraction(j + 1, N - 1) for j in range(N)",
    ),
    "mailbox_off_by_one": (_theorem2, "mailbox_ffn", "W2 = [[1 + b, -b],", "W2 = [[b, -b],"),
    "float_ffn_1e_6": (
        _fast_eval,
        "_ffn_float",
        "out[:, rows, :] += Y[:, rows, :]",
        "out[:, rows, :] += Y[:, rows, :] + 1e-6",
    ),
    "atlas_sampled": (
        _atlas,
        "atlas_constants",
        "return _cached(m.name, m.centres0.tobytes(), m.centres0.shape, m.r, steps, m)",
        "return sampled_constants(m)",
    ),
}


def _mutate_source(monkeypatch, name: str) -> None:
    module, func, old, new = SOURCE_MUTATIONS[name]
    orig = getattr(module, func)
    src = _textwrap.dedent(_inspect.getsource(orig))
    assert src.count(old) == 1, f"{name}: the line to mutate is not in {module.__name__}.{func}"
    ns = dict(module.__dict__)
    exec(compile(src.replace(old, new), module.__file__, "exec"), ns)
    monkeypatch.setattr(module, func, ns[func])
    for mod in list(_sys.modules.values()):  # also where a module (a test too) imported the name
        if mod is not module and getattr(mod, func, None) is orig:
            monkeypatch.setattr(mod, func, ns[func])
    monkeypatch.setattr(_atlas, "_CACHE", {})  # constants computed before the mutation must not be reused


def _verdict(oid: str, expected: str):
    def check():
        obl = next(o for o in _registry.all_obligations() if o.id == oid)
        got = _registry.run(obl).label
        assert got == expected, f"{oid}: {got} (expected {expected})"

    check.__name__ = f"verdict {oid}"
    return check


def check_covering_oracle():
    from test_recompute import oracle_log_covering  # tests/theory/test_recompute.py

    for args in (
        (2, 2, 3, 4, 3, 2, 0.5, 1.0, 1e-3),
        (1, 1, 1, 1, 1, 1, 1.0, 1.0, 1e-2),
        (3, 2, 2, 8, 2, 3, 0.1, 2.0, 1e-6),
    ):
        c = _bounds.TransformerClass(*args[:8])
        assert _bounds.log_covering_corrected(c, args[8]) == pytest.approx(oracle_log_covering(*args), rel=1e-9)


def check_lemma1_N_oracle():
    from test_recompute import oracle_lemma1_N

    for d, H, beta, eps in ((1, 1.0, 1.0, 0.1), (2, 3.0, 1.0, 0.1), (3, 1.8, 1.0, 0.4)):
        assert _targets.tight_N(d, H, beta, eps) == oracle_lemma1_N(d, H, beta, eps)


def check_theorem2_N_oracle():
    from test_recompute import oracle_theorem2_N

    assert _spec.theorem2_spec("circle", 2, 0.9, with_kappa=False).N == oracle_theorem2_N("circle", 2, 0.9)


def check_circle_L_rho():
    import test_atlas  # tests/theory/test_atlas.py

    test_atlas.test_circle_L_rho_against_a_one_dimensional_computation()


def check_sphere_coverage_bounded():
    import test_atlas

    test_atlas.test_sphere_coverage_is_bounded_not_sampled()


def check_theorem2_projection_exact():
    from tmcheck.theory.lemmas.theorem2 import theorem2
    from tmcheck.theory.manifolds import make_manifold

    c = theorem2(make_manifold("circle", 2), parse_target("x0/2", 2), 0.5, N=3)
    rep = check_construction(c, np.random.default_rng(0), n_inputs=2, backends=("exact",))
    assert rep.results["exact"][0], rep.results["exact"]


def check_lemma1_float_backend():
    c = lemma1(parse_target(L1_TEXT, L1_D), 2.0, 1.0, 0.5, N=L1_N)
    rep = check_construction(c, np.random.default_rng(1), n_inputs=3)
    assert rep.results["backends"][0], rep.results["backends"]


SOURCE_CAUGHT_BY = {
    "covering_P_half": [check_covering_oracle, _verdict("lemma2.grid_count", "HOLDS-AFTER-CORRECTION")],
    "covering_no_plus1": [check_covering_oracle, _verdict("lemma2.grid_count", "HOLDS-AFTER-CORRECTION")],
    "grid_bound_half": [check_lemma1_N_oracle, _verdict("lemma1.network_error_vs_eps", "HOLDS")],
    "delta_eps_over_mu": [check_theorem2_N_oracle, _verdict("theorem2.network_error_vs_eps", "HOLDS")],
    "psi_ramp": [check_lemma1_construction, _verdict("lemma1.psi_partition_of_unity", "HOLDS-AFTER-CORRECTION")],
    "perturbation_factor": [_verdict("lemma2.block_perturbation_sum", "HOLDS-AFTER-CORRECTION")],
    "grid_shift": [
        _verdict("lemma1.grid_centers", "HOLDS-AFTER-CORRECTION"),
        _verdict("lemma1.network_error_vs_eps", "HOLDS"),
    ],
    "mailbox_off_by_one": [check_theorem2_projection_exact, _verdict("theorem2.network_exact_projection", "HOLDS")],
    "float_ffn_1e_6": [check_lemma1_float_backend],
    "atlas_sampled": [check_circle_L_rho, check_sphere_coverage_bounded],
}


def test_source_mutations_apply_and_the_checks_pass_unmutated():
    for name in SOURCE_CAUGHT_BY:
        module, func, old, _ = SOURCE_MUTATIONS[name]
        assert _inspect.getsource(getattr(module, func)).count(old) == 1, name
    for check in {c for cs in SOURCE_CAUGHT_BY.values() for c in cs if not c.__name__.startswith("verdict")}:
        check()


@pytest.mark.parametrize(
    "mutation,check",
    [(m, c) for m, cs in SOURCE_CAUGHT_BY.items() for c in cs],
    ids=[f"{m}-{c.__name__}" for m, cs in SOURCE_CAUGHT_BY.items() for c in cs],
)
def test_source_mutation_is_caught(mutation, check, monkeypatch):
    """The check fails: an assertion, or a refusal of the network the mutation built (a ValueError: NetworkError,
    TargetError)."""
    _mutate_source(monkeypatch, mutation)
    with pytest.raises((AssertionError, ValueError)):
        check()
