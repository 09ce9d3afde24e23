"""A few hostile cases in a real process with a hard timeout: Python's alarm cannot stop a
big-integer power inside C (Fraction('1e1000000000'), sympy's 10**10**10), so only a subprocess shows
that these are refused before such work starts. The bar is the issue's: refused within 10 s, plus the
measured start-up of the interpreter and the app (`tmcheck --version`) on this machine."""

from __future__ import annotations

import subprocess
import time

import pytest
from harness import run_process

CASES = [
    ["lemma", "1", "--target", "10**10**10"],
    ["theorem", "2", "--target", "2**2**2**2**2**2"],
    ["lemma", "interaction", "--kappa", "1e1000000000"],
    ["fit", "{fit_good.csv}", "--x", "N", "--derive", "D=10**10**10"],
    ["network", "info", "{net_huge_exponent.json}"],
    ["network", "eval", "{net_good.json}", "1e100000000", "1", "1", "1", "1", "1"],
]


def _wall(argv, cwd) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    p = run_process(argv, cwd)
    return time.perf_counter() - t0, p


@pytest.fixture(scope="module")
def startup(tmp_path_factory) -> float:
    wall, p = _wall(["--version"], tmp_path_factory.mktemp("startup"))
    assert p.returncode == 0, p.stderr
    return wall


@pytest.mark.parametrize("argv", CASES, ids=" ".join)
def test_refused_in_a_real_process_within_10_s(argv, corpus, startup, tmp_path):
    argv = [str(corpus[a[1:-1]]) if a.startswith("{") else a for a in argv]
    wall, p = _wall(argv, tmp_path)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert wall - startup < 10, f"{wall:.1f} s (start-up {startup:.1f} s)"
    assert list(tmp_path.iterdir()) == []
