"""Embeddings from our checkpoints and from a local transformers directory (a tiny GPT-2 made here)."""

import os

import numpy as np
import pytest
import torch

from tmcheck.empirics.embed import EmbedOptions, alpha_d, embed_documents, encode_text, load_model
from tmcheck.empirics.model import GPT, GPTConfig, to_hf
from tmcheck.empirics.train import save_checkpoint

os.environ["HF_HUB_OFFLINE"] = "1"
TEXTS = [f"The {a} cat sat on the {b} mat number {i}." * 3 for i, (a, b) in
         enumerate([("red", "blue"), ("big", "small"), ("old", "new"), ("shy", "warm")] * 3)]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from transformers import PreTrainedTokenizerFast

    from tmcheck.empirics.data.tokens import train_tokenizer

    root = tmp_path_factory.mktemp("models")
    tok = train_tokenizer(TEXTS, 300)
    torch.manual_seed(0)
    ours = GPT(GPTConfig(vocab_size=300, block_size=32, n_layer=2, n_head=2, n_embd=16)).eval()
    save_checkpoint(root / "best.pt", {"model": ours.state_dict(), "meta": {"model_config": ours.config.__dict__}})
    hf_dir = root / "hf"
    to_hf(ours).save_pretrained(hf_dir)
    PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>").save_pretrained(hf_dir)
    (root / "tokenizer.json").write_text(tok.to_str())
    return root, ours


def test_transformers_directory_equals_our_checkpoint(models):
    root, ours = models
    a, b = load_model(root / "best.pt"), load_model(root / "hf")
    assert (a.kind, b.kind) == ("tmcheck", "transformers")
    docs = encode_text(a, TEXTS, root / "tokenizer.json")
    assert all(np.array_equal(x, y) for x, y in zip(docs, encode_text(b, TEXTS)))
    for layer in (0, 1, None):
        for final_ln in ("after", "before"):
            opts = EmbedOptions(context=32, tokens_per_doc=5, layer=layer, final_ln=final_ln, window="random")
            xa, xb = embed_documents(a, docs, opts), embed_documents(b, docs, opts)
            assert xa.shape == (5 * len(TEXTS), 16)
            np.testing.assert_allclose(xa, xb, atol=1e-5)
    before = embed_documents(a, docs, EmbedOptions(context=32, tokens_per_doc=5, final_ln="before"))
    after = embed_documents(a, docs, EmbedOptions(context=32, tokens_per_doc=5, final_ln="after"))
    assert not np.allclose(before, after)


def test_window_options(models):
    root, _ = models
    lm = load_model(root / "best.pt")
    docs = [np.arange(100) % 300]
    pre = embed_documents(lm, docs, EmbedOptions(context=8, tokens_per_doc=8, window="prefix"))
    direct = lm.hidden(torch.arange(8)[None]).numpy()[0]
    np.testing.assert_allclose(pre, direct, atol=1e-6)
    rnd = embed_documents(lm, docs, EmbedOptions(context=8, tokens_per_doc=8, window="random", seed=1))
    assert not np.allclose(pre, rnd)
    with pytest.raises(ValueError, match="window"):
        EmbedOptions(window="middle")


def test_bad_model_paths(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "missing")
    with pytest.raises(ValueError, match="neither"):
        load_model(tmp_path)


def test_alpha_d():
    assert alpha_d(2.0) == pytest.approx(0.5)
    assert alpha_d(18.0, beta=1) == pytest.approx(0.1)
    assert alpha_d(4.0, beta=2) == pytest.approx(0.5)
