"""The regression transformer against Definition 1 as tmcheck.theory implements it (an independent
evaluator in float64): the embedding E'(Ux)^T + PE, and the whole network with ReLU attention."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tmcheck.empirics.synthetic.model import ModelConfig, RegressionTransformer, n_params
from tmcheck.theory.backends import evaluate, forward
from tmcheck.theory.network import Block, Head, Layer, Network, structured_positional


def _theory_network(model: RegressionTransformer) -> Network:
    """The same weights as a tmcheck.theory Network (d_embd = 5); the 1/l of the attention goes into V."""
    cfg, l = model.cfg, model.cfg.D
    blocks = []
    for blk in model.blocks:
        Q, K, V = (getattr(blk, k).detach().double().numpy() for k in "QKV")
        heads = tuple(Head(Q[j], K[j], V[j] / l) for j in range(cfg.n_heads))
        linears = [m for m in blk.ffn if isinstance(m, torch.nn.Linear)]
        ffn = tuple(Layer(m.weight.detach().double().numpy(), m.bias.detach().double().numpy()) for m in linears)
        blocks.append(Block(heads, ffn))
    E = np.zeros((5, 1))
    E[0, 0] = 1.0
    return Network("float64", l=l, D=cfg.D, U=np.eye(cfg.D), E=E, PE=structured_positional(l, "float64"), blocks=blocks)


def test_token_embedding_is_definition_1():
    torch.manual_seed(0)
    model = RegressionTransformer(ModelConfig(D=6, d_embd=5, n_blocks=1))
    x = np.random.default_rng(0).standard_normal((7, 6))
    H0 = model.embed(torch.as_tensor(x, dtype=torch.float32)).double().numpy()  # (B, d_embd, l)
    want = forward(_theory_network(model), x, "float64", trace=True)[0]
    np.testing.assert_allclose(H0, want, atol=1e-6)
    # token t carries x^t in row 0, the interaction vector (cos, sin)(tπ/2l) in rows 2-3, 1 in row 4
    t = np.arange(1, 7)
    np.testing.assert_allclose(H0[:, 0, :], x, atol=1e-6)
    np.testing.assert_allclose(H0[0, 2], np.cos(t * math.pi / 12), atol=1e-6)
    np.testing.assert_allclose(H0[0, 3], np.sin(t * math.pi / 12), atol=1e-6)
    np.testing.assert_allclose(H0[:, 4], 1.0)
    np.testing.assert_allclose(H0[:, 1], 0.0)


def test_wider_tokens_pad_the_structured_rows_with_zeros():
    model = RegressionTransformer(ModelConfig(D=4, d_embd=9))
    H0 = model.embed(torch.randn(3, 4))
    assert H0.shape == (3, 9, 4)
    assert torch.all(H0[:, 5:] == 0)


@pytest.mark.parametrize("n_blocks,n_heads,depth", [(1, 1, 2), (2, 3, 3)])
def test_network_output_equals_the_theory_evaluator(n_blocks, n_heads, depth):
    torch.manual_seed(n_blocks + n_heads)
    model = RegressionTransformer(
        ModelConfig(D=5, d_embd=5, n_blocks=n_blocks, n_heads=n_heads, ffn_width=7, ffn_depth=depth)
    ).double()
    x = np.random.default_rng(1).standard_normal((11, 5))
    with torch.no_grad():
        got = model(torch.as_tensor(x)).numpy()
    want = evaluate(_theory_network(model), x, "float64")  # decoder (0, l-1): first element of the last column
    # the fixed PE is stored in float32 (cos(tπ/2l) rounded), hence a float32-sized tolerance
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_softmax_attention_is_an_option_and_differs():
    torch.manual_seed(0)
    relu = RegressionTransformer(ModelConfig(D=4, attention="relu"))
    torch.manual_seed(0)
    soft = RegressionTransformer(ModelConfig(D=4, attention="softmax"))
    x = torch.randn(5, 4)
    assert soft(x).shape == (5,)
    assert not torch.allclose(relu(x), soft(x))


def test_parameter_count_is_measured_and_grows_with_width():
    cfg = ModelConfig(D=8, d_embd=8, n_blocks=2, n_heads=2, ffn_width=32, ffn_depth=2)
    # per block: 3 m d² attention + (d w + w) + (w d + d) FFN; E', U, PE are fixed, not counted
    per_block = 3 * 2 * 64 + (8 * 32 + 32) + (32 * 8 + 8)
    assert n_params(cfg) == 2 * per_block


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(d_embd=4), "d_embd must be >= 5"),
        (dict(attention="linear"), "unknown attention"),
        (dict(n_blocks=0), "n_blocks must be >= 1"),
    ],
)
def test_bad_model_configs(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**kwargs)
