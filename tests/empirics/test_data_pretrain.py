"""Corpora, splits, tokenizer and token shards of the pretraining pipeline."""

import numpy as np
import pytest

from tmcheck.empirics.data import DatasetSpec, open_split, prepare_dataset, split_corpus
from tmcheck.empirics.data.batches import LMBatches, eval_windows
from tmcheck.empirics.data.corpora import chunk, code_docs, dedup, split_of, strip_licence
from tmcheck.empirics.data.stories import stories, story


def test_stories_are_deterministic_and_simple():
    assert story(0, 5) == story(0, 5)
    assert story(0, 5) != story(1, 5)
    docs = stories(0, 500)
    vocab = {w.strip(".,") for d in docs for w in d.split()}
    assert len(vocab) < 400  # a small vocabulary, as TinyStories


def test_dedup_removes_exact_duplicates_only():
    assert dedup(["a", " a\n", "b", "", "A"]) == ["a", "b", "A"]


def test_split_depends_only_on_the_document():
    docs = [f"document number {i}" for i in range(3000)]
    full = split_corpus(docs)
    part = split_corpus(docs[:1000])
    for s, v in part.items():
        assert set(v) <= set(full[s])
    assert all(split_of(d) == s for s, v in full.items() for d in v)
    frac = {s: len(v) / len(docs) for s, v in full.items()}
    assert 0.87 < frac["train"] < 0.93 and 0.03 < frac["test"] < 0.07


def test_chunk_respects_the_limit_and_keeps_text():
    text = "\n\n".join("word " * k for k in range(1, 300))
    pieces = chunk(text, 500)
    assert all(len(p) <= 500 for p in pieces)
    assert "".join(pieces).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(" ", "")


def test_strip_licence():
    text = ("header\n*** START OF THE PROJECT GUTENBERG EBOOK HAMLET ***\nTo be or not to be\n"
            "*** END OF THE PROJECT GUTENBERG EBOOK HAMLET ***\nlicence text")
    assert strip_licence(text).strip() == "To be or not to be"


def test_code_corpus_is_the_stdlib():
    docs = code_docs()
    assert len(docs) > 1000
    assert any("def " in d for d in docs[:50])


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("ds")
    spec = DatasetSpec(corpus="stories", vocab_size=300, max_train_tokens=20_000, max_eval_tokens=2_000,
                       tokenizer_bytes=100_000, min_test_docs=40)
    return out, prepare_dataset(spec, out), spec


def test_prepared_dataset(dataset):
    out, meta, spec = dataset
    train = open_split(out, "train")
    assert meta["splits"]["train"]["tokens"] == len(train) >= 20_000
    assert meta["splits"]["test"]["documents"] >= 40
    assert train.max() < meta["vocab_size"] and (np.asarray(train) == meta["eot"]).sum() > 10
    assert (out / "tokenizer.json").exists()
    assert prepare_dataset(spec, out) == meta  # reused, not rebuilt
    with pytest.raises(ValueError, match="different spec"):
        prepare_dataset(DatasetSpec(corpus="stories", vocab_size=301), out)


def test_lm_batches(dataset):
    out, meta, spec = dataset
    train = open_split(out, "train")
    src = LMBatches(train, 5_000, 16, 4, seed=3)
    x, y = src(7, 0)
    assert x.shape == y.shape == (4, 16)
    assert (x[:, 1:] == y[:, :-1]).all()
    assert all((a == b).all() for a, b in zip(src(7, 0), LMBatches(train, 5_000, 16, 4, seed=3)(7, 0)))
    assert not (src(8, 0)[0] == x).all()
    with pytest.raises(ValueError, match="exceeds the training split"):
        LMBatches(train, len(train) + 1, 16, 4)
    wins = eval_windows(open_split(out, "val"), 16, 8, 1_000)
    assert sum(len(w[0]) for w in wins) == (1_000 - 1) // 16
