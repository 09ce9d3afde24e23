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


def test_the_time_boxes_fit_the_lease():
    """Install, start-up and every stage's box within 9 minutes; a box 10 s longer breaks it."""
    assert gc.fits_lease(gc.LIMITS)
    assert gc.INSTALL_S + gc.STARTUP_S + sum(gc.LIMITS.values()) <= 540
    assert set(gc.LIMITS) == set(gs.STAGES) == set(gc.STAGE_FUNCTIONS)
    for name in gc.LIMITS:
        assert not gc.fits_lease({**gc.LIMITS, name: gc.LIMITS[name] + 10}), name
    assert not gc.fits_lease(gc.LIMITS, install=gc.INSTALL_S + 10)


def test_the_shell_script_reads_the_same_install_box():
    text = SCRIPT.read_text()
    assert 'timeout "$INSTALL_S"' in text and "INSTALL_S = " in (ROOT / "benchmarks" / "gpu_check.py").read_text()
    got = subprocess.run(
        ["sed", "-n", "s/^INSTALL_S = \\([0-9]*\\).*/\\1/p", str(ROOT / "benchmarks" / "gpu_check.py")],
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert got == str(gc.INSTALL_S)


def test_a_stage_that_fails_keeps_what_it_recorded(tmp_path, monkeypatch):
    def stage(dev, small, faults, box):
        box.record({"measured": 1.0})
        raise RuntimeError("out of memory")

    monkeypatch.setitem(gc.STAGE_FUNCTIONS, "throughput", stage)
    out = tmp_path / "stage.json"
    args = gc.parse(["--cpu-smoke", "--stage", "throughput", "--stage-out", str(out), "--stage-limit", "30"])
    assert gc.child(args) == 1
    got = json.loads(out.read_text())
    assert got["result"] == {"measured": 1.0} and got["partial"] is True and "out of memory" in got["error"]


def test_the_sweep_cap_is_sized_from_the_box():
    from benchmarks import gpu_sweep

    assert gpu_sweep.step_cap(200, 10.0, 36) == int(gpu_sweep.CAP_FACTOR * 200 * 10 / 36)
    assert gpu_sweep.step_cap(1, 1.0, 36) == 100  # never below 100 steps
    p = gpu_sweep.sweep_preset(False)
    assert len(p.corpora) == 3 and len(p.seeds) == 2 and p.n_sizes >= 5
    assert np.log10(p.n_max / p.n_min) >= 3  # three decades
    assert gpu_sweep.decades([{"corpus": "a", "n": 2000}, {"corpus": "a", "n": 2_000_000}], "a") == 3.0


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("smoke")
    out = tmp / "gpu.json"
    p = run("--cpu-smoke", "--out", str(out), "--sweep-dir", str(tmp / "sweep"))
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(out.read_text())


@pytest.mark.slow
def test_cpu_smoke_runs_every_stage(smoke):
    r = smoke
    assert r["mode"] == "cpu-smoke" and r["all_checks_passed"] is True and r["exit_code"] == 0
    assert {s: r["stages"][s]["status"] for s in gs.STAGES} == {s: "ok" for s in gs.STAGES}, {
        s: r["stages"][s]["error"] for s in gs.STAGES
    }
    assert r["install"]["versions"]["torch"]["running"] == torch.__version__
    checks = r["stages"]["parity"]["result"]["checks"]
    assert checks["knn_small_tiles"]["rows_recomputed_device"] > 0  # the range query ran


@pytest.mark.slow
def test_cpu_smoke_throughput_record(smoke):
    tp = smoke["stages"]["throughput"]["result"]
    assert tp["mfu"] is None  # no peak for a CPU: MFU is null, never guessed
    for run_ in (tp["eager"], tp["compiled"]):
        assert run_["tokens_per_s"] > 0 and run_["steps_timed"] >= 2 and run_["mfu_vs_measured_gemm"] > 0
    c = tp["compiled"]
    assert c["compile_backend"] == "aot_eager" and c["compile_cold_seconds"] > 0 and c["compile_warm_seconds"] > 0
    assert c["batch"] > tp["eager"]["batch"] and "fused=True" in c["optimizer"]


@pytest.mark.slow
def test_cpu_smoke_sweep_record(smoke):
    from benchmarks import gpu_sweep

    sw = smoke["stages"]["sweep"]["result"]
    p = gpu_sweep.sweep_preset(True)
    assert sw["runs"] == len(p.corpora) * p.n_sizes * len(p.seeds)
    assert sw["calibration"]["steps_per_s"] > 0 and sw["preset"]["train"]["max_steps"] <= gpu_sweep.SMOKE_CAP
    assert sw["runs_on_cap"] == sum(r["stop"] == "cap" for r in sw["rows"])
    for e in sw["report"].values():
        assert set(e["verdicts"]) == set(gpu_sweep.FORMS)
        assert all(v.startswith(("equivalent", "differs", "undecided", "withheld")) for v in e["verdicts"].values())
    assert set(sw["id"]) == set(p.corpora)


@pytest.mark.slow
def test_cpu_smoke_id_large_record(smoke):
    idl = smoke["stages"]["id_large"]["result"]
    assert abs(idl["dimension"] - idl["true_d"]) < 1.0
    assert idl["search"].startswith("bfloat16") and idl["float32_search"]["passed"]
    assert idl["knn_plus_mle_seconds"] == idl["knn_seconds"] + idl["mle_seconds"]
