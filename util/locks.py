"""Exclusive locks on files, which never write through a link.

A lock file is created with O_CREAT | O_NOFOLLOW and never truncated: if the path is a symbolic
link, a FIFO, a device or a file with other hard links, it is refused (ValueError) and nothing is
written. The holder writes its pid, padded to a fixed width, at offset 0 of the file it created (or
of an earlier lock file: a regular file of at most PID_WIDTH bytes and one link). The flock is
released by the operating system when the holder dies, however it dies (SIGKILL included).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

PID_WIDTH = 24  # bytes of the pid record: the pid, spaces, a newline
TRIES, WAIT_S = 10, 0.05  # `sweep status` probes locks for an instant: retry briefly before refusing


class Busy(ValueError):
    """Another process holds the lock."""


def _open(path: Path, create: bool) -> int | None:
    """A file descriptor of the lock file, or None when it does not exist and `create` is false."""
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | (os.O_CREAT if create else 0), 0o644)
    except FileNotFoundError:
        if create:
            raise
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{path} is a symbolic link, not a lock file; remove it") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_size > PID_WIDTH:
        os.close(fd)
        raise ValueError(
            f"{path} is not a lock file of tmcheck (a regular file of one link, at most {PID_WIDTH} bytes)"
        )
    return fd


def _holder(fd: int) -> str:
    try:
        return os.pread(fd, PID_WIDTH, 0).decode("ascii", "replace").strip() or "unknown"
    except OSError:
        return "unknown"


@contextlib.contextmanager
def hold(path: Path, what: str, readonly_ok: bool = False) -> Iterator[None]:
    """Hold an exclusive, non-blocking flock on `path` (created if absent); Busy names the holder.

    With `readonly_ok`, a lock that cannot be created or opened for writing (a read-only directory or
    file system) is not taken: the caller can write nothing there either, so it races with no one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = _open(path, create=True)
    except OSError as exc:
        if readonly_ok and exc.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
            yield
            return
        raise
    try:
        for attempt in range(TRIES):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if attempt == TRIES - 1:
                    raise Busy(
                        f"{what} is in use by another process (pid {_holder(fd)}); wait for it to finish"
                    ) from None
                time.sleep(WAIT_S)
        os.pwrite(fd, f"{os.getpid():<{PID_WIDTH - 1}}\n".encode("ascii"), 0)
        yield
    finally:
        os.close(fd)


def is_held(path: Path) -> bool:
    """Whether a process holds the lock now (a missing, linked or foreign file is not held)."""
    try:
        fd = _open(Path(path), create=False)
    except (ValueError, OSError):
        return False
    if fd is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
