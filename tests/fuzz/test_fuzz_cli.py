"""Hypothesis drives every registered command (walked from tmcheck.cli.main.app) with mutated
argument lists and corrupted files, and checks the suite's promises on each case (harness.check):
no traceback, exit code 0, 1 or 2, nothing written outside the case's working directory, and a
bounded time (harness.CASE_SECONDS). Commands that do long work (training, sweeps, downloads) are
given inputs that must be refused before any work starts, and must exit 2.

Under HYPOTHESIS_PROFILE=ci (tests/conftest.py) the examples are derandomised and bounded.
"""

from __future__ import annotations

import pytest
import typer
from harness import check, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tmcheck.cli.main import app

PROFILE = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)


def leaves(command, path=()):
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from leaves(sub, (*path, name))
    else:
        yield path, command


LEAVES = dict(leaves(typer.main.get_command(app)))
# commands whose valid inputs finish in seconds: fuzzed with any mix of values
LIGHT = {
    ("network", "eval"),
    ("network", "info"),
    ("lemma", "interaction"),
    ("lemma", "gating"),
    ("lemma", "addition"),
    ("lemma", "replace"),
    ("lemma", "parallel"),
    ("bound", "covering"),
    ("bound", "theorem1"),
    ("bound", "lemma1"),
    ("bound", "theorem2"),
    ("predict",),
    ("fit",),
    ("id", "estimate"),
    ("id", "synth"),
}
HOSTILE = [
    "-1",
    "0",
    "-5",
    "nan",
    "inf",
    "-inf",
    "1e1000000000",
    "1e-300",
    "",
    "abc",
    "1_000",
    "\u0661",
    "10**10**10",
    "2**2**2**2**2**2",
    "99999999999999999999",
    "1/0",
    "../escape",
    "/",
    "x0",
    "sin(",
    "1,2",
    "1,,2",
    ";",
    "{}",
    "tpu",
    "cuda:99",
]
PLAUSIBLE = ["1", "2", "3", "0.5", "1/3", "0.1", "8", "x0*x1"]


def options(command) -> list[str]:
    return [
        o
        for p in command.params
        if getattr(p, "param_type_name", "") == "option"
        for o in p.opts[:1]
        if o not in ("--json", "--help", "--out", "--export", "--plot", "--size-limit", "--max-bits")
    ]


def arguments(command) -> list:
    return [p for p in command.params if getattr(p, "param_type_name", "") == "argument"]


def test_the_walk_sees_every_group():
    groups = {path[0] for path in LEAVES}
    assert {
        "network",
        "lemma",
        "theorem",
        "bound",
        "id",
        "fit",
        "predict",
        "sweep",
        "synth",
        "train",
        "embed",
    } <= groups
    assert LIGHT <= set(LEAVES)


@st.composite
def light_argv(draw, corpus_names, path):
    command = LEAVES[path]
    argv = list(path)
    for arg in arguments(command):
        n = 1 if arg.nargs == 1 else draw(st.integers(1, 7))
        for _ in range(n):
            argv.append(draw(st.sampled_from(corpus_names + HOSTILE + PLAUSIBLE)))
    opts = options(command)
    for opt in draw(st.lists(st.sampled_from(opts), max_size=3, unique=True)) if opts else []:
        argv += [opt, draw(st.sampled_from(HOSTILE + PLAUSIBLE))]
    return argv


def _resolve(argv, corpus):
    return [str(corpus[a]) if a in corpus else a for a in argv]


@pytest.mark.parametrize("path", sorted(LIGHT), ids=" ".join)
@PROFILE
@given(data=st.data())
def test_light_commands_with_mutated_arguments(path, data, corpus, scratch):
    argv = data.draw(light_argv(sorted(corpus), path))
    o = run(_resolve(argv, corpus), scratch)
    check(o)
    assert not (corpus["net_good.json"].parent / "PWNED").exists(), o.describe()


# commands that do long work: a corrupt or hostile path argument must be refused before any work
PATH_COMMANDS = {
    ("report",): [],
    ("sweep", "status"): [],
    ("id", "corpus"): [],
    ("id", "ablate"): [],
    ("export", "hf"): ["OUT"],
    ("embed",): ["--text", "fit_good.csv"],
    ("sweep", "data"): [],
}
PATHS = [
    "sweep_escape",
    "sweep_garbage",
    "run_bad",
    "ckpt_pickle.pt",
    "ckpt_torch_pickle.pt",
    "ckpt_truncated.safetensors",
    "net_good.json",
    "absent_dir",
]


@pytest.mark.parametrize("path", sorted(PATH_COMMANDS), ids=" ".join)
@pytest.mark.parametrize("target", PATHS)
def test_long_commands_refuse_corrupt_paths(path, target, corpus, scratch):
    if path == ("sweep", "data") and target == "absent_dir":
        pytest.skip("a new directory is a new sweep: it starts one, by design")
    argv = [*path, str(corpus.get(target, target))]
    extra = PATH_COMMANDS[path]
    argv += [str(corpus.get(a, a)) for a in extra]
    o = run(argv, scratch)
    check(o, bad_input=True)
    assert not (corpus["net_good.json"].parent / "PWNED").exists(), o.describe()
    assert not (corpus["sweep_escape"].parent.parent / "escaped").exists(), o.describe()


BAD_OPTIONS = [  # hostile options of commands that train, sweep or download
    ["train", "--device", "tpu"],
    ["train", "--preset", "zzz"],
    ["train", "--tokens", "-5"],
    ["id", "corpus", "absent_dir", "--beta", "0"],
    ["id", "corpus", "absent_dir", "--beta", "-1"],
    ["id", "corpus", "absent_dir", "--context", "0"],
    ["id", "corpus", "absent_dir", "--device", "tpu"],
    ["id", "synth", "--noise", "nan"],
    ["id", "synth", "--noise", "inf"],
    ["id", "synth", "--noise", "-1"],
    ["sweep", "synthetic", "--set", "noise=nan"],
    ["sweep", "synthetic", "--dims", ""],
    ["sweep", "synthetic", "--set", "dims="],
    ["sweep", "synthetic", "--set", "seeds=0,-1"],
    ["sweep", "synthetic", "--set", "ns=100,200"],
    ["sweep", "synthetic", "--set", "zzz=1"],
    ["sweep", "synthetic", "--d", "1"],
    ["report", "absent_dir", "--bootstrap", "-5"],
    ["demo", "--only", "zzz"],
    ["proofs", "--section", "zzz"],
    ["data", "stats", "zzz"],
    ["data", "stats", "stories", "--vocab", "1000000000"],
    ["data", "prepare", "zzz"],
    ["sweep", "data", "--preset", "zzz"],
]


@pytest.mark.parametrize("argv", BAD_OPTIONS, ids=" ".join)
def test_long_commands_refuse_bad_options(argv, scratch):
    check(run(argv, scratch, seconds=15), bad_input=True)
