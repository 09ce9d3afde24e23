"""Embeddings from our checkpoints and from local transformers directories of both kinds: a tiny
GPT-2 (causal) and a tiny BERT (encoder) made here, and the real all-MiniLM-L6-v2 when its package
is installed."""

import logging
import os

import numpy as np
import pytest
import torch

from tmcheck.empirics.lm.embed import EmbedOptions, embed_documents, encode_text, load_model, model_kind
from tmcheck.empirics.lm.gpt import GPT, GPTConfig, to_hf

os.environ["HF_HUB_OFFLINE"] = "1"
TEXTS = [
    f"The {a} cat sat on the {b} mat number {i}. " * (1 + i % 4)
    for i, (a, b) in enumerate([("red", "blue"), ("big", "small"), ("old", "new"), ("shy", "warm")] * 5)
]


def save_ours(model: GPT, path):
    from tmcheck.empirics.lm.checkpoint import save_checkpoint

    save_checkpoint(path, {"model": model.state_dict(), "meta": {"model_config": dict(model.config.__dict__)}})


def make_gpt2(path, texts, block_size=32):
    """A tiny GPT of ours (seed 0) and a BPE tokenizer trained on texts, saved together as a transformers GPT-2
    directory; returns both."""
    from transformers import PreTrainedTokenizerFast

    from tmcheck.empirics.data.tokens import train_tokenizer

    tok = train_tokenizer(texts, 300)
    torch.manual_seed(0)
    gpt = GPT(GPTConfig(vocab_size=300, block_size=block_size, n_layer=2, n_head=2, n_embd=16)).eval()
    to_hf(gpt).save_pretrained(path)
    PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>").save_pretrained(path)
    return gpt, tok


def make_bert(path, texts, layers=2, width=32):
    """A tiny BertModel with a WordPiece tokenizer trained on texts, saved as a transformers directory."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertModel, BertTokenizerFast

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(
        texts, trainers.WordPieceTrainer(vocab_size=200, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    )
    tok.post_processor = processors.BertProcessing(
        ("[SEP]", tok.token_to_id("[SEP]")), ("[CLS]", tok.token_to_id("[CLS]"))
    )
    fast = BertTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
    )
    torch.manual_seed(1)
    cfg = BertConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=width,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=2 * width,
        max_position_embeddings=64,
        pad_token_id=0,
    )
    BertModel(cfg).eval().save_pretrained(path)
    fast.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    ours, tok = make_gpt2(root / "hf", TEXTS)
    save_ours(ours, root / "best.safetensors")
    (root / "tokenizer.json").write_text(tok.to_str())
    make_bert(root / "bert", TEXTS)
    return root, ours


def test_transformers_directory_equals_our_checkpoint(models):
    root, ours = models
    a, b = load_model(root / "best.safetensors"), load_model(root / "hf")
    assert (a.kind, b.kind) == ("tmcheck", "causal")
    docs = encode_text(a, TEXTS, root / "tokenizer.json")
    assert all(np.array_equal(x, y) for x, y in zip(docs, encode_text(b, TEXTS), strict=True))
    for layer in (0, 1, None):
        for final_ln in ("after", "before"):
            opts = EmbedOptions(context=32, tokens_per_doc=5, layer=layer, final_ln=final_ln, window="random")
            xa, xb = embed_documents(a, docs, opts), embed_documents(b, docs, opts)
            assert xa.shape == (5 * len(TEXTS), 16)
            np.testing.assert_allclose(xa, xb, atol=1e-5)
    before = embed_documents(a, docs, EmbedOptions(context=32, tokens_per_doc=5, final_ln="before"))
    after = embed_documents(a, docs, EmbedOptions(context=32, tokens_per_doc=5, final_ln="after"))
    assert not np.allclose(before, after)


@pytest.mark.parametrize("name", ["hf", "bert", "best.safetensors"])
def test_embeddings_do_not_depend_on_the_batch_size(models, name):
    root, _ = models
    lm = load_model(root / name)
    docs = encode_text(lm, TEXTS, root / "tokenizer.json" if name.startswith("best") else None)
    assert len({len(d) for d in docs}) > 3  # documents of several lengths: batches are padded
    one = embed_documents(lm, docs, EmbedOptions(context=48, tokens_per_doc=6, batch_docs=1))
    many = embed_documents(lm, docs, EmbedOptions(context=48, tokens_per_doc=6, batch_docs=16))
    np.testing.assert_array_equal(one, many)


def test_padding_without_the_mask_would_change_an_encoder(models):
    """The check above can fail: the same BERT batches with the padding visible differ."""
    root, _ = models
    lm = load_model(root / "bert")
    docs = encode_text(lm, TEXTS)
    opts = EmbedOptions(context=48, tokens_per_doc=6, batch_docs=16)
    masked = embed_documents(lm, docs, opts)
    hidden = lm.hidden
    lm.hidden = lambda ids, mask=None, layer=None, final_ln="after": hidden(ids, None, layer, final_ln)
    try:
        unmasked = embed_documents(lm, docs, opts)
    finally:
        lm.hidden = hidden
    assert np.abs(masked - unmasked).max() > 1e-3


def test_encoder_special_tokens_are_fed_but_not_counted(models):
    root, _ = models
    lm = load_model(root / "bert")
    assert lm.kind == "encoder" and type(lm.model).__name__ == "BertModel"
    assert lm.special_ids() == ([lm.tokenizer.cls_token_id], [lm.tokenizer.sep_token_id])
    doc = encode_text(lm, TEXTS[:1])[0]
    assert lm.tokenizer.cls_token_id not in doc and lm.tokenizer.sep_token_id not in doc
    full = torch.tensor([lm.tokenizer(TEXTS[0])["input_ids"]])  # [CLS] doc [SEP], as the tokenizer makes it
    direct = lm.hidden(full, torch.ones_like(full)).numpy()[0]
    n = len(doc)
    got = embed_documents(lm, [doc], EmbedOptions(context=64, tokens_per_doc=64, window="prefix"))
    np.testing.assert_allclose(got, direct[1 : 1 + n], atol=1e-5)
    with_special = embed_documents(lm, [doc], EmbedOptions(context=64, tokens_per_doc=64, special_tokens="include"))
    np.testing.assert_allclose(with_special, direct, atol=1e-5)


def test_encoder_layers_and_options_that_do_not_apply(models):
    root, _ = models
    lm = load_model(root / "bert")
    docs = encode_text(lm, TEXTS)
    layers = [embed_documents(lm, docs, EmbedOptions(context=48, tokens_per_doc=4, layer=L)) for L in (0, 1, 2)]
    np.testing.assert_array_equal(layers[2], embed_documents(lm, docs, EmbedOptions(context=48, tokens_per_doc=4)))
    assert not np.allclose(layers[0], layers[1]) and not np.allclose(layers[1], layers[2])
    with pytest.raises(ValueError, match="--final-ln before does not apply") as info:
        embed_documents(lm, docs, EmbedOptions(final_ln="before"))
    assert "\n" not in str(info.value)
    embed_documents(lm, docs, EmbedOptions(context=48, final_ln="before", layer=1))  # not the last layer: no question
    with pytest.raises(ValueError, match=r"--layer must be in 0..2"):
        embed_documents(lm, docs, EmbedOptions(layer=3))


def test_loading_is_quiet(models, capfd, caplog):
    root, _ = models
    capfd.readouterr()
    with caplog.at_level(logging.INFO):
        load_model(root / "bert")
        load_model(root / "hf")  # a GPT2LMHeadModel directory, loaded as its base model
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert capfd.readouterr().err == ""


def test_model_kind_from_config():
    from transformers import BertConfig, GPT2Config, T5Config

    assert model_kind(BertConfig(architectures=["BertModel"])) == "encoder"
    assert model_kind(BertConfig(is_decoder=True)) == "causal"
    assert model_kind(GPT2Config(architectures=["GPT2LMHeadModel"])) == "causal"
    assert model_kind(GPT2Config()) == "causal"
    assert model_kind(BertConfig()) == "encoder"
    with pytest.raises(ValueError, match="encoder-decoder"):
        model_kind(T5Config())


def test_window_options(models):
    root, _ = models
    lm = load_model(root / "best.safetensors")
    docs = [np.arange(100) % 300]
    pre = embed_documents(lm, docs, EmbedOptions(context=8, tokens_per_doc=8, window="prefix"))
    direct = lm.hidden(torch.arange(8)[None]).numpy()[0]
    np.testing.assert_allclose(pre, direct, atol=1e-6)
    rnd = embed_documents(lm, docs, EmbedOptions(context=8, tokens_per_doc=8, window="random", seed=1))
    assert not np.allclose(pre, rnd)
    with pytest.raises(ValueError, match="window"):
        EmbedOptions(window="middle")
    with pytest.raises(ValueError, match="special_tokens"):
        EmbedOptions(special_tokens="drop")


def test_bad_model_paths(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "missing")
    with pytest.raises(ValueError, match="neither"):
        load_model(tmp_path)


def test_a_long_document_raises_no_misleading_length_warning(tmp_path, capfd):
    """Documents longer than the model's maximum are windowed, so transformers' '(N > max) ... indexing
    errors' warning is silenced; without the silencing it appears (the mutant below)."""
    import logging

    from transformers import AutoTokenizer

    from tmcheck.empirics.lm import embed

    path = make_bert(tmp_path / "bert", TEXTS)
    tok = AutoTokenizer.from_pretrained(path)
    tok.model_max_length = 16
    lm = embed.LanguageModel(model=torch.nn.Identity(), tokenizer=tok, kind="encoder", source=str(path))
    long = " ".join(TEXTS) * 4

    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("transformers").addHandler(handler)
    try:
        embed.encode_text(lm, [long])
        assert not [r for r in records if "longer than the specified maximum" in r.getMessage()]
        tok("x", add_special_tokens=False)  # warm: the warning fires once per tokenizer
        tok2 = AutoTokenizer.from_pretrained(path)
        tok2.model_max_length = 16
        tok2(long, add_special_tokens=False)  # the mutant: the call without the silencing
        assert [r for r in records if "longer than the specified maximum" in r.getMessage()]
    finally:
        logging.getLogger("transformers").removeHandler(handler)
