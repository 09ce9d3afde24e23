"""The GPT: causality, layers, and the transformers GPT-2 round trip (an independent oracle)."""

import os

import pytest
import torch

from tmcheck.empirics.lm.gpt import GPT, GPTConfig, from_hf, to_hf

os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=97, block_size=16, n_layer=2, n_head=2, n_embd=24)).eval()


def test_causal(model):
    x = torch.randint(0, 97, (2, 16))
    y = x.clone()
    y[:, 10:] = (y[:, 10:] + 1) % 97
    a, b = model(x)[0], model(y)[0]
    assert torch.allclose(a[:, :10], b[:, :10], atol=1e-6)
    assert not torch.allclose(a[:, 10:], b[:, 10:])


def test_loss_and_layers(model):
    x = torch.randint(0, 97, (3, 8))
    logits, loss = model(x, x)
    assert logits.shape == (3, 8, 97) and loss.ndim == 0
    assert model.hidden_states(x, 0).shape == (3, 8, 24)
    before, after = model.hidden_states(x, final_ln=False), model.hidden_states(x)
    assert torch.allclose(model.ln_f(before), after)
    with pytest.raises(ValueError):
        model.hidden_states(x, 3)
    with pytest.raises(ValueError):
        model.hidden_states(torch.zeros(1, 17, dtype=torch.long))


def test_gpt2_round_trip(model):
    """Our logits equal transformers' GPT2LMHeadModel given our exported weights, and back."""
    x = torch.randint(0, 97, (2, 16))
    hf = to_hf(model)
    with torch.no_grad():
        ours = model(x)[0]
        theirs = hf(input_ids=x).logits
        assert torch.allclose(ours, theirs, atol=1e-5)
        assert torch.equal(from_hf(hf)(x)[0], ours)


def test_from_hf_rejects_other_models():
    class Cfg:
        model_type = "llama"

    class Fake:
        config = Cfg()

    with pytest.raises(ValueError, match="GPT-2"):
        from_hf(Fake())


def test_config_validation():
    with pytest.raises(ValueError, match="divisible"):
        GPTConfig(n_embd=10, n_head=3)
