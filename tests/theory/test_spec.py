"""theory.spec: one source for the resources of Lemma 1 and Theorem 2 (Appendix E). Every count the spec
states equals what `network.resources` measures on the network the builder makes, for every manifold; a spec by
manifold name describes the default atlas; a grid too small is named."""

from __future__ import annotations

import math

import pytest

from tmcheck.theory import bounds
from tmcheck.theory.lemmas.lemma1 import lemma1_network, lemma1_plan
from tmcheck.theory.lemmas.theorem2 import theorem2_network, theorem2_plan
from tmcheck.theory.manifolds import make_manifold
from tmcheck.theory.network import resources
from tmcheck.theory.spec import (
    lemma1_spec,
    level_sizes,
    memory_bytes,
    smallest_eps_within,
    theorem2_spec,
)
from tmcheck.theory.targets import TargetError, parse_target, tight_N

COUNTS = ("l", "m", "L_T", "L_FFN", "w_FFN")


def _measured(net):
    r = resources(net)
    return {**{k: getattr(r, k) for k in COUNTS}, "kappa": r.kappa_blocks}


@pytest.mark.parametrize("d,N,text", [(1, 4, "x0"), (2, 3, "sin(3*x0)*x1"), (3, 2, "x0*x1*x2"), (5, 2, "x0*x4")])
@pytest.mark.parametrize("arithmetic", ["exact", "float64"])
def test_lemma1_spec_is_the_built_network(d, N, text, arithmetic):
    sp_build = lemma1_plan(parse_target(text, d), 3.0, 1.0, 0.5, N=N)
    got = _measured(lemma1_network(sp_build, arithmetic))
    sp = sp_build.stated(arithmetic)
    assert {k: getattr(sp, k) for k in (*COUNTS, "kappa")} == got
    # the closed form without the f_n values: R = max |f_n| gives the same counts
    free = lemma1_spec(d, N, R=float(sp_build.R), arithmetic=arithmetic)
    assert {k: getattr(free, k) for k in COUNTS} == {k: got[k] for k in COUNTS}


@pytest.mark.parametrize("name,D,N", [("circle", 3, 3), ("sphere", 4, 2), ("torus", 5, 2)])
def test_theorem2_spec_is_the_built_network(name, D, N):
    m = make_manifold(name, D)
    s = theorem2_plan(m, parse_target("x0", D), 0.5, N=N)
    for arithmetic in ("float64",) if name != "circle" else ("float64", "exact"):
        got = _measured(theorem2_network(s, arithmetic))
        sp = theorem2_spec(name, D, 0.5, N=N, arithmetic=arithmetic)
        assert {k: getattr(sp, k) for k in (*COUNTS, "kappa")} == got, arithmetic
        assert (sp.extra["C_M"], sp.extra["mu"], sp.extra["N_proven"]) == (m.C_M, s.multiplicity, s.N_proven)


def test_theorem2_proven_grid_follows_the_error_budget():
    sp = theorem2_spec("circle", 3, 0.3, with_kappa=False)
    mu, H = sp.extra["mu"], sp.extra["H_chart"]
    assert sp.extra["delta"] == 0.3 / (2 * mu) and sp.N == tight_N(1, H, 1.0, 0.3 / (2 * mu))
    assert H == pytest.approx(sp.extra["L_phi"] + sp.extra["L_rho"])  # H_f = R = 1, β = 1
    # a larger Lipschitz constant needs a finer grid (the check can fail)
    assert theorem2_spec("circle", 3, 0.3, H_f=5.0, with_kappa=False).N > sp.N


def test_level_sizes_and_bounds_wrappers():
    assert level_sizes(1) == [] and level_sizes(2) == [1] and level_sizes(3) == [2, 1] and level_sizes(5) == [3, 2, 1]
    assert bounds.lemma1_resources(3, 4) == {"N": 4, "l": 3 + 12 + 192, "m": 192, "L_T": 6}
    r = bounds.theorem2_resources(2, 3, 0.1, C_M=1)
    N = tight_N(2, 1.0, 1.0, 0.05)
    assert r["N"] == N and r["l"] == 3 + 2 + 1 + 2 * N + 3 * N**2 and r["L_T"] == 7


def test_memory_and_the_budget_boundary():
    """The proven sphere network's weights, from the spec: fits for ε >= ε*, not just below; with the
    closed-form atlas constants no ε < 1 fits in 16 GB (nan)."""
    m = make_manifold("sphere", 8)
    assert math.isnan(smallest_eps_within(m, None, 16e9)[0])
    budget = 500e9
    e_star, at = smallest_eps_within(m, None, budget)
    assert 0 < e_star < 1 and memory_bytes(theorem2_spec(m, eps=e_star, with_kappa=False)) <= budget
    below = round(e_star - 0.001, 3)
    assert memory_bytes(theorem2_spec(m, eps=below, with_kappa=False)) > budget
    assert at["N"] == theorem2_spec(m, eps=e_star, with_kappa=False).N and math.isfinite(at["l"])
    # R (the bound on |f|) enters the indicator's depth, hence the layout: the boundary moves with it, and the
    # search must pass it on (a search at the default R = 1 finds the old boundary and fails here)
    e_R, _ = smallest_eps_within(m, None, budget, R=0.5)
    assert e_R != e_star and memory_bytes(theorem2_spec(m, eps=e_R, R=0.5, with_kappa=False)) <= budget
    assert memory_bytes(theorem2_spec(m, eps=round(e_R - 0.001, 3), R=0.5, with_kappa=False)) > budget


def test_resource_rows_and_cells():
    from types import SimpleNamespace

    from tmcheck.theory.spec import RESOURCE_COLUMNS, resource_cells, resource_rows

    sp = SimpleNamespace(L_T=2, m=3, l=10, L_FFN=1, w_FFN=4, kappa=2.5)
    measured = SimpleNamespace(L_T=2, m=3, l=12, L_FFN=1, w_FFN=2, kappa_blocks=5.0, N=7)
    rows = resource_rows(sp, measured, [("N", "paper form", 0, "N"), ("m", "m form", 6.0, "m")])
    assert [r["quantity"] for r in rows] == ["L_T", "m", "l", "L_FFN", "w_FFN", "kappa", "N", "m"]
    assert rows[2] == {"quantity": "l", "formula": "spec (token layout)", "value": 10.0, "measured": 12.0, "ratio": 1.2}
    assert rows[5]["measured"] == 5.0 and rows[5]["ratio"] == 2.0  # κ measured over the blocks
    assert rows[6]["ratio"] != rows[6]["ratio"]  # a zero formula value: ratio nan
    assert rows[7] == {"quantity": "m", "formula": "m form", "value": 6.0, "measured": 3.0, "ratio": 0.5}
    cells = resource_cells(rows)
    assert len(RESOURCE_COLUMNS) == 5 and all(len(c) == 5 for c in cells)
    assert cells[2] == ("l", "spec (token layout)", "10", "12", "1.2")
    row = {"quantity": "q", "formula": "f", "value": 123456.0, "measured": 1 / 3, "ratio": 2 / 3}
    assert resource_cells([row]) == [("q", "f", "1.235e+05", "0.3333", "0.667")]


def test_approx_counts():
    from tmcheck.theory.spec import _approx

    assert _approx(12345) == "1.234e+04" and _approx(10**15 - 1) == "1e+15"
    assert _approx(10**15) == "10^15.1" and _approx(2 * 10**15) == "10^15.4"
    assert _approx(10**400).startswith("10^400.")


def test_spec_as_dict_and_weights():
    sp = lemma1_spec(2, 5)
    d = sp.as_dict()
    for key in ("construction", "d", "N", "l", "m", "L_T", "L_FFN", "w_FFN", "arithmetic", "kappa"):
        assert key in d
    assert d["kappa"] == float(sp.kappa) and d["heads_per_block"] == dict(sp.heads_per_block)
    assert d["N"] == 5 and d["l"] == sp.l and d["orders"] == dict(sp.orders)
    assert sp.n_weights() == 75 * sum(n for _, n in sp.heads_per_block) + 5 * sp.l
    assert sp.n_weights() > 75 * sum(n for _, n in sp.heads_per_block)


def test_theorem2_spec_by_name_is_the_default_atlas():
    """theorem2_spec(name, D) describes the atlas make_manifold(name, D) builds by default (seed 0); in
    R^6 the chart heads' κ depends on where the centres lie, so another seed's atlas states another κ."""
    by_name = theorem2_spec("circle", 6, 0.5)
    built = theorem2_spec(make_manifold("circle", 6), eps=0.5)
    assert by_name.kappa == built.kappa and by_name.as_dict() == built.as_dict()
    assert theorem2_spec("circle", 6, 0.5, seed=1).kappa != built.kappa


def test_lemma1_spec_names_the_too_small_grid():
    with pytest.raises(TargetError, match=r"^the grid needs N >= 2 points per axis, got 1$"):
        lemma1_spec(1, 1)


def test_a_grid_too_large_to_count_is_refused_at_once():
    """d = 10^20 made N^d an integer of 10^21 digits: the spec hung where it must refuse in one line."""
    import time

    from tmcheck.theory.spec import lemma1_spec
    from tmcheck.theory.targets import TargetError

    t = time.process_time()
    with pytest.raises(TargetError, match="more than 10\\^6 digits"):
        lemma1_spec(10**20, eps=0.1)
    assert time.process_time() - t < 2.0
    assert lemma1_spec(3, eps=0.3).as_dict()  # the bound is the fault's and no wider
