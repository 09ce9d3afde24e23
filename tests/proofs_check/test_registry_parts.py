"""Parts of proofs_check that run when a module is imported (the decorator, search grids, Table 1's records) and
the errata's markers, called here at run time so that a change in them fails a test."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from tmcheck.proofs_check import errata, lemma1, registry, table1
from tmcheck.proofs_check.registry import Evidence, Kind, Witness


def test_obligation_registers_and_refuses(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", {})

    def check() -> Evidence:
        return Evidence("d", [Witness({"x": 0}, 1, 2)])

    assert registry.obligation("lemma1.new", "loc", "claim", "exact", kind=Kind.STEP)(check) is check
    obl = registry._REGISTRY["lemma1.new"]
    assert (obl.id, obl.location, obl.claim, obl.method, obl.implemented_as) == (
        "lemma1.new",
        "loc",
        "claim",
        "exact",
        "",
    )
    assert obl.kind is Kind.STEP and obl.satisfied is None and obl.section == "lemma1"
    sat = registry.obligation("lemma2.sat", "l", "c", "m", "how", kind="proof step", satisfied={"a": 1})(check)
    assert sat is check and registry._REGISTRY["lemma2.sat"].satisfied == {"a": 1}
    assert registry._REGISTRY["lemma2.sat"].implemented_as == "how"
    with pytest.raises(ValueError, match="duplicate obligation id 'lemma1.new'"):
        registry.obligation("lemma1.new", "loc", "claim", "exact", kind=Kind.STEP)(check)
    with pytest.raises(ValueError, match="obligation id 'lemma99.x' has no known section prefix"):
        registry.obligation("lemma99.x", "loc", "claim", "exact", kind=Kind.STEP)(check)
    assert set(registry._REGISTRY) == {"lemma1.new", "lemma2.sat"}


def test_witness_and_relations():
    with pytest.raises(ValueError, match="unknown relation '~'; expected one of <=, <, >=, >, ==, !="):
        Witness({}, 1, 2, "~")
    w = Witness({"x": 1}, 1, 2)
    assert w.rel == "<=" and w.as_dict() == {"at": {"x": 1}, "lhs": 1, "rel": "<=", "rhs": 2, "holds": True}
    assert registry.fmt_value({"a": (1, [2, 3])}) == "(a = (1, (2, 3)))"
    assert registry.short("x" * 200, 10) == "x" * 9 + "…" and registry.short("abc") == "abc"


def test_near_grid_points():
    pts = lemma1.near_grid((2, 3), 4)
    assert len(pts) == 4 + 8  # the end points of [0, 1] keep the half of their points inside
    for N, x in pts:
        assert 0 <= x <= 1
        assert min(abs(x - F(k, N - 1)) for k in range(N)) < F(1, 3 * (N - 1))
    assert lemma1.near_grid((3,), 2, scale=lambda N: 3 * N) == (
        (3, F(1, 36)),
        (3, F(1, 2) - F(1, 36)),
        (3, F(1, 2) + F(1, 36)),
        (3, 1 - F(1, 36)),
    )


def test_table1_records():
    rec = table1._obl("GPT-2", "alpha_D", "0.070", "the source", satisfied="0.071")
    assert rec == {
        "id": "table1.gpt2_alpha_D",
        "location": "Section 3, Table 1 (GPT-2 column)",
        "claim": "From the source: α_D = 0.070.",
        "method": "exact",
        "implemented_as": "tmcheck predict --alpha-n / --alpha-d (theory.bounds.alpha_D_from_alpha_N, "
        "alpha_N_from_alpha_D).",
        "kind": Kind.STATEMENT,
        "satisfied": {"printed": "0.071"},
    }
    assert table1._obl("Chinchilla", "alpha_N", "0.33", "s")["satisfied"] is None


def test_errata_markers():
    doc = f"a\n{errata.START}\nold\n{errata.END}\nb\n"
    assert errata.current_section(doc) == f"{errata.START}\nold\n{errata.END}"
    for bad in ("no markers", f"{errata.END}\n{errata.START}", f"{errata.START}{errata.START}{errata.END}"):
        with pytest.raises(ValueError, match="README must contain <!-- errata:start --> and then <!-- errata:end -->"):
            errata.replace_section(bad, "NEW")


def test_obligation_ids_with_more_dots_and_the_check_kept(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", {})

    def check() -> Evidence:
        return Evidence("d", [Witness({"x": 0}, 1, 2)])

    registry.obligation("lemma1.part.sub", "loc", "claim", "exact", kind=Kind.STEP)(check)
    obl = registry._REGISTRY["lemma1.part.sub"]
    assert obl.check is check and obl.section == "lemma1" and obl.judge().searched == 1


def test_near_grid_defaults_and_ends():
    assert lemma1.near_grid((2, 3)) == lemma1.near_grid((2, 3), 4)
    assert len(lemma1.near_grid((2,))) == 4  # 4 per point, the 2 outside [0, 1] dropped
    odd = lemma1.near_grid((2,), 3)  # an odd count puts one point on each grid point, 0 and 1 included
    assert (2, F(0)) in odd and (2, F(1)) in odd and len(odd) == 4


def test_short_limit():
    s = registry.short("x" * 500)
    assert len(s) == 160 and s.endswith("…") and registry.short("x" * 160) == "x" * 160
    assert len(registry.short("y" * 50, limit=20)) == 20


def test_induction_log_with_M_and_kappa():
    import math

    from tmcheck.proofs_check import lemma2
    from tmcheck.theory import bounds

    c = bounds.TransformerClass(L_T=2, L_FFN=3, w=4, l=5, d_embd=6, m=7, kappa=1.5, M=2.5)
    one = (
        7 * 2 * math.log(2)
        + math.log(3)
        + 3 * math.log(2.5)
        + 18 * 2 * math.log(6)
        + 18 * 2 * 3 * math.log(4)
        + 6 * 2 * 3 * math.log(1.5)
        + 2 * (math.log(7) + math.log(5))
    )
    assert lemma2.induction_log(c) == pytest.approx(2 * one, rel=1e-12)


def test_theorem1_plugin_with_M():
    import math

    from tmcheck.proofs_check import theorem1
    from tmcheck.theory import bounds

    dd, e, nn, C_M, D, M, b = 3, 0.1, 1e5, 2.0, 4, 3.0, 1.5
    LT, LF, w, de = math.log(dd), math.log(1 / e), 4 * C_M, 5
    size = C_M * dd * e ** (-dd / b)
    kap = (M * size) ** 2
    ours = 20 * math.log(2 * M * LF * de * w * kap * size**2 * nn) * D * de**2 * w**2 * size * LT**3 * LF**2
    got = theorem1.plugin(dd, e, nn, C_M, D, M, b)
    assert got[0] == pytest.approx(ours, rel=1e-12)
    assert got[1] == bounds.paper_simplified_log_N(dd, e, nn, b, C_M, D)
