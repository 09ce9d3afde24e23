"""Tokenizer and token shards: byte-level BPE (`tokenizers`) and numpy memmaps on disk.

Every file is written atomically under a temporary name (tmcheck.util.atomic), so a file or a link
left by an interrupted preparation is replaced, never written through. A prepared dataset is a
directory:
    tokenizer.json            the BPE, saved with the run
    {train,val,test}.bin      token ids (uint16, or uint32 for vocabularies over 65535), documents
                              concatenated with <|endoftext|> after each (one id at least)
    {train,val,test}.idx.npy  start offset of each document in the .bin file
    dataset.json              counts and provenance; written last, so its presence means "complete"
"""

from __future__ import annotations

import gzip
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from tmcheck.empirics.data.corpora import SPLITS, doc_hash, load_corpus, source_digest, split_corpus, split_of
from tmcheck.empirics.schema import MAX_VOCAB
from tmcheck.util import atomic, safeio

EOT = "<|endoftext|>"


def check_vocab(vocab_size: int) -> int:
    """A BPE vocabulary size tmcheck trains: 258 (256 bytes, <|endoftext|>, one merge) to MAX_VOCAB (the
    BPE trainer aborts the whole process, SIGABRT, on vocabularies far beyond that); ValueError otherwise."""
    if not 257 + 1 <= vocab_size <= MAX_VOCAB:
        raise ValueError(f"vocab_size must lie in [258, {MAX_VOCAB:,}], got {vocab_size:,}")
    return vocab_size


def train_tokenizer(docs: list[str], vocab_size: int, max_bytes: int = 4_000_000):
    """Byte-level BPE trained on the first documents up to max_bytes; id 0 is <|endoftext|>."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    check_vocab(vocab_size)
    sample, total = [], 0
    for d in docs:
        sample.append(d)
        total += len(d.encode("utf-8"))
        if total >= max_bytes:
            break
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOT],
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(sample, trainer=trainer)
    return tok


def load_tokenizer(path: Path):
    """A tokenizer.json, read by the one rule for files (a FIFO or a device is refused, never read)."""
    from tokenizers import Tokenizer

    return Tokenizer.from_str(safeio.read_text(path, "a tokenizer", safeio.JSON_LIMIT))


def encode_docs(
    tok, docs: list[str], max_tokens: int | None = None, min_docs: int = 0, batch: int = 512
) -> tuple[np.ndarray, np.ndarray]:
    """Token ids of the documents, each followed by EOT, stopping once max_tokens is reached and at
    least min_docs documents are in (whole documents only). Returns (ids, document start offsets)."""
    eot = tok.token_to_id(EOT)
    parts, starts, n = [], [], 0
    full = lambda: max_tokens is not None and n >= max_tokens and len(starts) >= min_docs  # noqa: E731
    for i in range(0, len(docs), batch):
        for enc in tok.encode_batch(docs[i : i + batch]):
            if full():
                break
            ids = enc.ids + [eot]
            starts.append(n)
            parts.append(np.asarray(ids, dtype=np.int64))
            n += len(ids)
        if full():
            break
    ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return ids, np.asarray(starts, dtype=np.int64)


@dataclass
class DatasetSpec:
    corpus: str
    vocab_size: int = 1024  # BPE vocabulary, including <|endoftext|>
    max_train_tokens: int = 10**9  # the "full training split" is capped here (whole documents)
    max_eval_tokens: int = 200_000  # the val and test splits are capped here...
    min_test_docs: int = 0  # ...and holds at least this many documents (for the ID) if it can
    tokenizer_bytes: int = 4_000_000  # bytes of training documents the BPE is trained on
    seed: int = 0  # seed of generated corpora (stories)
    tokenizer: str = ""  # a tokenizer.json to use instead of training a BPE (fine-tuning a
    # model with its own vocabulary); must hold <|endoftext|>


def dtype_for(vocab_size: int):
    return np.uint16 if vocab_size <= 65535 else np.uint32


def prepare_dataset(spec: DatasetSpec, out: Path, root: Path | None = None) -> dict:
    """Build (or reuse) the tokenized dataset for `spec` in `out`; returns dataset.json's contents."""
    out = Path(out)
    meta_path = out / "dataset.json"
    digest = source_digest(spec.corpus)
    if meta_path.exists():
        meta = read_dataset(out)
        if meta["spec"] != asdict(spec):
            raise ValueError(f"{out} holds a dataset prepared with a different spec; use a new directory")
        if meta.get("source_sha256") != digest:
            raise ValueError(f"{out} was prepared from other contents of {spec.corpus}; use a new directory")
        return meta
    docs = load_corpus(spec.corpus, root, seed=spec.seed)
    splits = split_corpus(docs)
    if not splits["train"] or not splits["test"] or not splits["val"]:
        raise ValueError(f"corpus {spec.corpus!r} is too small to split ({len(docs)} documents)")
    if spec.tokenizer:
        tok = load_tokenizer(Path(spec.tokenizer))
        if tok.token_to_id(EOT) is None or tok.get_vocab_size() > spec.vocab_size:
            raise ValueError(f"{spec.tokenizer} must hold {EOT} and at most vocab_size={spec.vocab_size} tokens")
    else:
        tok = train_tokenizer(splits["train"], spec.vocab_size, spec.tokenizer_bytes)
    out.mkdir(parents=True, exist_ok=True)
    atomic.write_text(out / "tokenizer.json", tok.to_str())
    counts = {}
    for s in SPLITS:
        cap = spec.max_train_tokens if s == "train" else spec.max_eval_tokens
        ids, starts = encode_docs(tok, splits[s], cap, spec.min_test_docs if s == "test" else 0)
        # each file under a temporary name, renamed into place: never written through a link left there
        with atomic.writer(out / f"{s}.bin") as f:
            (ids if len(ids) else np.zeros(1, np.int64)).astype(dtype_for(spec.vocab_size)).tofile(f)
        with atomic.writer(out / f"{s}.idx.npy") as f:
            np.save(f, starts)
        counts[s] = {"documents": int(len(starts)), "tokens": int(len(ids)), "documents_available": len(splits[s])}
    meta = {
        "spec": asdict(spec),
        "splits": counts,
        "vocab_size": tok.get_vocab_size(),
        "eot": tok.token_to_id(EOT),
        "source_sha256": digest,
    }
    atomic.write_json(meta_path, meta)
    return meta


def read_dataset(path: Path) -> dict:
    """dataset.json of the prepared dataset in `path`, read by the one rule for files (a regular file,
    bounded) and through the schema (tmcheck.empirics.schema.DatasetRecord): one line naming the field."""
    from tmcheck.empirics import schema

    where = Path(path) / "dataset.json"
    record = schema.validate(schema.DatasetRecord, safeio.read_json(where, "a prepared dataset record"), str(where))
    return asdict(record)


def open_split(path: Path, split: str, vocab_size: int | None = None) -> np.ndarray:
    """The token ids of one split as a read-only memmap; a shard shorter than dataset.json says, or
    holding an id at or beyond the vocabulary (`vocab_size`, default the dataset's), is refused."""
    path = Path(path)
    meta = read_dataset(path)
    n = meta["splits"][split]["tokens"]
    dtype = np.dtype(dtype_for(meta["spec"]["vocab_size"]))
    shard = path / f"{split}.bin"
    size = safeio.check_regular(shard, "a token shard").stat().st_size
    if size < max(n, 1) * dtype.itemsize:
        raise ValueError(f"{shard} holds {size // dtype.itemsize:,} token ids, dataset.json says {n:,}")
    ids = np.memmap(shard, dtype=dtype, mode="r", shape=(max(n, 1),))[:n]
    vocab = meta["vocab_size"] if vocab_size is None else vocab_size
    if n and int(ids.max()) >= vocab:
        raise ValueError(f"{shard} holds token id {int(ids.max()):,}, beyond the vocabulary of {vocab:,}")
    return ids


def corpus_stats(name: str, vocab_size: int = 4096, root: Path | None = None, seed: int = 0) -> dict:
    """Documents, bytes, BPE tokens (tokenizer trained on this corpus) and gzip ratio, per split and total."""
    check_vocab(vocab_size)
    docs = load_corpus(name, root, seed=seed)
    splits = split_corpus(docs)
    tok = train_tokenizer(splits["train"], vocab_size)
    rows = {}
    for s in SPLITS:
        raw = "\n".join(splits[s]).encode("utf-8")
        ids, _ = encode_docs(tok, splits[s])
        rows[s] = {
            "documents": len(splits[s]),
            "bytes": len(raw),
            "tokens": int(len(ids)),
            "gzip_ratio": len(gzip.compress(raw, 6)) / max(len(raw), 1),
        }
    total_raw = sum(r["bytes"] for r in rows.values())
    total = {
        "documents": sum(r["documents"] for r in rows.values()),
        "bytes": total_raw,
        "tokens": sum(r["tokens"] for r in rows.values()),
        "gzip_ratio": sum(r["gzip_ratio"] * r["bytes"] for r in rows.values()) / max(total_raw, 1),
    }
    return {
        "corpus": name,
        "vocab_size": vocab_size,
        "splits": rows,
        "total": total,
        "bytes_per_token": total_raw / max(total["tokens"], 1),
    }


def target_stream(g, tok, split: str = "test", max_tokens: int | None = None) -> dict:
    """The documents of one split of a known-exponent corpus (g, a tmcheck.empirics.data.known generator) as
    the token stream this module writes (same order, same
    cap: whole documents until max_tokens), with which tokens are targets.

    Returns {"ids" (N,), "target" (N,) bool, "records", "bayes_loss" (Σ over records of -log p_Bayes),
    "documents"}. A token is a target when its characters lie inside a value's span; a token that straddles
    a span's edge is refused (ValueError): the value's loss would not be separable from its input's."""
    seen, docs = set(), []
    for doc in g.annotated():
        if doc.text not in seen and split_of(doc.text) == split:
            seen.add(doc.text)
            docs.append(doc)
    docs.sort(key=lambda doc: doc_hash(doc.text))
    eot = tok.token_to_id(EOT)
    ids, target, bayes, records = [], [], 0.0, 0
    for doc in docs:
        if max_tokens is not None and len(ids) >= max_tokens:
            break
        enc = tok.encode(doc.text)
        inside = np.zeros(len(enc.ids), dtype=bool)
        for s, e in doc.spans:
            for i, (a, b) in enumerate(enc.offsets):
                if a < e and b > s:  # overlaps the value
                    if a < s or b > e:
                        raise ValueError(f"token {i} of a {g.kind} document spans a value's edge: {doc.text[a:b]!r}")
                    inside[i] = True
        ids += [*enc.ids, eot]
        target += [*inside.tolist(), False]
        bayes -= sum(doc.bayes_logp)
        records += len(doc.spans)
    return {
        "ids": np.asarray(ids, dtype=np.int64),
        "target": np.asarray(target, dtype=bool),
        "records": records,
        "bayes_loss": bayes,
        "documents": len(docs),
    }
