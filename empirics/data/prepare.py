"""`tmcheck data prepare NAME`: the optional larger corpora, from Debian packages.

- `sql`: the `.test` files of `mariadb-test-data`, filtered to SQL statements (mysqltest
  directives such as `--echo` or `let $x=` are dropped).
- `prose-large`: Linux `Documentation/` (reStructuredText) from `linux-source-6.1`, the
  reStructuredText sources of `python3.11-doc`, and the World English Bible (`sword-text-web`,
  read with `diatheke`).
Preparing installs the packages with apt-get (root needed) and writes one JSON-lines file of
documents to the data root; `load_corpus` then reads it (the read side, `load_prepared` and
`is_prepared`, lives beside the corpora in tmcheck.empirics.data.corpora).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

from tmcheck.empirics.data.corpora import PACKAGES, chunk, data_root, prepared_path
from tmcheck.util import atomic

BIBLE_BOOKS = [
    "Genesis",
    "Exodus",
    "Psalms",
    "Proverbs",
    "Isaiah",
    "Matthew",
    "Mark",
    "Luke",
    "John",
    "Acts",
    "Romans",
    "Revelation",
]


def apt_install(packages: list[str]) -> None:
    if shutil.which("apt-get") is None:
        raise OSError("apt-get not found: the optional corpora need a Debian or Ubuntu system")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    for cmd in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", *packages]):
        proc = subprocess.run(sudo + cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise OSError(f"{' '.join(cmd[:2])} failed: {last}")


_SQL_START = re.compile(
    r"^\s*(select|insert|update|delete|create|drop|alter|with|replace|grant|set|show|"
    r"explain|truncate|call|begin|commit|rollback|prepare|execute|use|analyze|optimize)\b",
    re.I,
)


def sql_only(text: str) -> str:
    """Keep the SQL statements of a mysqltest file: lines from a statement keyword up to its `;`."""
    keep, inside = [], False
    for line in text.splitlines():
        if not inside and _SQL_START.match(line):
            inside = True
        if inside:
            keep.append(line)
            if line.rstrip().endswith(";"):
                inside = False
    return "\n".join(keep)


def sql_docs() -> list[str]:
    docs = []
    for path in sorted(Path("/usr/share/mysql/mysql-test").rglob("*.test")):
        text = sql_only(path.read_text(encoding="utf-8", errors="replace"))
        docs.extend(chunk(text))
    return docs


def prose_large_docs() -> list[str]:
    docs = []
    for tar_path in sorted(Path("/usr/src").glob("linux-source-6.1*.tar.*")):
        with tarfile.open(tar_path) as tar:
            for m in tar:
                if m.isfile() and "/Documentation/" in m.name and m.name.endswith((".rst", ".txt")):
                    docs.extend(chunk(tar.extractfile(m).read().decode("utf-8", errors="replace")))
    for path in sorted(Path("/usr/share/doc/python3.11").rglob("*.txt")):
        docs.extend(chunk(path.read_text(encoding="utf-8", errors="replace")))
    for book in BIBLE_BOOKS:
        proc = subprocess.run(["diatheke", "-b", "WEB", "-k", book], capture_output=True, text=True)
        if proc.returncode == 0:
            docs.extend(chunk(re.sub(r"^\S+ \d+:\d+: ", "", proc.stdout, flags=re.M)))
    return docs


STAGES = ("install", "extract", "write")  # what `prepare` reports to `on_stage` as each one ends


def prepare(name: str, root: Path | None = None, install: bool = True, on_stage=None) -> Path:
    """Install the Debian packages of corpus `name`, extract its documents, write them to the data root.

    `on_stage(stage)` is called as each of STAGES ends (a progress bar's advance)."""
    done = on_stage or (lambda stage: None)
    if name not in PACKAGES:
        raise ValueError(f"nothing to prepare for {name!r}; optional corpora are {', '.join(PACKAGES)}")
    if install:
        apt_install(PACKAGES[name])
    done(STAGES[0])
    docs = sql_docs() if name == "sql" else prose_large_docs()
    if not docs:
        raise OSError(f"no documents found for {name!r} after installing {', '.join(PACKAGES[name])}")
    done(STAGES[1])
    path = prepared_path(name, root or data_root())
    atomic.write_text(path, "".join(json.dumps(d) + "\n" for d in docs))
    done(STAGES[2])
    return path
