"""Every reader of tmcheck given a FIFO, a device or a directory where it reads a file (#43).

One parametrised test over READERS x (FIFO, character device, directory): each is refused in under a
second of CPU time (after a warm-up call pays first-use imports), in one line naming the path and
what it is. Before #43, a FIFO hung with no message in 8 places
(`id estimate` .npy and .safetensors, `synth tuned`, `sweep status` on plan.json, `report` on config.json,
`train` on result.json, a run's spec.json) and `synth tuned /dev/zero` read until out of memory. Each case
runs under an alarm (and a watchdog for a read blocked inside C), so a reader that blocks fails here
instead of hanging the suite; the rule is
tmcheck.util.safeio, whose own tests read a regular file at the same paths (the mutation).
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness import invoke

sys.path.insert(0, str(Path(__file__).parents[1] / "empirics"))
import sweep_toy

import tmcheck.empirics.data.corpora
import tmcheck.empirics.data.tokens
import tmcheck.empirics.id.io
import tmcheck.empirics.lm.checkpoint
import tmcheck.empirics.lm.embed
import tmcheck.empirics.report.common
import tmcheck.empirics.report.reproduce
import tmcheck.empirics.sweep.tune  # noqa: F401  (imported here: a first import under the alarm is slow)
from tmcheck.empirics.sweep import SweepDir, register_kind

TOY = sweep_toy.ToyPreset(name="toy", xs=(1,))
KINDS = {"FIFO": "a FIFO", "device": "a character device", "directory": "a directory"}


@dataclass(frozen=True)
class Reader:
    name: str
    where: str  # the file it reads, relative to the root
    read: Callable[[Path], object]  # reads from the root
    setup: Callable[[Path], object] = lambda root: None
    directory: str = KINDS["directory"]  # what its refusal of a directory says (a run directory, for a checkpoint)


def _cli(*args):
    def run(root: Path):
        res = invoke([str(a).replace("ROOT", str(root)) for a in args])
        if res.exit_code != 2:
            raise AssertionError(f"exit {res.exit_code}: {res.output[-300:]}")
        if len(res.stderr.strip().splitlines()) != 1:
            raise AssertionError(f"not one line: {res.stderr!r}")
        raise ValueError(res.stderr.strip())

    return run


def _sweep(root: Path):
    SweepDir(root).open("exectoy", TOY)


def _lib(call):
    return call


def _points(root, name):
    from tmcheck.empirics.id.io import load_points

    return load_points(root / name)


def _tuned(root):
    from tmcheck.empirics.sweep.kinds import get_preset
    from tmcheck.empirics.sweep.tune import load_tuned

    return load_tuned(root / "chosen.json", get_preset("cpu", "synthetic"))


READERS = [
    Reader("sweep config", "config.json", lambda r: SweepDir(r).load()),
    Reader("sweep plan", "plan.json", lambda r: SweepDir(r).read_plan(), _sweep),
    Reader("sweep rows", "results.jsonl", lambda r: SweepDir(r).rows()),
    Reader("a run's row", "runs/toy-x1/row.json", lambda r: SweepDir(r).read_row("toy-x1")),
    Reader("a run's spec (sweep run)", "runs/toy-x1/spec.json", lambda r: sweep_toy_run(r), _sweep),
    Reader("trainer result.json", "result.json", lambda r: _result(r)),
    Reader("checkpoint", "best.pt", lambda r: _checkpoint(r), directory="no best.pt or last.pt in the run directory"),
    Reader("dataset.json", "dataset.json", lambda r: _dataset(r)),
    Reader("tokenizer", "tokenizer.json", lambda r: _tokenizer(r)),
    Reader("own text corpus", "corpus.txt", lambda r: _own(r)),
    Reader("points .npy", "x.npy", lambda r: _points(r, "x.npy")),
    Reader("points .safetensors", "x.safetensors", lambda r: _points(r, "x.safetensors")),
    Reader("points .pt", "x.pt", lambda r: _points(r, "x.pt")),
    Reader("tuned settings", "chosen.json", _tuned),
    Reader("embeddings", "e.npy", lambda r: _embeddings(r)),
    Reader("ID store", "id.json", lambda r: _id_store(r)),
    Reader("committed experiments", "exp/config.json", lambda r: _experiments(r)),
    Reader("CLI id estimate", "x.npy", _cli("id", "estimate", "ROOT/x.npy")),
    Reader("CLI synth tuned", "chosen.json", _cli("synth", "tuned", "ROOT/chosen.json")),
    Reader("CLI sweep status", "plan.json", _cli("sweep", "status", "ROOT"), _sweep),
    Reader("CLI report", "config.json", _cli("report", "ROOT")),
    Reader("CLI train --text", "corpus.txt", _cli("train", "--text", "ROOT/corpus.txt", "--out", "ROOT/out")),
    Reader("CLI fit (a CSV table)", "t.csv", _cli("fit", "ROOT/t.csv", "--x", "n")),
    Reader(
        "CLI export hf --tokenizer",
        "tok.json",
        _cli("export", "hf", "ROOT/run", "ROOT/out", "--tokenizer", "ROOT/tok.json"),
    ),
    Reader("CLI embed --text", "doc.txt", _cli("embed", "ROOT/run", "--text", "ROOT/doc.txt")),
]


def sweep_toy_run(root: Path):
    from tmcheck.empirics.sweep import run_spec

    sweep = SweepDir(root)
    return run_spec(sweep, sweep_toy.plan(sweep.context(), lambda s: None)[0])


def _result(root):
    from tmcheck.empirics.lm.checkpoint import read_result

    return read_result(root)


def _checkpoint(root):
    from tmcheck.empirics.lm.checkpoint import load_checkpoint

    return load_checkpoint(root / "best.pt")


def _dataset(root):
    from tmcheck.empirics.data.tokens import read_dataset

    return read_dataset(root)


def _tokenizer(root):
    from tmcheck.empirics.data.tokens import load_tokenizer

    return load_tokenizer(root / "tokenizer.json")


def _own(root):
    from tmcheck.empirics.data.corpora import own_docs

    return own_docs(f"text:{root / 'corpus.txt'}")


def _embeddings(root):
    from tmcheck.empirics.lm.embed import load_embeddings

    return load_embeddings(root / "e.npy")


def _id_store(root):
    from tmcheck.empirics.report.common import cached_entry

    return cached_entry(root / "id.json", "k", {})


def _experiments(root):
    from tmcheck.empirics.report.reproduce import experiments

    return experiments(root)


@pytest.fixture(autouse=True)
def toy():
    register_kind(sweep_toy.KIND)


def plant(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "FIFO":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        os.symlink("/dev/zero", path)  # a device where a file is read (the path given is a link to it)


class Blocked(Exception):
    pass


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_a_special_file_where_a_file_is_read_is_refused_at_once(tmp_path, reader, kind):
    # warm-up on a root without the file: the imports a command makes on first use (and the runner's own
    # set-up) are paid here, so the bound below times the refusal alone, not a loaded machine's imports
    warm = tmp_path / "warm"
    warm.mkdir()
    reader.setup(warm)
    with contextlib.suppress(Exception):
        reader.read(warm)
    root = tmp_path / "root"
    root.mkdir()
    reader.setup(root)
    plant(root / reader.where, kind)

    def fire(*_):
        raise Blocked(f"{reader.name} blocked on {kind}")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(5)
    # a read blocked inside C (a library opening the FIFO itself) never sees the alarm: the watchdog then
    # ends the process with the stack, so a regression stops the suite instead of hanging it
    faulthandler.dump_traceback_later(30, exit=True)
    t0 = time.thread_time()  # this thread's CPU: a loaded machine's waits and other threads' spinning do not count
    try:
        with pytest.raises((ValueError, OSError, RuntimeError)) as info:
            reader.read(root)
    finally:
        faulthandler.cancel_dump_traceback_later()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    seconds = time.thread_time() - t0  # a blocked read is the alarm's (5 s of wall time) to catch
    message = str(info.value)
    assert seconds < 1.0, f"{reader.name} took {seconds:.2f} CPU s (its thread's) to refuse {kind}"
    assert "\n" not in message.strip()
    said = reader.directory if kind == "directory" else KINDS[kind]
    assert str(root / reader.where) in message and said in message, message
