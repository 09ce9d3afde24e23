"""Atomic file writes, the one implementation every part of tmcheck uses.

Write to a temporary file in the same directory, fsync it, os.replace it over the target, then fsync
the directory so the rename itself survives a crash. A reader (or a rerun after SIGKILL) sees either
the old file or the new one, never a partial file. Nothing is ever written through a link: the
temporary file is created new (O_CREAT | O_EXCL, which never follows a link), and the rename replaces
a symbolic link at the target instead of writing where it points. `writer` streams large files (token
shards) the same way; `open_append` is the one way to append (logs), with O_NOFOLLOW.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def writer(path: Path) -> Iterator[IO[bytes]]:
    """A binary file that becomes `path` when the block ends without an exception (fsync, rename,
    fsync of the directory); on an exception the temporary file is removed and `path` is untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:  # name the file the user knows, not the temporary one
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file ordinary permissions
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename == tmp:
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
    fsync_dir(path.parent)


def write_bytes(path: Path, data: bytes) -> None:
    with writer(path) as f:
        f.write(data)


def open_append(path: Path) -> IO[str]:
    """`path` opened to append text (created if absent), refused (ValueError) when it is a symbolic
    link or not a regular file: a log never writes through a link."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666 & ~_umask())
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{path} is a symbolic link; tmcheck never writes through one") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError(f"{path} is not a regular file; tmcheck appends only to its own logs")
    return os.fdopen(fd, "a", encoding="utf-8")


def fsync_dir(directory: Path) -> None:
    """Make a rename inside `directory` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def savefig(fig, path: Path, **kwargs) -> None:
    """A matplotlib figure written atomically (format from the suffix)."""
    import io

    buf = io.BytesIO()
    fmt = Path(path).suffix.lstrip(".") or "png"
    fig.savefig(buf, format=fmt, **kwargs)
    write_bytes(path, buf.getvalue())


def write_json(path: Path, obj: Any) -> None:
    write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def write_jsonl(path: Path, rows: list[dict]) -> None:
    write_text(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def read_jsonl(path: Path) -> list[dict]:
    """The JSON lines of `path` ([] when absent), read by the one rule for files (safeio)."""
    from tmcheck.util import safeio

    return safeio.read_jsonl(path, "JSON lines")
