"""tmcheck.util.safeio: a FIFO, a device, a directory or a socket where a file is read is refused at
once in one line naming it; sizes and nesting are bounded; a regular file reads as before. Each case
runs under an alarm, so a reader that blocks fails instead of hanging the suite."""

from __future__ import annotations

import json
import os
import signal
import socket
from pathlib import Path

import pytest

from tmcheck.util import safeio


@pytest.fixture(autouse=True)
def alarm():
    def hang(*_):
        raise TimeoutError("the read blocked")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(5)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def special(tmp_path: Path, what: str) -> Path:
    if what == "FIFO":
        os.mkfifo(tmp_path / "f")
        return tmp_path / "f"
    if what == "directory":
        (tmp_path / "d").mkdir()
        return tmp_path / "d"
    if what == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(tmp_path / "s"))
        return tmp_path / "s"
    return Path("/dev/zero")


READERS = [
    lambda p: safeio.read_json(p, "a config"),
    lambda p: safeio.read_bytes(p),
    lambda p: safeio.read_text(p),
    lambda p: safeio.check_regular(p),
    lambda p: safeio.open_regular(p).close(),
    lambda p: safeio.read_jsonl(p),
]


@pytest.mark.parametrize("what", ["FIFO", "directory", "socket", "character device"])
@pytest.mark.parametrize("reader", READERS)
def test_special_files_are_refused_in_one_line_naming_them(tmp_path, what, reader):
    path = special(tmp_path, what)
    with pytest.raises(safeio.NotRegularFile) as info:
        reader(path)
    assert str(path) in str(info.value) and what in str(info.value) and "\n" not in str(info.value)


def test_a_regular_file_reads_and_a_missing_one_stays_file_not_found(tmp_path):
    f = tmp_path / "c.json"
    f.write_text('{"a": [1, 2]}')
    assert safeio.read_json(f) == {"a": [1, 2]} and safeio.read_bytes(f) == b'{"a": [1, 2]}'
    with pytest.raises(FileNotFoundError):
        safeio.read_json(tmp_path / "none.json")
    assert safeio.read_jsonl(tmp_path / "none.jsonl") == []


def test_size_and_nesting_are_bounded(tmp_path):
    f = tmp_path / "big"
    f.write_bytes(b"x" * 101)
    with pytest.raises(ValueError, match="101 bytes, more than"):
        safeio.read_bytes(f, "a token file", limit=100)
    assert len(safeio.read_bytes(f, limit=101)) == 101  # mutation: at the bound it reads
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match=f"{deep} is not a config .*nested more than"):
        safeio.read_json(deep, "a config")
    deep.write_text("[" * 101 + "]" * 101)
    with pytest.raises(ValueError, match="nested more than 100"):
        safeio.read_json(deep)
    deep.write_text("[" * 100 + "]" * 100)
    assert safeio.depth(safeio.read_json(deep)) == 100
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="not UTF-8"):
        safeio.read_json(bad)
    bad.write_text("{nope")
    with pytest.raises(ValueError, match="not JSON"):
        safeio.read_json(bad)
    assert json.loads("[1]") == safeio.loads("[1]", "x")
