"""Sweeps: SIGKILL then rerun equals an uninterrupted sweep; a second process is refused; bad n."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tmcheck.empirics.sweep import SweepBusy, SweepDir, run_sweep
from tmcheck.util.atomic import read_jsonl

SCRIPT = """
import sys
from dataclasses import replace
from tmcheck.empirics.sweep.kinds import get_preset
from tmcheck.empirics.sweep import run_sweep
p = get_preset("tiny")
p = replace(p, n_sizes=2, n_max=12_000, train=replace(p.train, max_steps=60, eval_every=6, patience=0))
run_sweep(sys.argv[1], "pretrain", p, progress=False, log=lambda s: None)
"""
KEYS = ("run", "n", "seed", "test_loss", "best_val", "best_step", "steps")


def _sweep(tmp_path, name):
    script = tmp_path / "sweep.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    return subprocess.Popen([sys.executable, str(script), str(tmp_path / name)], env=env)


def _rows(path):
    return sorted(tuple(r[k] for k in KEYS) for r in read_jsonl(path / "results.jsonl"))


def test_sigkill_then_rerun_equals_uninterrupted(tmp_path):
    ref = _sweep(tmp_path, "ref")
    victim = _sweep(tmp_path, "kill")
    runs = tmp_path / "kill" / "runs"
    deadline = time.time() + 600
    # kill once the second run has a checkpoint but is not finished
    while time.time() < deadline and victim.poll() is None:
        done = sorted(runs.glob("*/row.json")) if runs.exists() else []
        mid = [p for p in runs.glob("*/last.pt") if not (p.parent / "row.json").exists()] if runs.exists() else []
        if done and mid:
            break
        time.sleep(0.05)
    assert victim.poll() is None, "the sweep finished before it could be killed"
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    finished = {p.parent.name: p.stat().st_mtime_ns for p in runs.glob("*/row.json")}
    assert finished
    rerun = _sweep(tmp_path, "kill")
    assert rerun.wait(timeout=900) == 0 and ref.wait(timeout=900) == 0
    assert _rows(tmp_path / "kill") == _rows(tmp_path / "ref")
    assert len(_rows(tmp_path / "ref")) == 4
    for name, mtime in finished.items():  # finished runs were not redone
        assert (runs / name / "row.json").stat().st_mtime_ns == mtime


def test_second_process_is_refused(tmp_path):
    with SweepDir(tmp_path / "s").lock():
        with pytest.raises(SweepBusy, match="in use by another process"):
            run_sweep(tmp_path / "s", "pretrain", "tiny", progress=False, log=lambda s: None)


def test_sweep_config_mismatch(tmp_path):
    (tmp_path / "s").mkdir()
    # written before sweeps had a kind: read as a pretraining sweep
    (tmp_path / "s" / "config.json").write_text(json.dumps({"preset": _tiny_dict(), "corpora": ["stories"]}))
    with pytest.raises(ValueError, match="preset 'tiny'"):
        run_sweep(tmp_path / "s", "pretrain", "cpu-demo", progress=False)
    with pytest.raises(ValueError, match="not a synthetic sweep"):
        run_sweep(tmp_path / "s", "synthetic", "tiny", progress=False)


def _tiny_dict():
    from tmcheck.empirics.sweep.kinds import get_preset

    return get_preset("tiny").as_dict()


def test_grid():
    from tmcheck.empirics.sweep.kinds import decades, get_preset, preset_names

    g = get_preset("cpu-demo").grid(128_000)
    assert len(g) >= 5 and decades(g) >= 1.5 and g == sorted(g)
    assert all(len(get_preset(n).seeds) >= 2 for n in preset_names("pretrain"))
    assert decades(get_preset("gpu-quick").grid(8_000_000)) >= 3
    assert decades(get_preset("gpu-paper").grid(10**9)) >= 3
    with pytest.raises(ValueError, match="fewer than n_min"):
        get_preset("cpu-demo").grid(1000)
    with pytest.raises(ValueError, match="unknown preset"):
        get_preset("huge")
