"""One run of the CLI on hostile input, and what the fuzz tests assert about it.

`run(argv, root)` invokes the real Typer app (typer's CliRunner) in a fresh working directory under
`root`, with a wall-clock alarm, and returns an `Outcome`: exit code, stderr, whether a traceback
escaped, the seconds taken, and the files that appeared or changed under `root` outside that working
directory (none may: a command writes only where it is told, and the fuzzer only tells it the cwd).

`invoke(args)` and `one_line(args, message)` run the app in the test's own directory, for cases that
set up their files themselves; `run_process(argv)` runs it in a process of its own, as a user does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from tmcheck.cli.main import app

CASE_SECONDS = 30  # the alarm per case: a case that runs longer is a hang (the bar is 10 s to refuse)
SECRET = "precious contents\n"  # what a file no command may write holds (the target of every hostile link)


class Hang(Exception):
    """Raised by the alarm inside a case that ran past CASE_SECONDS."""


@dataclass
class Outcome:
    argv: list[str]
    exit_code: int | None
    stderr: str
    output: str
    traceback: str | None
    seconds: float
    outside: list[str]

    def describe(self) -> str:
        return (
            f"tmcheck {' '.join(self.argv)!r}: exit {self.exit_code} in {self.seconds:.1f} s; "
            f"traceback={self.traceback!r}; outside={self.outside}; stderr={self.stderr[-300:]!r}"
        )


def snapshot(root: Path, skip: Path) -> dict[str, tuple[int, int]]:
    """Every file under root (not under skip) with its size and mtime."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if Path(dirpath) == skip or skip in Path(dirpath).parents:
            dirnames[:] = []
            continue
        for f in filenames:
            p = Path(dirpath) / f
            try:
                st = p.lstat()
            except FileNotFoundError:
                continue
            out[str(p)] = (st.st_size, st.st_mtime_ns)
    return out


@contextmanager
def _alarm(seconds: int):
    def fire(signum, frame):
        raise Hang(f"ran past {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


_runner = CliRunner()
_counter = iter(range(10**9))


def run(argv: list[str], root: Path, seconds: int = CASE_SECONDS) -> Outcome:
    cwd = root / f"case{next(_counter)}"
    cwd.mkdir()
    before = snapshot(root, cwd)
    old = os.getcwd()
    os.chdir(cwd)
    t0 = time.perf_counter()
    try:
        with _alarm(seconds):
            res = _runner.invoke(app, argv, catch_exceptions=True)
        code, err, out = res.exit_code, res.stderr, res.output
        exc = res.exception
        tb = None if exc is None or isinstance(exc, SystemExit) else f"{type(exc).__name__}: {str(exc)[:200]}"
        if tb is None and "Traceback (most recent call last)" in out:
            tb = "a traceback was printed"
    except Hang as exc:
        code, err, out, tb = None, "", "", f"Hang: {exc}"
    finally:
        os.chdir(old)
    seconds_taken = time.perf_counter() - t0
    after = snapshot(root, cwd)
    outside = sorted(p for p, st in after.items() if before.get(p) != st)
    return Outcome(list(argv), code, err, out, tb, seconds_taken, outside)


def check(o: Outcome, bad_input: bool = False) -> None:
    """The promises: no traceback, exit code 0, 1 or 2 (2 when the input is known bad, on one line),
    no file written outside the working directory."""
    assert o.traceback is None, o.describe()
    assert o.exit_code in (0, 1, 2), o.describe()
    assert not o.outside, o.describe()
    if bad_input:
        assert o.exit_code == 2, o.describe()
        assert len(o.stderr.strip().splitlines()) == 1, o.describe()


def invoke(args: list):
    """The app on args (paths or strings) in this process and directory: typer's result."""
    return _runner.invoke(app, [str(a) for a in args])


def one_line(args: list, message: str, code: int = 2):
    """`invoke(args)` exits with `code`, and its stderr is one line holding `message`."""
    res = invoke(args)
    assert res.exit_code == code, res.output
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    return res


def run_process(argv: list, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The CLI in a process of its own, as a user runs it: a crash of the process shows as a signal, and work
    inside C that Python's alarm cannot stop is stopped by the timeout."""
    cmd = [sys.executable, "-c", "from tmcheck.cli.main import app; app()", *(str(a) for a in argv)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
