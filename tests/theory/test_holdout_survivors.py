"""Tests that kill the survivors of the held-out mutation sample (seed 2026, commit 3cf6ca865c) in theory/:
mutation/SURVIVORS.md lists each mutant; every test names the mutants it kills. They check values, verdicts and
refusals: closed forms the code must reproduce, soundness of enclosures, the keys a report prints."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmcheck.theory import atlas, certify
from tmcheck.theory.backends import evaluate, run_blocks
from tmcheck.theory.bounds import margin_constant
from tmcheck.theory.certify_arith import Aff, TargetEnclosure, down
from tmcheck.theory.check import check_construction, verify
from tmcheck.theory.heads import _diag_max
from tmcheck.theory.lemmas import sample_structured
from tmcheck.theory.lemmas.gating import gating, gating_ffn
from tmcheck.theory.lemmas.interaction import default_kernels, interaction
from tmcheck.theory.lemmas.lemma1 import lemma1, lemma1_network, lemma1_plan, sample_domain
from tmcheck.theory.lemmas.lemma1_report import lemma1_report
from tmcheck.theory.lemmas.local_eval import Lemma1Local, _s_edges
from tmcheck.theory.lemmas.parallel import build_kind, parallelize
from tmcheck.theory.lemmas.theorem2_report import theorem2_local_report
from tmcheck.theory.manifolds import Manifold, _fibonacci, make_manifold
from tmcheck.theory.netfile import from_dict, to_dict
from tmcheck.theory.network import Block, NetworkError
from tmcheck.theory.sparse import Interaction
from tmcheck.theory.targets import TargetError, parse_target

# ---------------------------------------------------------------------------------------------------------------
# theory/atlas.py


def test_sphere_coverage_bound_of_the_octahedron_atlas():
    """Centres ±e_i on the unit sphere, r = 1: the farthest point from every centre is a face centre (1, 1, 1)/√3, at
    distance √(2 - 2/√3). The bound must lie above it and within the refined cells' half-diagonal (< 2e-3).
    kills tmcheck.theory.atlas.x_coverage_bound__mutmut_81 (range(0, None, ...) raises),
    tmcheck.theory.atlas.x_coverage_bound__mutmut_154 (T0.reshape(None) keeps the 2-d grid),
    tmcheck.theory.atlas.x_coverage_bound__mutmut_162 (near - h >= max keeps no cell)."""
    C = np.vstack([np.eye(3), -np.eye(3)])
    m = Manifold("sphere", 2, 3, 3, np.eye(3), 4.0, C, 1.0)
    q_true = math.sqrt(2 - 2 / math.sqrt(3))
    q = atlas.coverage_bound(m)
    assert q_true <= q <= q_true + 2e-3


def test_circle_atlas_constants_at_a_coarse_grid(monkeypatch):
    """The circle's μ and L_ρ from the chart grid (steps = 200, not the default, uncached): μ = 2 (K = 14 centres,
    r = 1/4: a point lies in its two nearest charts at most), and L_ρ bounds the sup of |d(ρ_0∘φ_0^{-1})/dz| computed
    from the angle, within 10%.
    kills tmcheck.theory.atlas.x__chart_grid__mutmut_15, tmcheck.theory.atlas.x__chart_constants__mutmut_11,
    tmcheck.theory.atlas.x__chart_constants__mutmut_32, tmcheck.theory.atlas.x__chart_constants__mutmut_143."""
    monkeypatch.setattr(atlas, "_CACHE", {})
    m = make_manifold("circle", 2)
    a = atlas.atlas_constants(m, steps=200)
    K, r = m.C_M, m.r
    centres = 2 * np.pi * np.arange(K) / K
    th = np.linspace(-2 * math.asin(r / 2), 2 * math.asin(r / 2), 20001)
    b = atlas.bump((2 * np.sin((th[:, None] - centres[None]) / 2)) ** 2 / r**2)
    drho = np.gradient(b[:, 0] / b.sum(1), th)
    sup = float(np.max(np.abs(drho / (np.cos(th) / (2 * r)))))
    assert a.mu == 2
    assert sup <= a.L_rho <= 1.1 * sup


# ---------------------------------------------------------------------------------------------------------------
# theory/bounds.py


def test_margin_constant_ignores_atoms_on_the_boundary():
    """P(0 < |η - 1/2| <= t): an atom with η = 1/2 has no margin and is not counted (eq. 10).
    kills tmcheck.theory.bounds.x_margin_constant__mutmut_26."""
    assert margin_constant([0.5, 0.5], [0.5, 0.75]) == pytest.approx(0.5 / 0.25)
    assert margin_constant([1.0], [0.5]) == 0.0


# ---------------------------------------------------------------------------------------------------------------
# theory/certify.py


def test_heads_enclose_the_whole_constant_value_interval():
    """A candidate pair with score 1 and a value whose positional part is the interval [1/2, 3/2] (a rational that
    is not a float, widened): the contribution's enclosure holds both ends.
    kills tmcheck.theory.certify.x__heads__mutmut_58 (adds [hi, hi])."""
    H = Aff.interval(np.zeros((1, 2, 2)), np.zeros((1, 2, 2)), 1)
    one = np.array([1.0])
    sp = certify.HeadTerms(
        np.array([0]),
        np.array([1]),
        [("c", None, None, one, one)],
        [[("c", None, np.array([0.5]), np.array([1.5]))], []],
    )
    row0, row1 = certify._heads(sp, H)
    lo, hi = row0.bounds()
    assert lo[0, 0] <= 0.5 and hi[0, 0] >= 1.5
    assert row1 is None


def test_enclosure_refuses_cells_where_the_declared_data_bound_fails():
    """A Lemma 1 network whose interaction blocks declare M = 1/1000 (meta.interaction_pattern) while its data rows
    reach 1: the locality certificate's hypothesis fails, so no cell gets a finite enclosure of T - f.
    kills tmcheck.theory.certify.x_run_block__mutmut_9 (checks the bound only on blocks without candidate pairs)."""
    plan = lemma1_plan(parse_target("x0", 1), 1.0, 1.0, 0.5, N=5)
    net = lemma1_network(plan, "exact")
    cells = (np.array([[0.0], [0.5]]), np.array([[0.01], [0.51]]))
    elo, ehi = certify.ErrorEnclosure(net, plan.target).enclose(*cells)
    assert np.isfinite(elo).all() and np.isfinite(ehi).all()
    pattern = [p if p["name"] == "sum" else dict(p, M=F(1, 1000)) for p in net.meta["interaction_pattern"]]
    tampered = dataclasses.replace(net, meta={**net.meta, "interaction_pattern": pattern})
    elo, ehi = certify.ErrorEnclosure(tampered, plan.target).enclose(*cells)
    assert (elo == -np.inf).all() and (ehi == np.inf).all()


# ---------------------------------------------------------------------------------------------------------------
# theory/certify_arith.py


def test_down_is_the_documented_bound_at_and_below_the_subnormals():
    """down(x) = x - 4u|x| - 2^-1073, rounded (its docstring): where 4u|x| underflows, exactly x - 2^-1073.
    kills tmcheck.theory.certify_arith.x_down__mutmut_10 (2^-1074)."""
    assert down(0.0) == -(2.0**-1073)
    assert down(2.0**-1070) == 2.0**-1070 - 2.0**-1073
    assert down(np.array([0.0]))[0] == -(2.0**-1073)


def test_relu_of_a_form_at_most_zero_is_exactly_zero():
    """σ(v) is exactly 0 where v <= 0 on the cell (`Aff.relu`), also where the upper bound is 0 itself: the form
    c = -2^-1072 with remainder [-1, 0] has bounds [-1 - ..., 0].
    kills tmcheck.theory.certify_arith.xǁAffǁrelu__mutmut_5 (hi < 0 takes the chord at hi = 0)."""
    v = Aff(np.array([-(2.0**-1072)]), np.zeros((1, 1)), np.array([-1.0]), np.array([0.0]))
    lo, hi = v.bounds()
    assert lo[0] < 0 and hi[0] == 0.0
    rlo, rhi = v.relu().bounds()
    assert rlo[0] == 0.0 and rhi[0] == 0.0


def test_target_enclosure_of_an_integer_power():
    """f = x0² on [0.2, 0.4] lies in [0.04, 0.16]; the enclosure contains that range and is not much wider.
    kills tmcheck.theory.certify_arith.x__iv_eval__mutmut_34 (evaluates the exponent to its own power)."""
    enc = TargetEnclosure(parse_target("x0**2", 1))
    lo, hi = np.array([[0.2]]), np.array([[0.4]])
    f = enc.enclose((lo + hi) / 2, (hi - lo) / 2, lo, hi)
    flo, fhi = f.bounds()
    assert flo[0] <= 0.04 and fhi[0] >= 0.16
    assert flo[0] >= 0.0 and fhi[0] <= 0.2


# ---------------------------------------------------------------------------------------------------------------
# theory/check.py


@pytest.mark.parametrize("kind", ["gating", "addition"])
def test_verify_is_reproducible_from_its_seed(kind):
    """The verdict's float64 check draws its inputs from `seed`: the same seed gives the same report.
    kills tmcheck.theory.check.x_verify__mutmut_5 (default_rng(None))."""
    c = build_kind(kind, 4, 1)
    reports = [verify(c, 3, exact=False, seed=1) for _ in range(3)]
    assert reports[0] == reports[1] == reports[2]


# ---------------------------------------------------------------------------------------------------------------
# theory/heads.py


def _quadratic_max_on_grid(G, p, M, n=41):
    """max of h^T G h, h = (x, p), over an (n x n) grid of [-M, M]^2, exactly."""
    xs = [-M + 2 * M * F(i, n - 1) for i in range(n)]
    best = None
    for x0 in xs:
        for x1 in xs:
            h = [x0, x1, *p]
            v = sum(h[i] * G[i][j] * h[j] for i in range(5) for j in range(5))
            best = v if best is None or v > best else best
    return best


def test_diag_max_finds_the_interior_maximum_of_a_concave_quadratic():
    """q(x) = -x0² - x1² + x0/5 + x1/5 (S = -I, no cross term) has its maximum 1/50 at the interior point
    (1/10, 1/10) of [-1, 1]^2.
    kills tmcheck.theory.heads.x__diag_max__mutmut_91 (tests S[0][1] < 0 for concavity)."""
    G = [[F(0)] * 5 for _ in range(5)]
    G[0][0] = G[1][1] = F(-1)
    G[0][4] = G[1][4] = F(1, 5)  # lin_i = G[i][4] + G[4][i] = 1/5 with p = (0, 0, 1)
    val, x = _diag_max(G, (F(0), F(0), F(1)), F(1))
    assert val == F(1, 50) and tuple(x) == (F(1, 10), F(1, 10))


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(-3, 3), min_size=25, max_size=25),
    st.tuples(st.integers(-2, 2), st.integers(-2, 2)),
)
def test_diag_max_is_the_maximum_over_the_square(entries, pt):
    """_diag_max's value is attained at its maximiser in the box and is at least the maximum over a grid."""
    G = [[F(entries[5 * i + j]) for j in range(5)] for i in range(5)]
    p = (F(pt[0], 2), F(pt[1], 2), F(1))
    M = F(1)
    val, x = _diag_max(G, p, M)
    assert all(-M <= v <= M for v in x)
    h = [*x, *p]
    assert val == sum(h[i] * G[i][j] * h[j] for i in range(5) for j in range(5))
    assert val >= _quadratic_max_on_grid(G, p, M, n=9)


# ---------------------------------------------------------------------------------------------------------------
# theory/lemmas/gating.py, interaction.py, lemma1.py: the constants a report prints


def test_gating_ffn_keeps_the_prefix_by_default():
    """z + FFN(z) keeps tokens t < t_cut and zeroes the data rows of the others, with keep left at its default.
    kills tmcheck.theory.lemmas.gating.x_gating_ffn__mutmut_1."""
    l, t_cut = 6, 2
    H = sample_structured(np.random.default_rng(0), 4, l, F(1))
    out = run_blocks([Block((), gating_ffn(l, t_cut))], H, "exact")
    assert (out[:, 0:2, :t_cut] == H[:, 0:2, :t_cut]).all()
    assert (out[:, 0:2, t_cut:] == 0).all()
    assert (out[:, 2:] == H[:, 2:]).all()


def test_gating_reports_which_side_it_keeps():
    """kills tmcheck.theory.lemmas.gating.x_gating__mutmut_122."""
    assert gating(4, 2, "suffix").constants["keep"] == "suffix"
    assert gating(4, 2).constants["keep"] == "prefix"


def test_interaction_reports_its_row_and_kernels():
    """The network's meta and the constants name the head's target row and its data kernels.
    kills tmcheck.theory.lemmas.interaction.x_interaction__mutmut_169, ..._194."""
    Q, K = default_kernels(F(1))
    c = interaction(4, 0, 3, 1, Q, K, F(1))
    assert c.network.meta["row"] == 1 and c.network.meta["t1"] == 0 and c.network.meta["t2"] == 3
    assert np.array_equal(np.asarray(c.constants["Q_data"], dtype=object), np.asarray(Q, dtype=object))
    assert np.array_equal(np.asarray(c.constants["K_data"], dtype=object), np.asarray(K, dtype=object))


def test_lemma1_construction_reports_its_grid_size():
    """kills tmcheck.theory.lemmas.lemma1.x_construction_of__mutmut_73."""
    c = lemma1(parse_target("x0", 1), 1.0, 1.0, 0.5, N=4)
    assert c.constants["N"] == 4


# ---------------------------------------------------------------------------------------------------------------
# theory/lemmas/lemma1_report.py


def test_lemma1_report_caps_exact_evaluation_at_200_points():
    """The exact backend evaluates at most 200 points (a stated cap); the report says how many, and it carries the
    growth table.
    kills tmcheck.theory.lemmas.lemma1_report.x_lemma1_report__mutmut_94, ..._189."""
    rep = lemma1_report("x0/2", 1, 0.5, 1.0, 1.0, backend="exact", n_points=240, trials=1)
    assert rep["error"]["n_points"] == 200
    assert rep["error"]["exact_mismatches"] == 0
    assert sorted({row["d"] for row in rep["growth_with_d"]}) == [1, 2, 3, 4, 5, 6]


# ---------------------------------------------------------------------------------------------------------------
# theory/lemmas/local_eval.py


def _its(t1, t2, K=None):
    Q = ((F(1), F(1), F(0), F(0), F(1)), (F(0),) * 5)  # data kernels never read rows 2-3
    return Interaction(t1, t2, 0, Q, K or Q)


def test_s_edges_keep_checking_after_a_head_without_a_shared_source():
    """An s class whose first head reads different tokens at its ends (a failure), and whose second head is shared:
    the failure is recorded and the second head still becomes an edge of the class.
    kills tmcheck.theory.lemmas.local_eval.x__s_edges__mutmut_25 (break)."""
    lo = [_its(10, 0), _its(10, 2)]
    hi = [_its(12, 1), _its(12, 2)]
    mid = [_its(11, 0), _its(11, 2)]
    failures: list = []
    out = _s_edges(("s", 10, 12), [lo, hi, mid], {0, 1, 2}, 0, failures)
    assert len(failures) == 1 and "do not share" in failures[0]
    assert [e.sources for e in out] == [(2,)]


def test_lemma1_local_evaluation_equals_the_network():
    """Built here (no cached plan): the local value at rational points equals the full network's, certified.
    kills tmcheck.theory.lemmas.local_eval.xǁLemma1Localǁ__init____mutmut_12, ..._14."""
    plan = lemma1_plan(parse_target("x0^2", 1), 3, 1, 0.1, N=3)
    net = lemma1_network(plan, "exact")
    local = Lemma1Local(plan)
    X = sample_domain(np.random.default_rng(3), 3, 1, 3)
    for x, f in zip(X, evaluate(net, X, "exact"), strict=True):
        res = local.evaluate(x)
        assert res.certified, res.failures
        assert res.value == f


# ---------------------------------------------------------------------------------------------------------------
# theory/lemmas/parallel.py


def test_parallel_block_is_stated_and_built_as_one_block():
    """Lemma 7 with the gating block second (its positional FFN read l1 tokens later): the combined block meets its
    claim exactly, in one block, as stated.
    kills tmcheck.theory.lemmas.parallel.x_parallelize__mutmut_125."""
    c = parallelize(build_kind("replace", 4, 1), build_kind("gating", 4, 1))
    check_construction(c, np.random.default_rng(0), n_inputs=3).raise_on_failure()
    assert c.stated_resources["L_T"] == 1 == len(c.network.blocks)


# ---------------------------------------------------------------------------------------------------------------
# theory/lemmas/theorem2_report.py


def test_theorem2_local_refuses_eps_one_before_building_anything():
    """ε must lie in (0, 1): ε = 1 is refused first, whatever else is wrong with the request.
    kills tmcheck.theory.lemmas.theorem2_report.x_theorem2_local_report__mutmut_9."""
    with pytest.raises(TargetError, match="ε must lie in"):
        theorem2_local_report("no-such-manifold", 2, 1.0, "x0/2", n_points=1)


def test_theorem2_local_report_keys():
    """The local report states its κ arithmetic and whether the sampled error is within ε.
    kills tmcheck.theory.lemmas.theorem2_report.x_theorem2_local_report__mutmut_132, ..._163."""
    rep = theorem2_local_report("circle", 2, 0.5, "x0/2", N=3, deep=False, n_points=1)
    assert rep["kappa_arithmetic"] == "float64"
    assert rep["within_eps"] is (rep["error"] <= 0.5)


# ---------------------------------------------------------------------------------------------------------------
# theory/manifolds.py


@pytest.mark.parametrize("n", [140, 200])
def test_fibonacci_centres_are_the_golden_angle_lattice(n):
    """The sphere's atlas centres: unit vectors whose longitudes advance by the golden angle π(3 - √5), the
    lattice whose nearest neighbours stay about 3.09/√n apart.
    kills tmcheck.theory.manifolds.x__fibonacci__mutmut_18."""
    X = _fibonacci(n)
    assert np.allclose(np.linalg.norm(X, axis=1), 1)
    step = np.diff(np.arctan2(X[:, 1], X[:, 0]))
    golden = math.pi * (3 - math.sqrt(5))  # 2π(1 - 1/φ): a step of π(1 + √5) is -golden modulo 2π
    assert np.allclose((step + golden + math.pi) % (2 * math.pi) - math.pi, 0, atol=1e-9)
    d = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1)) + 9 * np.eye(n)
    assert d.min() * math.sqrt(n) >= 3.05


# ---------------------------------------------------------------------------------------------------------------
# theory/netfile.py


def test_netfile_without_positional_names_the_file_level():
    """A network file with no positional encoding is refused, and the message says where the key is missing.
    kills tmcheck.theory.netfile.x_from_dict__mutmut_248."""
    d = to_dict(build_kind("replace", 3, 1).network)
    del d["positional"]
    with pytest.raises(NetworkError, match=r"^file: missing key 'positional'"):
        from_dict(d)


def test_union_whose_first_part_starts_after_token_zero():
    """Lemma 7's union with its first part at tokens 2-5 (gating, keeps the prefix t < 2 of its 4 tokens) and the
    second at 6-9 (replace: row 1 into row 0): each part's tokens get their own block's output. The second part's
    FFN and the split point were read at the union's offset plus l_a, without the first part's offset, so tokens 4
    and 5 got the replace FFN instead of being zeroed by the gating one."""
    from tmcheck.theory.backends import run_blocks
    from tmcheck.theory.lemmas import with_positional
    from tmcheck.theory.lemmas.parallel import union
    from tmcheck.theory.sparse import realize

    gate, repl = build_kind("gating", 4, 1), build_kind("replace", 4, 1)
    blk = union([(gate.sparse_blocks[0], 2, 4), (repl.sparse_blocks[0], 6, 4)], name="offset union")
    blocks, _ = realize([blk], 10, "exact")
    rng = np.random.default_rng(3)
    H = with_positional(
        np.concatenate(
            [gate.sample_inputs(rng, 3)[:, :, :2], gate.sample_inputs(rng, 3), repl.sample_inputs(rng, 3)], axis=2
        ),
        10,
    )
    out = run_blocks(blocks, H, "exact")
    want_a = gate.expected(with_positional(H[:, :, 2:6], 4))
    want_b = repl.expected(with_positional(H[:, :, 6:10], 4))
    assert (out[:, :2, 2:6] == want_a[:, :2]).all()
    assert (out[:, :2, 6:10] == want_b[:, :2]).all()
