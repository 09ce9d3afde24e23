"""Corpora, tokenizer and token shards for the data-scaling experiment (Section 3 of the paper)."""

from tmcheck.empirics.data.corpora import (
    BUILTIN,
    CORPORA,
    check_corpus,
    corpus_slug,
    data_root,
    load_corpus,
    split_corpus,
)
from tmcheck.empirics.data.tokens import DatasetSpec, corpus_stats, open_split, prepare_dataset

__all__ = [
    "BUILTIN",
    "CORPORA",
    "DatasetSpec",
    "check_corpus",
    "corpus_slug",
    "corpus_stats",
    "data_root",
    "load_corpus",
    "open_split",
    "prepare_dataset",
    "split_corpus",
]
