"""Resource guards of the theory layer: each refuses its hostile input before the work
starts, and lets the neighbouring valid input through (so the guard is not a blanket refusal)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tmcheck.theory import spec
from tmcheck.theory.backends import evaluate
from tmcheck.theory.lemmas.theorem2_report import theorem2_report
from tmcheck.theory.manifolds import ManifoldError, embed, make_manifold
from tmcheck.theory.network import NetworkError, to_fraction
from tmcheck.theory.targets import TargetError, parse_target, tight_N


@pytest.mark.parametrize(
    "text",
    ["10**10**10", "9**9**9", "2**2**2**2**2**2", "x0**100000", "(10**999)**999", "1e1000000000*x0", "x0**(2**20)"],
)
def test_huge_targets_are_refused_before_sympy(text):
    with pytest.raises(TargetError, match="digits|exponent"):
        parse_target(text, 2)


@pytest.mark.parametrize(
    "text,value",
    [
        ("2**2**2**2", 65536),
        ("(2**3)**(2**3)", 16777216),
        ("2**-3", Fraction(1, 8)),
        ("1e-3*x0", None),
        ("x0**3", None),
    ],
)
def test_large_but_fine_targets_parse(text, value):
    t = parse_target(text, 1)
    if value is not None:
        assert t.expr == value


@pytest.mark.parametrize("text", ["1_000", "\u0661", "1e1000000000", "1" * 5000, "e5", "", "3/4e5", "0x10"])
def test_exact_numbers_are_ascii_and_digit_limited(text):
    with pytest.raises(NetworkError):
        to_fraction(text)


@pytest.mark.parametrize(
    "text,value",
    [
        ("1/3", Fraction(1, 3)),
        ("-2", -2),
        ("1e-3", Fraction(1, 1000)),
        (".5", Fraction(1, 2)),
        ("1" * 3999, int("1" * 3999)),
    ],
)
def test_exact_numbers_within_the_limits_are_read(text, value):
    assert to_fraction(text) == value


def test_size_guard_names_the_option_and_lets_the_default_through():
    with pytest.raises(TargetError, match="--size-limit"):
        spec.lemma1_spec(50, 2, with_kappa=False).check_size()
    spec.lemma1_spec(2, eps=0.1, H_f=3.0, with_kappa=False).check_size()
    with pytest.raises(TargetError, match="--size-limit"):
        spec.lemma1_spec(2, eps=0.1, H_f=3.0, with_kappa=False).check_size(limit=100)


def test_tiny_eps_neither_hangs_nor_overflows():
    with pytest.raises(TargetError, match="points per axis"):
        tight_N(2, 1.0, 1.0, 1e-305)
    assert tight_N(2, 1.0, 1.0, 1e-100) > 10**99  # huge but returned at once (no step-by-one loop)


def test_sample_and_atlas_sizes_are_guarded():
    with pytest.raises(ManifoldError, match="--n"):
        embed("sphere", 2, 3).sample(10**13, np.random.default_rng(0))
    assert embed("sphere", 2, 3).sample(10, np.random.default_rng(0)).shape == (10, 3)
    with pytest.raises(ManifoldError, match="D = 100000"):
        make_manifold("circle", 100_000)


def test_exact_bit_growth_and_float_overflow_are_refused():
    from tmcheck.theory.lemmas.addition import addition
    from tmcheck.theory.network import Block, Head

    net = addition([1, -1, 0], 2).network
    x = [[Fraction(1, 2)] * net.D]
    third = np.diag([Fraction(1, 3)] * 5).astype(object)
    grow = type(net)(
        net.arithmetic,
        net.l,
        net.D,
        net.U,
        net.E,
        net.PE,
        [Block((Head(third, third, third),), ())] * 40,
        decoder=net.decoder,
    )
    with pytest.raises(NetworkError, match="--max-bits"):
        evaluate(grow, x)
    evaluate(
        grow.__class__(net.arithmetic, net.l, net.D, net.U, net.E, net.PE, grow.blocks[:3], decoder=net.decoder), x
    )
    with pytest.raises(NetworkError, match="overflowed"):
        evaluate(grow, x, backend="float64")


def test_theorem2_report_checks_eps_before_building_the_atlas():
    """ε = 0 is refused first, before the manifold is made or the target parsed (neither is valid here)."""
    with pytest.raises(TargetError, match="ε must lie in \\(0, 1\\) as in Theorem 2, got 0"):
        theorem2_report("no-such-manifold", 2, 0.0, "not a target (")


def test_theorem2_report_size_guard_computes_no_kappa(monkeypatch):
    """The size guard before the grid values refuses from the counts alone: κ is not computed for it."""

    def no_kappa(*args, **kwargs):
        raise AssertionError("κ computed by the size guard")

    monkeypatch.setattr(spec, "_theorem2_kappa", no_kappa)
    with pytest.raises(TargetError, match="the theorem2 network would have"):
        theorem2_report("circle", 2, 0.5, "x0*x1", H_f=2.0, size_limit=10)
