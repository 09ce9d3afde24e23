"""Definitions 1-7: backends, known answers, invariances, resources, the file format and bad input."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import independent_eval  # tests/theory/independent_eval.py
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tmcheck.theory import netfile
from tmcheck.theory.backends import evaluate, forward, run_blocks
from tmcheck.theory.examples import random_network, worked_example, worked_example_value
from tmcheck.theory.network import (
    Block,
    Head,
    Layer,
    Network,
    NetworkError,
    convert,
    interaction_vectors,
    parameters,
    resources,
    structured_positional,
)

rationals = st.fractions(min_value=-4, max_value=4, max_denominator=12)


@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 4), st.integers(0, 3), st.integers(0, 3))
def test_exact_and_float_backends_agree(seed, l, D, n_blocks, n_heads):
    rng = np.random.default_rng(seed)
    net = random_network(rng, "exact", l=l, D=D, n_blocks=n_blocks, n_heads=n_heads)
    X = rng.integers(-4, 5, size=(5, D)).astype(object) * Fraction(1, 4)
    ex = evaluate(net, X, "exact")
    fl = evaluate(net, X, "float64")
    for e, f in zip(ex, fl, strict=True):
        assert isinstance(e, Fraction)
        assert abs(float(e) - f) <= 1e-9 * max(1.0, abs(float(e)))


@given(st.integers(0, 2**32 - 1), rationals)
def test_relu_attention_is_homogeneous_of_degree_three(seed, s):
    """A(sH) = s^3 A(H) exactly, for every real s (σ(s²x) = s²σ(x) and V(sH) = sVH)."""
    rng = np.random.default_rng(seed)
    net = random_network(rng, "exact", l=4, D=2, n_blocks=1, n_heads=3, ffn_depth=0)
    H = rng.integers(-6, 7, size=(2, 5, 4)).astype(object) * Fraction(1, 3)
    mha = lambda H: run_blocks(net.blocks, H, "exact") - H  # noqa: E731  (no FFN: B(H) = MHA(H) + H)
    assert np.array_equal(mha(s * H), s**3 * mha(H))


def test_worked_example_known_answer():
    net = worked_example()
    xs = [[Fraction(1, 2), Fraction(3, 2)], [Fraction(-2), Fraction(1, 3)], [Fraction(1), Fraction(1)]]
    assert list(evaluate(net, xs)) == [Fraction(3), Fraction(1, 3), Fraction(2)]
    assert [worked_example_value(*x) for x in xs] == [3, Fraction(1, 3), 2]


def test_hand_computed_block_hidden_state():
    """Every entry of B(H) for the worked example at x = (1/2, 3/2), computed by hand."""
    H = forward(worked_example(), [[Fraction(1, 2), Fraction(3, 2)]])[0]
    F = Fraction
    # MHA adds 5/2 to row 1 of both tokens; the FFN adds σ(5/2 - 1) = 3/2 to row 0.
    want = [[F(2), F(3)], [F(5, 2), F(5, 2)], [F(4, 5), F(0)], [F(3, 5), F(1)], [F(1), F(1)]]
    assert H.tolist() == want


def test_empty_ffn_is_zero_and_no_heads_is_identity():
    net = worked_example()
    H = forward(net, [[Fraction(1, 3), Fraction(2, 3)]], trace=True)
    ident = Network("exact", 2, 2, net.U, net.E, net.PE, [Block((), ())])
    assert np.array_equal(forward(ident, [[Fraction(1, 3), Fraction(2, 3)]])[0], H[0][0])


def test_exact_backend_falls_back_to_integers_beyond_2_53():
    """Weights of size 2^40 overflow float64's exact range in products; results must stay exact."""
    big = Fraction(2**40 + 1, 3)
    net = worked_example()
    head = net.blocks[0].heads[0]
    net2 = Network(
        "exact",
        2,
        2,
        net.U,
        net.E,
        net.PE,
        [Block((Head(head.Q * big, head.K * big, head.V),), net.blocks[0].ffn)],
    )
    x = [Fraction(7, 3), Fraction(5, 11)]
    want = independent_eval.evaluate(netfile.to_dict(net2), [str(v) for v in x])
    assert evaluate(net2, [x])[0] == want


def test_adding_zeros_with_a_huge_denominator_stays_exact():
    """Rescaling an all-zero tensor by a factor beyond float range must not overflow."""
    from tmcheck.theory.backends import ExactBackend, Rat

    be = ExactBackend()
    zero = Rat(np.zeros((2, 2)), 1)
    tiny = Rat.from_array([[Fraction(1, 10**400), 0], [0, Fraction(3)]])
    out = be.output(be.add(zero, tiny))
    assert out.tolist() == [[Fraction(1, 10**400), 0], [0, 3]]


@given(st.integers(1, 300))
def test_exact_interaction_vectors_are_rational_unit_vectors_with_increasing_angle(l):
    I = interaction_vectors(l, "exact")
    assert all(I[0, t] ** 2 + I[1, t] ** 2 == 1 for t in range(l))
    assert all(I[0, t] >= 0 and I[1, t] > 0 for t in range(l))
    # cos strictly decreasing in the first quadrant <=> angle strictly increasing
    assert all(I[0, t] > I[0, t + 1] for t in range(l - 1))
    assert (I[0, -1], I[1, -1]) == (0, 1)
    # one common denominator c for all tokens, so exact hidden states never need the lcm of l of them
    assert math.lcm(*(v.denominator for v in I.reshape(-1))) < 2**53
    ang = np.arctan2(I[1].astype(float), I[0].astype(float))
    paper = np.arange(1, l + 1) * np.pi / (2 * l)
    assert np.max(np.abs(ang - paper)) < 1.0 / l


def test_float_interaction_vectors_are_the_papers_sinusoids():
    I = interaction_vectors(8, "float64")
    t = np.arange(1, 9)
    assert np.allclose(I, [np.cos(t * np.pi / 16), np.sin(t * np.pi / 16)], atol=0, rtol=0)
    pe = structured_positional(8, "float64")
    assert np.all(pe[:2] == 0) and np.all(pe[4] == 1)


def test_resources_are_measured_from_the_weights():
    r = resources(worked_example())
    assert (r.L_T, r.m, r.L_FFN, r.w_FFN, r.l, r.d_embd, r.D) == (1, 1, 2, 1, 2, 5, 2)
    assert r.kappa == 1 and r.n_params == 4 + 5 + 10 + 75 + 5 + 1 + 5 + 5
    rng = np.random.default_rng(3)
    net = random_network(rng, "exact", l=5, D=3, n_blocks=3, n_heads=4, ffn_depth=3, width=7, scale=8)
    r = resources(net)
    assert (r.L_T, r.m, r.L_FFN, r.w_FFN, r.l) == (3, 4, 3, 7, 5)
    assert r.kappa == max(abs(v) for _, arr in parameters(net) for v in arr.reshape(-1))
    assert r.kappa == 1 and r.n_params == sum(arr.size for _, arr in parameters(net))


@pytest.mark.parametrize("arithmetic", ["exact", "float64"])
def test_file_round_trip_and_independent_implementation(tmp_path, arithmetic):
    rng = np.random.default_rng(11)
    net = random_network(rng, arithmetic, l=4, D=3, n_blocks=2, n_heads=2)
    path = netfile.save(net, tmp_path / "net.json")
    back = netfile.load(path)
    assert netfile.to_dict(back) == netfile.to_dict(net)
    X = rng.integers(-4, 5, size=(4, 3)).astype(object) * Fraction(1, 4)
    ours = evaluate(back, X)
    spec = independent_eval.load(path)
    theirs = [independent_eval.evaluate(spec, [str(v) if arithmetic == "exact" else float(v) for v in x]) for x in X]
    if arithmetic == "exact":
        assert list(ours) == theirs
    else:
        assert np.allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    assert list(evaluate(net, X)) == list(ours)


def test_convert_between_arithmetics_is_exact_for_floats():
    rng = np.random.default_rng(5)
    fl = random_network(rng, "float64", l=3, D=2)
    ex = convert(fl, "exact")
    X = [[0.25, -0.5], [1.0, 0.75]]
    assert np.allclose(evaluate(ex, X, "float64"), evaluate(fl, X), rtol=0, atol=0)


def _spec():
    return netfile.to_dict(worked_example())


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(version=2), "unsupported tmcheck-network version 2"),
        (lambda d: d.update(format="onnx"), "not a tmcheck-network file"),
        (lambda d: d.update(d_embd=4), "d_embd must be 5"),
        (lambda d: d.update(arithmetic="float32"), "unknown arithmetic"),
        (lambda d: d.pop("blocks"), "missing key 'blocks'"),
        (lambda d: d["blocks"][0]["heads"][0].update(Q=[["1"] * 5] * 4), "blocks[0].heads[0].Q: shape (4, 5)"),
        (lambda d: d["blocks"][0]["ffn"][0].update(b=["1", "2"]), "blocks[0].ffn[0].b: shape (2,)"),
        (lambda d: d["embedding"].update(U=[["1", "0"]]), "embedding.U: shape (1, 2), expected (2, 2)"),
        (lambda d: d["blocks"][0]["heads"][0]["V"][0].__setitem__(0, "x/y"), "is not an exact number"),
        (lambda d: d["blocks"][0]["heads"][0]["V"][0].__setitem__(0, 0.5), "exact entries must be strings"),
        (lambda d: d.update(decoder={"row": 5, "col": 0}), "decoder (row 5, col 0) outside"),
        (lambda d: d["blocks"][0]["ffn"][1].update(W=[["1"]] * 4, b=["0"] * 4), "last layer has 4 outputs"),
    ],
)
def test_malformed_files_give_one_line_errors(tmp_path, mutate, message):
    d = _spec()
    mutate(d)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    with pytest.raises(NetworkError) as exc:
        netfile.load(path)
    assert message in str(exc.value)
    assert "\n" not in str(exc.value)


def test_non_finite_float_weights_are_rejected(tmp_path):
    d = netfile.to_dict(worked_example("float64"))
    d["blocks"][0]["heads"][0]["Q"][0][0] = math.inf
    path = tmp_path / "inf.json"
    path.write_text(json.dumps(d))  # JSON "Infinity"
    with pytest.raises(NetworkError, match="non-finite"):
        netfile.load(path)
    with pytest.raises(NetworkError, match="non-finite"):
        Network("float64", 1, 1, [[1.0]], [[1.0]] + [[0.0]] * 4, [[math.nan]] * 5, [])


def test_not_json_and_missing_files(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    with pytest.raises(NetworkError, match="not valid JSON"):
        netfile.load(p)
    with pytest.raises(NetworkError, match="no such network file"):
        netfile.load(tmp_path / "absent.json")


def test_wrong_input_shape_and_direct_construction_errors():
    net = worked_example()
    with pytest.raises(NetworkError, match=r"inputs must have shape \(n, D=2\)"):
        evaluate(net, [[1, 2, 3]])
    with pytest.raises(NetworkError, match="d_embd must be 5"):
        Network("exact", 1, 1, [[1]], [[1]] * 4, [[0]] * 4, [], d_embd=4)
    with pytest.raises(NetworkError, match="blocks\\[0\\].ffn\\[0\\].W"):
        Network("exact", 2, 2, net.U, net.E, net.PE, [Block((), (Layer([[1, 2]], [0]),))])
