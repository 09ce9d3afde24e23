"""`tmcheck train --out DIR` on a run directory that was tampered with, shared or frozen (#43), and the other
tracebacks of round four: each is one line on stderr and exit 2 (or, for a frozen finished run, its result).

Every case starts from one finished tiny run (copied per test) and changes one thing; the untouched copy is
the mutation that shows each check can fail: it trains or reports with exit 0.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from harness import invoke

from tmcheck.empirics.lm.checkpoint import CheckpointError, load_checkpoint, load_gpt, save_checkpoint
from tmcheck.util import locks

ARGS = ["train", "--preset", "tiny", "--tokens", "2000", "--max-steps", "2", "--json"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("train") / "run"
    res = invoke([*ARGS, "--out", out])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture
def run(finished, tmp_path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(finished, out)
    return out


def refused(out: Path, *words: str):
    res = invoke([*ARGS, "--out", out])
    assert res.exit_code == 2, res.output
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output, res.stderr
    for w in words:
        assert w in res.stderr, res.stderr
    return res.stderr


def edit_json(path: Path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def test_the_untouched_copy_is_reported_with_exit_0(run):
    res = invoke([*ARGS, "--out", run])
    assert res.exit_code == 0 and json.loads(res.stdout)["steps"] == 2


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [("best_val", float("inf"), "best_val"), ("steps", 10**40, "steps"), ("tokens", 5, "tokens")],
)
def test_an_implausible_result_json_is_refused(run, field, value, says):
    # before: best_val = Infinity or steps 10^40 was printed as the run's result (the schema checked types only)
    edit_json(run / "result.json", lambda d: d.__setitem__(field, value))
    refused(run, str(run / "result.json"), says)


def test_a_resumed_last_pt_with_impossible_counters_is_refused(run):
    # before: a last.pt with step 10^30 and 5 tokens was resumed and reported as the result
    (run / "result.json").unlink()
    ck = load_checkpoint(run / "last.pt")
    save_checkpoint(run / "last.pt", {**ck, "step": 10**30, "tokens": 5})
    refused(run, "last.pt", "max_steps")
    ck["tokens"] = 7  # the step right, the tokens not steps x batch x context
    save_checkpoint(run / "last.pt", ck)
    refused(run, "last.pt", "tokens")


def test_shards_with_ids_beyond_the_vocabulary_are_refused(run):
    # before: IndexError in the embedding, a traceback
    (run / "result.json").unlink()
    ids = np.memmap(run / "data" / "train.bin", dtype=np.uint16, mode="r+")
    ids[3] = 65535
    ids.flush()
    del ids
    refused(run, "train.bin", "65,535", "vocabulary")


def test_dataset_json_is_read_through_the_schema(run):
    # before: "tokens": "40082" gave a TypeError traceback
    edit_json(run / "data" / "dataset.json", lambda d: d["splits"]["train"].__setitem__("tokens", "40082"))
    refused(run, "dataset.json", "splits.train.tokens")


def test_two_trainings_in_one_directory_are_refused(run):
    # before: two `train --out` on one directory both trained (no run lock)
    with locks.hold(run / ".lock", "a test holding the run"):
        refused(run, "in use by another process")


def test_a_finished_run_is_read_without_rewriting_it(run, monkeypatch):
    # before: a finished run on a read-only disk failed on rewriting run.json (and now on its lock)
    stamp = (run / "run.json").stat().st_mtime_ns
    real = locks._open

    def read_only(path, create):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(locks, "_open", read_only)  # a lock file that cannot be created, as on a read-only disk
    res = invoke([*ARGS, "--out", run])
    assert res.exit_code == 0, res.output
    assert (run / "run.json").stat().st_mtime_ns == stamp
    monkeypatch.setattr(locks, "_open", real)
    with pytest.raises(PermissionError):  # mutation: without readonly_ok the same lock is an error
        monkeypatch.setattr(locks, "_open", read_only)
        with locks.hold(run / ".lock", "x"):
            pass


def test_a_huge_model_is_refused_before_it_is_built(tmp_path):
    # before: --n-layer 1000000 built blocks for 3 minutes until MemoryError, then its printer raised again
    t0 = time.thread_time()  # CPU time of this thread: a loaded machine's waits do not count
    for args, says in (
        (["--n-layer", "1000000"], "n_layer"),
        (["--n-layer", "4000", "--n-embd", "4096", "--n-head", "4"], "memory"),
    ):
        res = invoke(["train", "--preset", "tiny", *args, "--out", tmp_path / "big"])
        assert res.exit_code == 2 and says in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert time.thread_time() - t0 < 10 and not (tmp_path / "big").exists()


def test_nan_weights_are_refused_at_load(run):
    # before: a checkpoint with NaN weights embedded to NaN rows with exit 0
    assert load_gpt(run / "best.pt") is not None  # mutation: the finite checkpoint loads
    ck = load_checkpoint(run / "best.pt")
    name = next(k for k in ck["model"] if k.endswith("weight"))
    ck["model"][name][0] = float("nan")
    save_checkpoint(run / "best.pt", ck)
    with pytest.raises(CheckpointError, match="NaN"):
        load_gpt(run / "best.pt")


def test_a_config_nested_deeply_is_one_line(tmp_path):
    # before: a results config.json nested 10^5 deep gave a RecursionError traceback
    sweep = tmp_path / "s"
    sweep.mkdir()
    (sweep / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    res = invoke(["report", sweep])
    assert res.exit_code == 2 and "nested more than" in res.stderr and str(sweep) in res.stderr, res.output


def test_subnormal_points_are_one_line(tmp_path):
    # before: 400 points scaled to 1e-310 gave IndexError in the kNN gather
    X = np.random.default_rng(0).standard_normal((400, 5))
    np.save(tmp_path / "x.npy", X * 1e-310)
    res = invoke(["id", "estimate", tmp_path / "x.npy"])
    assert res.exit_code == 2 and "subnormal" in res.stderr and "Traceback" not in res.output, res.output
    np.save(tmp_path / "y.npy", X * 1e-300)  # mutation: just above the subnormal range it estimates
    assert invoke(["id", "estimate", tmp_path / "y.npy"]).exit_code == 0
