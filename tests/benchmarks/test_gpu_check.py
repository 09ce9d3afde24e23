"""benchmarks/gpu_check.sh without a GPU: the CPU smoke run, the exit codes, the checks' ability to fail.

The real run (CUDA against CPU) is done on a GPU machine; here the same code runs CPU against CPU.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu_check.sh"
sys.path.insert(0, str(ROOT))

from benchmarks import gpu_check as gc  # noqa: E402
from benchmarks import gpu_stages as gs  # noqa: E402
from benchmarks.gpu_peaks import bf16_dense_peak  # noqa: E402


def run(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**__import__("os").environ, "PYTHON": sys.executable},
    )


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_without_cuda_the_real_mode_exits_2_with_one_line(tmp_path):
    out = tmp_path / "gpu.json"
    p = run("--out", str(out))
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no CUDA device")
    assert not out.exists()  # gpu.json is written only by a real GPU run


@pytest.mark.parametrize(
    "args", [["--stages", "parity,nope"], ["--stage-timeout", "sweep=soon"], ["--inject-fault", "no_such_check"]]
)
def test_bad_arguments_exit_2_with_one_line(args):
    p = run("--cpu-smoke", *args)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr


@pytest.mark.parametrize(
    "name, peak",
    [
        ("NVIDIA H200", 989e12),
        ("NVIDIA H200 NVL", 835e12),
        ("NVIDIA H100 80GB HBM3", 989e12),
        ("NVIDIA H100 PCIe", 756e12),
        ("NVIDIA GH200 480GB", 989e12),
        ("NVIDIA A100-SXM4-80GB", 312e12),
        ("NVIDIA L40S", 362e12),
        ("NVIDIA L4", 121e12),
        ("NVIDIA A10", 125e12),
        ("NVIDIA B200", 2250e12),
        ("NVIDIA L40", None),
        ("Tesla V100-SXM2-32GB", None),
        ("NVIDIA GeForce RTX 4090", None),
        ("", None),
    ],
)
def test_peak_is_the_devices_own(name, peak):
    assert bf16_dense_peak(name)[0] == peak


def test_comparisons_fail_on_mutated_inputs():
    from tmcheck.empirics.id.knn import kneighbors

    X = np.random.default_rng(0).standard_normal((200, 8))
    nb = kneighbors(X, 5, device="cpu")
    assert gs.same_neighbors(nb, nb)["passed"]
    idx = nb.indices.copy()
    idx[3, 2] = idx[3, 1]
    assert not gs.same_neighbors(nb, type(nb)(nb.distances, idx, 0, "cpu"))["passed"]
    assert not gs.same_neighbors(nb, type(nb)(nb.distances * (1 + 1e-10), nb.indices, 0, "cpu"))["passed"]
    a = np.linspace(-1, 1, 50)
    assert gs.close_arrays(a, a + 5e-5, 1e-4)["passed"]
    assert not gs.close_arrays(a, a + 2e-4, 1e-4)["passed"]
    assert not gs.close_arrays(a, a[:-1], 1.0)["passed"]
    assert gs.close_scalars(7.0, 7.0 + 5e-10, 1e-9)["passed"]
    assert not gs.close_scalars(7.0, 7.0 + 2e-9, 1e-9)["passed"]


def test_every_check_fails_when_its_device_side_is_perturbed():
    res = gs.stage_parity(torch.device("cpu"), True, set(gs.CHECKS))
    assert set(res["checks"]) == set(gs.CHECKS)
    assert [n for n, c in res["checks"].items() if c["passed"]] == []
    report = {"stages": {"parity": {"status": "ok", "result": res}}}
    ok, failed = gc.summarize(report)
    assert ok is False and set(failed) == set(gs.CHECKS)


def test_summary_when_the_parity_stage_did_not_finish():
    assert gc.summarize({"stages": {}}) == (None, [])
    ok, failed = gc.summarize({"stages": {"parity": {"status": "timeout", "result": None}}})
    assert ok is False and failed == ["parity stage timeout"]
    partial = {"checks": {n: {"passed": True} for n in gs.CHECKS[:-1]}}
    ok, failed = gc.summarize({"stages": {"parity": {"status": "ok", "result": partial}}})
    assert ok is False and failed == [f"{gs.CHECKS[-1]} (not run)"]


def test_a_stage_past_its_limit_is_killed_and_recorded(tmp_path):
    out = tmp_path / "gpu.json"
    p = run(
        "--cpu-smoke",
        "--stages",
        "parity,throughput",
        "--stage-timeout",
        "parity=0.5",
        "--stage-timeout",
        "throughput=0.5",
        "--out",
        str(out),
        "--sweep-dir",
        str(tmp_path / "sweep"),
    )
    assert p.returncode == 1, p.stdout + p.stderr  # the correctness checks could not run
    r = json.loads(out.read_text())
    assert [r["stages"][s]["status"] for s in ("parity", "throughput")] == ["timeout", "timeout"]
    assert r["all_checks_passed"] is False and r["exit_code"] == 1
    assert r["stages"]["throughput"]["elapsed_s"] < 30


@pytest.mark.slow
def test_cpu_smoke_runs_every_stage(tmp_path):
    out = tmp_path / "gpu.json"
    p = run("--cpu-smoke", "--out", str(out), "--sweep-dir", str(tmp_path / "sweep"))
    assert p.returncode == 0, p.stdout + p.stderr
    r = json.loads(out.read_text())
    assert r["mode"] == "cpu-smoke" and r["all_checks_passed"] is True and r["exit_code"] == 0
    assert {s: r["stages"][s]["status"] for s in gs.STAGES} == {s: "ok" for s in gs.STAGES}
    checks = r["stages"]["parity"]["result"]["checks"]
    assert checks["knn_small_tiles"]["rows_recomputed_device"] > 0  # the range query ran
    tp = r["stages"]["throughput"]["result"]
    assert tp["tokens_per_s"] > 0 and tp["mfu"] is None  # no peak for a CPU: MFU is null, never guessed
    idl = r["stages"]["id_large"]["result"]
    assert abs(idl["dimension"] - idl["true_d"]) < 1.0
    sw = r["stages"]["sweep"]["result"]
    assert sw["runs"] == 3 and set(sw["id"]) == {"stories"}
    rep = sw["report"]["stories"]  # a fit, or the reason there is none: exactly one of the two
    assert (rep["exponent"] is None) != (rep["withheld"] is None), rep
    for stage in gs.STAGES:  # every stage printed its elapsed time
        assert f"stage {stage}: ok in " in p.stdout


@pytest.mark.slow
def test_an_injected_fault_makes_the_script_exit_1(tmp_path):
    out = tmp_path / "gpu.json"
    p = run("--cpu-smoke", "--stages", "parity", "--inject-fault", "knn_default", "--out", str(out))
    assert p.returncode == 1
    r = json.loads(out.read_text())
    assert r["failed_checks"] == ["knn_default"] and r["injected_faults"] == ["knn_default"]


def test_a_sweep_cut_short_keeps_what_it_finished(tmp_path):
    out = tmp_path / "gpu.json"
    p = run(
        "--cpu-smoke",
        "--stages",
        "sweep",
        "--stage-timeout",
        "sweep=42",
        "--out",
        str(out),
        "--sweep-dir",
        str(tmp_path / "sweep"),
    )
    assert p.returncode == 0, p.stdout + p.stderr  # no correctness check was asked for
    st = json.loads(out.read_text())["stages"]["sweep"]
    assert st["status"] == "error" and "timed out" in st["error"]
    assert st["result"]["runs"] == len(st["result"]["rows"]) and "id" not in st["result"]
    assert json.loads(out.read_text())["all_checks_passed"] is None
