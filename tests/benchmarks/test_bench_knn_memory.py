"""bench_knn's memory row: a whole process's peak RSS, measured from a small launcher.

A child's ru_maxrss counts the memory it had before exec, and a child forked from a large parent shares the
parent's pages, so the benchmark's first memory row read the same 1007 MB for tmcheck, its baseline and
scikit-dimension. Known answer: a child that touches 64 MiB, measured while this process holds 512 MiB.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from benchmarks import bench_knn

CHILD = [sys.executable, "-c", "b = bytearray(64 * 2**20); print(len(b))"]


@pytest.mark.slow
def test_the_peak_is_the_childs_own_not_its_parents():
    held = np.ones(512 * 2**20 // 8)  # 512 MiB touched in this process
    peak = bench_knn.peak_process(CHILD)["peak_rss_mb"]
    assert 64 < peak < 256, peak  # the child's 64 MiB and an interpreter, not the parent's 512
    # the mutation: the child's rusage straight from this process (the old measurement) reads the parent's pages
    direct = bench_knn._process(CHILD)["peak_rss_mb"]
    assert direct > 512, direct
    del held


def test_a_failing_command_is_an_error_not_a_figure():
    out = bench_knn.peak_process([sys.executable, "-c", "raise SystemExit(3)"])
    assert "error" in out and "exit 3" in out["error"]
