"""Reading a file the user gave: a regular file, opened without blocking, its size bounded (#43).

A path where tmcheck reads a file may name a FIFO (opening it for reading waits for a writer,
forever), a device (`/dev/zero` never ends), a directory or a socket. Every reader opens it here:
`os.open` with O_NONBLOCK (which returns at once on a FIFO), `fstat` on the descriptor it got (not a
second look-up by name, which a swap could fool), a regular file required, and its size checked
against a bound before a byte is read. Anything else is one line (ValueError) naming the path the
user gave and what it is; a missing file stays FileNotFoundError.

- `open_regular(path, what, limit)`: a binary file object, checked;
- `check_regular(path, what, limit)`: the same check for a reader that hands the path to a library
  (numpy, safetensors, tokenizers): the file is opened, checked and closed;
- `read_bytes`, `read_text`, `read_json`: the whole file, at most `limit` bytes; JSON nested deeper
  than `MAX_DEPTH` is refused in one line instead of a RecursionError.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import IO, Any

MiB = 1 << 20
JSON_LIMIT = 256 * MiB  # configs, plans, rows, results: far below this
FILE_LIMIT = 64 << 30  # a file handed to a library (checkpoints, shards): the bound that is still a bound
MAX_DEPTH = 100  # nesting of a JSON document tmcheck reads (its own files nest fewer than 10 deep)


class NotRegularFile(ValueError):
    """The path names a FIFO, a device, a directory or a socket where a file is read."""


def kind(mode: int) -> str:
    """What a file of this st_mode is, in words."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def _refuse(path: Path, mode: int, what: str) -> None:
    if not stat.S_ISREG(mode):
        raise NotRegularFile(f"{path} is {kind(mode)}, not a regular file ({what} is read from a file)")


def _open_fd(path: Path, what: str, limit: int | None) -> tuple[int, os.stat_result]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a device without its driver) cannot be opened
            _refuse(path, os.stat(path).st_mode, what)
        raise
    try:
        st = os.fstat(fd)
        _refuse(path, st.st_mode, what)
        if limit is not None and st.st_size > limit:
            raise ValueError(f"{path} holds {st.st_size:,} bytes, more than {what} may ({limit:,})")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def open_regular(path: Path | str, what: str = "the file", limit: int | None = FILE_LIMIT) -> IO[bytes]:
    """`path` opened to read bytes, after the checks above (NotRegularFile, ValueError on the size)."""
    fd, _ = _open_fd(Path(path), what, limit)
    return os.fdopen(fd, "rb")


def check_regular(path: Path | str, what: str = "the file", limit: int | None = FILE_LIMIT) -> Path:
    """`path` if it is a regular file within `limit` bytes (checked on an open descriptor), else the
    one-line refusal; for readers that hand the path to a library."""
    fd, _ = _open_fd(Path(path), what, limit)
    os.close(fd)
    return Path(path)


def read_bytes(path: Path | str, what: str = "the file", limit: int | None = FILE_LIMIT) -> bytes:
    """The whole file, refused beyond `limit` bytes (also when it grows while it is read)."""
    fd, st = _open_fd(Path(path), what, limit)
    chunks, total = [], 0
    with os.fdopen(fd, "rb") as f:
        while chunk := f.read(max(st.st_size + 1, 1 << 16)):
            chunks.append(chunk)
            total += len(chunk)
            if limit is not None and total > limit:
                raise ValueError(f"{path} holds more than {limit:,} bytes, more than {what} may")
    return b"".join(chunks)


def read_text(path: Path | str, what: str = "the file", limit: int | None = JSON_LIMIT) -> str:
    """The file as UTF-8 text; one line naming it when it is not UTF-8."""
    try:
        return read_bytes(path, what, limit).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not {what} (not UTF-8 text at byte {exc.start})") from None


def depth(obj: Any) -> int:
    """Nesting depth of a JSON value (a scalar is 0), computed without recursion."""
    best, stack = 0, [(obj, 0)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            best = max(best, d + 1)
            stack.extend((v, d + 1) for v in node if isinstance(v, (dict, list)))
    return best


def loads(text: str, where: str, what: str = "JSON") -> Any:
    """A JSON document from text read from `where`: one line naming `where` when it is not JSON or
    nests deeper than MAX_DEPTH."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where} is not {what} (not JSON: {str(exc).splitlines()[0][:80]})") from None
    except RecursionError:
        raise ValueError(f"{where} is not {what} (JSON nested more than {MAX_DEPTH} deep)") from None
    if depth(obj) > MAX_DEPTH:
        raise ValueError(f"{where} is not {what} (JSON nested more than {MAX_DEPTH} deep)")
    return obj


def read_json(path: Path | str, what: str = "a JSON file", limit: int | None = JSON_LIMIT) -> Any:
    """The JSON document in `path`, read by the rule above."""
    return loads(read_text(path, what, limit), str(path), what)


def read_json_optional(path: Path | str, what: str = "a JSON file", default: Any = None) -> Any:
    """`read_json`, or `default` when `path` does not exist."""
    try:
        return read_json(path, what)
    except FileNotFoundError:
        return default


def read_jsonl(path: Path | str, what: str = "JSON lines", limit: int | None = JSON_LIMIT) -> list:
    """Every non-blank line of `path` as JSON ([] when the file is absent)."""
    try:
        text = read_text(path, what, limit)
    except FileNotFoundError:
        return []
    return [loads(line, str(path), what) for line in text.splitlines() if line.strip()]
