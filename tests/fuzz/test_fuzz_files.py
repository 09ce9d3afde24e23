"""Corrupted files through the commands that read them: hypothesis mutates one node of a
valid network file (hostile JSON values, nesting), flips and truncates bytes of point files (.npy,
.npz, .pt, .safetensors) and CSV tables, and checks harness.check on each case; a mutated input is
read or refused in one line (exit 2), never a traceback, a hang or a write outside the cwd."""

from __future__ import annotations

import copy
import json

from harness import check, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PROFILE = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
HOSTILE_JSON = st.sampled_from(
    [
        5,
        None,
        True,
        False,
        1.0,
        -1,
        0,
        10**30,
        "1_000",
        "\u0661",
        "1e1000000000",
        "nan",
        "",
        "1/0",
        [],
        {},
        [[]],
        [[1, 2], [3]],
        {"a": 1},
        "x" * 1000,
        1e308,
        -1e308,
    ]
)


def _paths(obj, here=()):
    yield here
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*here, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:6]):
            yield from _paths(v, (*here, i))


def _set(obj, path, value):
    if not path:
        return value
    node = obj
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return obj


@PROFILE
@given(data=st.data())
def test_mutated_network_files(data, corpus, scratch):
    good = json.loads(corpus["net_good.json"].read_text())
    paths = list(_paths(good))
    mutated = copy.deepcopy(good)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        try:
            mutated = _set(mutated, path, data.draw(HOSTILE_JSON))
        except (KeyError, IndexError, TypeError):  # an earlier mutation removed the path
            pass
    f = scratch / f"mutated{data.draw(st.integers(0, 10**9))}.json"
    f.write_text(json.dumps(mutated))
    cmd = data.draw(st.sampled_from([["network", "info"], ["network", "eval"]]))
    coords = ["1/2"] * good["D"] if cmd[1] == "eval" else []
    o = run([*cmd, str(f), *coords], scratch)
    check(o)
    assert o.exit_code in (0, 2), o.describe()


def _mutate_bytes(data, raw: bytes) -> bytes:
    kind = data.draw(st.sampled_from(["truncate", "flip", "insert"]))
    if kind == "truncate":
        return raw[: data.draw(st.integers(0, max(0, len(raw) - 1)))]
    b = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(b) - 1))
        if kind == "flip":
            b[i] = data.draw(st.integers(0, 255))
        else:
            b[i:i] = data.draw(st.binary(min_size=1, max_size=16))
    return bytes(b)


@PROFILE
@given(data=st.data())
def test_mutated_point_files(data, corpus, scratch):
    name = data.draw(st.sampled_from(["pts_good.npy", "pts_good.npz", "pts_good.pt", "pts_bf16.safetensors"]))
    f = scratch / f"m{data.draw(st.integers(0, 10**9))}{corpus[name].suffix}"
    f.write_bytes(_mutate_bytes(data, corpus[name].read_bytes()))
    o = run(["id", "estimate", str(f), "--bootstrap", "0"], scratch)
    check(o)
    assert not (corpus["net_good.json"].parent / "PWNED").exists(), o.describe()


@PROFILE
@given(data=st.data())
def test_mutated_tables(data, corpus, scratch):
    f = scratch / f"t{data.draw(st.integers(0, 10**9))}.csv"
    f.write_bytes(_mutate_bytes(data, corpus["fit_good.csv"].read_bytes()))
    extra = data.draw(st.sampled_from([[], ["--group", "g"], ["--form", "power"], ["--where", "N>1e5"]]))
    o = run(["fit", str(f), "--x", "N", "--bootstrap", "20", "--coverage-reps", "20", *extra], scratch)
    check(o)


@PROFILE
@given(data=st.data())
def test_mutated_checkpoints(data, corpus, scratch):
    """A valid safetensors checkpoint with bytes flipped, inserted or cut, through the commands that
    load checkpoints (embed, export hf): refused in one line, never unpickled."""
    f = scratch / f"c{data.draw(st.integers(0, 10**9))}.pt"
    f.write_bytes(_mutate_bytes(data, corpus["ckpt_good.pt"].read_bytes()))
    argv = data.draw(
        st.sampled_from(
            [
                ["embed", str(f), "--text", str(corpus["fit_good.csv"]), "--output", "e.npy"],
                ["export", "hf", str(f), "hf_out"],
            ]
        )
    )
    o = run(argv, scratch)
    check(o)
    assert o.exit_code in (0, 2), o.describe()


@PROFILE
@given(data=st.data())
def test_mutated_sweep_configs(data, corpus, scratch):
    """config.json and results.jsonl of a sweep with hostile values, read by the report commands."""
    import shutil
    import tempfile
    from pathlib import Path

    d = Path(tempfile.mkdtemp(dir=scratch)) / "sweep"
    shutil.copytree(corpus["sweep_escape"], d)
    cfg = json.loads((d / "config.json").read_text())
    for key in data.draw(
        st.lists(st.sampled_from(["kind", "corpora", "sizes", "preset", "seeds"]), min_size=1, max_size=3, unique=True)
    ):
        cfg[key] = data.draw(HOSTILE_JSON | st.sampled_from(["pretrain", "synthetic", ["stories"], ["/abs/path"]]))
    (d / "config.json").write_text(json.dumps(cfg))
    o = run([*data.draw(st.sampled_from([["report"], ["sweep", "status"]])), str(d)], scratch)
    check(o)
    assert not (corpus["sweep_escape"].parent.parent / "escaped").exists(), o.describe()


def test_a_mutant_without_the_number_check_is_caught(corpus, scratch, monkeypatch):
    """With to_fraction's strict pattern removed (the mutant: Fraction reads '1_000'), the hostile
    file is accepted with exit 0 and check(bad_input=True) fails: the suite can see the defect."""
    from fractions import Fraction

    import pytest

    from tmcheck.theory import network

    original = network.to_fraction
    monkeypatch.setattr(network, "to_fraction", lambda v: Fraction(v) if isinstance(v, str) else original(v))
    o = run(["network", "info", str(corpus["net_underscore.json"])], scratch)
    with pytest.raises(AssertionError):
        check(o, bad_input=True)
