"""Sizes and controllers checked before work starts: a BPE vocabulary too large is refused in a real process (it used
to abort it), and `--executor slurm` asks the controller before anything is created (nothing is, when it does not
answer or there is no client). Workers that die with their submitter: tests/empirics/test_sweep_orphans.py.

Each case says what the code did before (the comment), and comes with its mutation where there is one.
"""

from __future__ import annotations

import pytest
from harness import one_line, run_process


@pytest.mark.parametrize("vocab", ["1000000000", "1e9"])
def test_a_huge_vocabulary_is_refused_not_aborted(vocab):
    # before: the BPE trainer aborted the whole process (SIGABRT, exit -6)
    proc = run_process(["data", "stats", "stories", "--vocab", vocab])
    assert proc.returncode == 2 and "--vocab" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("squeue", ["fails", "absent", "answers"])
def test_slurm_is_asked_before_anything_is_created(tmp_path, monkeypatch, squeue):
    # before: "squeue failed" (a RuntimeError) after the sweep directory had been created
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scripts = {"sbatch": "exit 0"}
    if squeue != "absent":
        scripts["squeue"] = (
            "exit 0" if squeue == "answers" else "echo 'slurm_load_jobs error: Unable to contact' >&2; exit 1"
        )
    for name, body in scripts.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    # only the fake clients: a real SLURM in /usr/bin (CI's cluster) must not answer for an absent squeue
    monkeypatch.setenv("PATH", str(bin_dir))
    from tmcheck.empirics.sweep.slurm import check_controller

    if squeue == "answers":  # mutation: a controller that answers passes the check
        check_controller()
        return
    sweep = tmp_path / "s"
    one_line(["sweep", "data", sweep, "--executor", "slurm"], "Unable to contact" if squeue == "fails" else "not found")
    assert not sweep.exists()
