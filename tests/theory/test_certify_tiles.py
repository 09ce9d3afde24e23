"""The two-level branch and bound of `theory.certify` (issue #41 item 3): cells that inherit a tile's narrow
tokens enclose the exact error, a tile cut into narrowed cells is caught, d = 3 runs, and the circle's
enclosures of x(θ) and of T - f contain the exact values."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_certify import check_known_answer, narrowing_split  # noqa: E402

from tmcheck.theory import certify
from tmcheck.theory.lemmas.lemma1 import fhat, lemma1_network, lemma1_plan
from tmcheck.theory.targets import parse_target


def lemma1_case(text: str, d: int, N: int):
    plan = lemma1_plan(parse_target(text, d), 1.0, 1.0, 0.5, N=N)
    return plan, lemma1_network(plan, "exact")


PLAN2, NET2 = lemma1_case("sin(3*x0)*x1", 2, 4)
ENC2 = certify.ErrorEnclosure(NET2, PLAN2.target)


def frozen_of(enc, tile):
    states, _, _, valid = enc.pass_(*certify.cell_floats([tile]))
    assert valid[0] == len(enc.plans)  # every data bound held
    return certify.freeze(states, enc.root.active, 0, enc.root, enc.needed, 1e-12)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 8), st.integers(0, 8), st.lists(st.integers(0, 1000), min_size=2, max_size=2))
def test_cells_inheriting_a_tile_enclose_the_exact_error(i, j, where):
    """A tile of the kink grid (spacing 1/9 at N = 4), a point of it: the inherited pass encloses f̂ - f there, and
    recomputes fewer tokens than the root pass."""
    tile = ((Fraction(i, 9), Fraction(j, 9)), (Fraction(i + 1, 9), Fraction(j + 1, 9)))
    fr = frozen_of(ENC2, tile)
    x = [a + (b - a) * Fraction(w, 1000) for a, b, w in zip(*tile, where, strict=True)]
    xf = np.array([[float(v) for v in x]])
    elo, ehi = ENC2.enclose(xf, xf, fr)
    err = float(fhat(PLAN2, x)) - float(PLAN2.target(xf).real[0])
    assert elo[0] - 1e-12 <= err <= ehi[0] + 1e-12
    assert sum(len(a) for a in fr.active) < sum(len(a) for a in ENC2.root.active)


def test_a_wrong_inheritance_is_caught():
    """The mutant: a tile's pass frozen for a cell outside the tile. Its enclosure misses the exact error."""
    fr = frozen_of(ENC2, ((Fraction(0), Fraction(0)), (Fraction(1, 9), Fraction(1, 9))))
    x = [Fraction(1, 2), Fraction(1, 2)]
    xf = np.array([[0.5, 0.5]])
    elo, ehi = ENC2.enclose(xf, xf, fr)
    err = float(fhat(PLAN2, x)) - float(PLAN2.target(xf).real[0])
    assert not (elo[0] - 1e-12 <= err <= ehi[0] + 1e-12)


def test_a_tile_cut_into_narrowed_cells_is_caught(monkeypatch):
    """The mutant: the cells a tile is cut into are narrowed, so the tile's borders (where the sup 1/12 is) are
    never enclosed; the known answer's test fails."""
    real = certify.subdivide
    monkeypatch.setattr(
        certify, "subdivide", lambda lo, hi, fan: [c for s in real(lo, hi, fan) for c in narrowing_split(*s)]
    )
    monkeypatch.setattr(certify, "certify_tiles", _tiles_always_cut)
    with pytest.raises(AssertionError):
        check_known_answer()


def _tiles_always_cut(enc, tiles, eps, max_cells=200_000, fan=3, tile_batch=16, tol=1e-12):
    """certify_tiles with every tile handed to its cells (so the subdivision is exercised even where a tile alone
    would be proven)."""
    cells = [c for t in tiles for c in certify.subdivide(*t, fan)]
    return certify.branch_and_bound(enc.enclose, cells, eps, max_cells)


def test_d3_is_proven_at_a_coarse_grid():
    plan, net = lemma1_case("x0*x1*x2", 3, 2)  # N = 2: f̂ is the trilinear-ish blend of the corners' values
    cert = certify.certify_lemma1(plan, net, eps=0.9)
    assert cert.status == "proven" and cert.bound <= 0.9


@pytest.fixture(scope="module")
def circle():
    from certify_cases import circle_enclosure

    return circle_enclosure(4)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 999), st.integers(1, 50), st.integers(0, 1000))
def test_circle_forms_contain_x_of_theta(start, width, where):
    """x(θ) = Q (cos θ, sin θ) at a point of the cell lies in the cell's forms (mpmath at 50 digits)."""
    import mpmath

    Q = np.array([[0.6, -0.8], [0.8, 0.6], [0.0, 0.0]])
    dom = certify.CircleDomain(Q, parse_target("x0", 3))
    lo, hi = np.array([[start / 160]]), np.array([[start / 160 + width / 1000]])
    x, _ = dom.forms(lo, hi)
    t = lo[0, 0] + (hi[0, 0] - lo[0, 0]) * where / 1000
    xl, xh = x.bounds()
    mid = (lo + hi) / 2
    half = (hi - lo) / 2
    e = (t - mid[0, 0]) / half[0, 0]
    with mpmath.workdps(50):
        exact = [Q[j, 0] * mpmath.cos(t) + Q[j, 1] * mpmath.sin(t) for j in range(3)]
    assert all(xl[0, j] <= float(exact[j]) + 1e-15 and float(exact[j]) - 1e-15 <= xh[0, j] for j in range(3))
    assert abs(e) <= 1 + 1e-12


def test_circle_point_enclosures_contain_the_claim(circle):
    from tmcheck.theory.lemmas.theorem2 import claim_value, rational

    plan, enc = circle
    th = np.array([[0.3], [1.7], [4.0], [5.9]])
    elo, ehi = enc.enclose(th, th)
    for k, (a,) in enumerate(th):
        x = plan.manifold.Q @ np.array([np.cos(a), np.sin(a)])
        err = float(claim_value(plan, [rational(u) for u in x])) - x[0]
        assert elo[k] - 1e-9 <= err <= ehi[k] + 1e-9


def test_certify_circle_refuses_other_manifolds(circle):
    plan, enc = circle
    other = type(plan.manifold)(**{**plan.manifold.__dict__, "name": "sphere"})
    with pytest.raises(certify.CertifyError, match="circle"):
        certify.certify_circle(type(plan)(**{**plan.__dict__, "manifold": other}), enc.net)


@pytest.fixture(scope="module")
def circle12():
    from certify_cases import circle_enclosure

    return circle_enclosure(12)


def test_a_quarter_circle_meets_every_data_bound(circle12):
    """The cause of the failed data bounds at the proven N: each FFN that reads one row is enclosed as one piecewise-
    linear function (`PiecewiseLinear`), so ψ stays in [0, 1] however wide the cell; with a chord per ReLU (the
    enclosure of the other FFNs, here forced on every block) ψ's enclosure grew with the width of ψ's argument and
    the copy block's data bound (block 2) failed on every wide cell."""
    _, enc = circle12
    quarter = [((Fraction(710, 113) * j / 4,), (Fraction(710, 113) * (j + 1) / 4,)) for j in range(4)]
    _, _, _, valid = enc.pass_(*certify.cell_floats(quarter))
    assert (valid == len(enc.plans)).all()
    per_unit = [dataclasses.replace(p, scalar=None) for p in enc.plans]
    old = certify.ErrorEnclosure(enc.net, plans=per_unit, domain=enc.domain)
    _, _, _, valid = old.pass_(*certify.cell_floats(quarter))
    assert (valid == 2).all()


def circle_case(plan, enc, tile: int, path: list, where: float, tiles: int = 16):
    """A cell of certify_circle's search (tile `tile` of `tiles`, then the halves chosen by `path`), the frozen pass of
    its tile at certify_tiles' tol, a point of the cell: (enclosure of T - f there, the exact error at the point)."""
    from tmcheck.theory.lemmas.theorem2 import claim_value, rational

    top = Fraction(710, 113)
    cell = ((top * tile / tiles,), (top * (tile + 1) / tiles,))
    states, _, _, valid = enc.pass_(*certify.cell_floats([cell]))
    fr = certify.freeze(states, enc.root.active, 0, enc.root, enc.needed, plan.eps / (100 * enc.net.l), int(valid[0]))
    for side in path:
        cell = certify.split(*cell)[side]
    lo, hi = certify.cell_floats([cell])
    elo, ehi = enc.enclose(lo, hi, fr)
    t = lo[0, 0] + (hi[0, 0] - lo[0, 0]) * where
    x = plan.manifold.Q @ np.array([np.cos(t), np.sin(t)])
    return (elo[0], ehi[0]), float(claim_value(plan, [rational(u) for u in x])) - x[0]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 15), st.lists(st.integers(0, 1), min_size=0, max_size=14), st.floats(0, 1))
def test_circle_cells_inheriting_their_tile_enclose_the_exact_error(circle12, tile, path, where):
    """Soundness at the search's settings (16 tiles, the tile's narrow tokens inherited at tol = ε/(100 l), the FFNs
    as piecewise-linear functions): on a cell 0 to 14 bisections below a tile, the exact error lies inside."""
    plan, enc = circle12
    (elo, ehi), err = circle_case(plan, enc, tile, path, where)
    assert elo - 1e-9 <= err <= ehi + 1e-9


@pytest.mark.slow
def test_lemma1_d2_is_proven():
    """d = 2, ε = 0.2, f = sin(3 x0) x1, H_f = 3: the tight N = 16 proven over [0,1]^2 (about 100 CPU s, loaded)."""
    plan = lemma1_plan(parse_target("sin(3*x0)*x1", 2), 3.0, 1.0, 0.2)
    cert = certify.certify_lemma1(plan, lemma1_network(plan, "exact"))
    assert cert.status == "proven" and cert.bound <= 0.2


@pytest.mark.slow
def test_lemma1_d3_is_proven():
    """d = 3, ε = 0.4, f = x0 x1 x2, H_f = 1.8: the tight N = 7 (l = 1053) proven over [0,1]^3 (minutes, loaded)."""
    plan = lemma1_plan(parse_target("x0*x1*x2", 3), 1.8, 1.0, 0.4)
    assert plan.N == 7
    cert = certify.certify_lemma1(plan, lemma1_network(plan, "exact"))
    assert cert.status == "proven" and cert.bound <= 0.4


@pytest.mark.slow
def test_circle_is_proven_at_a_small_grid():
    """Theorem 2 on the circle in R^3, f = x0, ε = 0.3 at N = 12 (l = 574): proven over the whole circle."""
    from tmcheck.theory.lemmas.theorem2 import theorem2_network, theorem2_plan
    from tmcheck.theory.manifolds import make_manifold

    plan = theorem2_plan(make_manifold("circle", 3, 0), parse_target("x0", 3), 0.3, 12, None, True, 0)
    cert = certify.certify_circle(plan, theorem2_network(plan, "exact"))
    assert cert.status == "proven" and cert.bound <= 0.3


@pytest.fixture(scope="module")
def proven_circle():
    """The circle in R^3, f = x0, ε = 0.3 at its proven N = 425 (l = 17920): the network `tmcheck theorem 2 --certify`
    builds by default (about 2 minutes to build and prepare)."""
    from tmcheck.theory.lemmas.theorem2 import theorem2_network, theorem2_plan
    from tmcheck.theory.manifolds import make_manifold

    m = make_manifold("circle", 3, 0)
    plan = theorem2_plan(m, parse_target("x0", 3), 0.3, None, None, True, 0)
    assert plan.N == plan.N_proven == 425
    net = theorem2_network(plan, "exact")
    return plan, net, certify.circle_enclosure(plan, net)


@pytest.mark.slow
def test_circle_is_proven_at_its_proven_N(proven_circle):
    """sup |T - f| <= 0.3 over the whole circle at N = 425, proven (about 15,000 cells; 2-4 minutes on a loaded
    machine). Before the FFNs were enclosed as piecewise-linear functions no tile met the copy block's data bound."""
    plan, net, enc = proven_circle
    cert = certify.certify_circle(plan, net, enc=enc)
    assert cert.status == "proven" and cert.bound <= 0.3


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(st.integers(0, 15), st.lists(st.integers(0, 1), min_size=0, max_size=16), st.floats(0, 1))
def test_proven_circle_cells_enclose_the_exact_error(proven_circle, tile, path, where):
    """Soundness at the proven N, at the search's settings: a cell 0 to 16 bisections below one of the 16 tiles,
    inheriting the tile's narrow tokens, encloses the exact error at a point of it."""
    plan, _, enc = proven_circle
    (elo, ehi), err = circle_case(plan, enc, tile, path, where)
    assert elo - 1e-9 <= err <= ehi + 1e-9
