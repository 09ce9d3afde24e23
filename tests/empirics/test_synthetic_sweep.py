"""Synthetic sweeps: the plan, the theory's sizing rule, resuming after SIGKILL with nothing lost,
the lock, refusing a different preset, and the report's fits on rows with a known exponent."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tmcheck.empirics.report import build_report
from tmcheck.empirics.report.synthetic import build_tables
from tmcheck.empirics.sweep import SweepBusy, SweepDir
from tmcheck.empirics.sweep import run_sweep as core_run_sweep
from tmcheck.empirics.sweep.synthetic import plan_specs
from tmcheck.empirics.sweep.synthetic_preset import PRESETS
from tmcheck.empirics.synthetic.model import n_params
from tmcheck.theory.bounds import alpha_D
from tmcheck.util import atomic

sys.path.insert(0, str(Path(__file__).parent))
from micro import MICRO  # noqa: E402


def run_sweep(path, preset, log):
    return core_run_sweep(path, "synthetic", preset, progress=False, log=log)


def plan(p):
    return [{**s.params, "run": s.run} for s in plan_specs(p)]


def test_presets_are_valid_and_cover_the_issue_grid():
    for p in PRESETS.values():
        p.validate()
    cpu, gpu = PRESETS["cpu"], PRESETS["gpu"]
    assert cpu.dims == (1, 2, 4) and set(gpu.dims) == {1, 2, 4, 8}
    for p in (cpu, gpu):
        assert set(p.betas) == {1.0, 0.5} and len(p.seeds) >= 3
    assert max(gpu.ns) / min(gpu.ns) >= 100 and gpu.model_dims  # the full grid, with a model-scaling sweep
    # cpu is sized down so that every run converges, and says so
    assert max(cpu.ns) / min(cpu.ns) >= 30 and "Sized down" in cpu.notes
    assert cpu.schedule == "plateau" and cpu.min_steps == cpu.max_steps  # one cap for every n


def test_plan_names_are_unique_and_complete():
    rows = plan(PRESETS["cpu"])
    p = PRESETS["cpu"]
    n_data = len(p.dims) * len(p.betas) * len(p.ns) * len(p.seeds) * (1 + len(p.baselines))
    assert p.krr_max_n >= max(p.ns)
    n_model = len(p.model_dims) * len(p.model_betas) * len(p.model_widths) * len(p.model_seeds)
    assert len(rows) == n_data + n_model
    assert len({r["run"] for r in rows}) == len(rows)
    gpu = PRESETS["gpu"]
    assert not [r for r in plan(gpu) if r["method"] == "krr" and r["n"] > gpu.krr_max_n]


def test_theory_size_follows_n_to_the_d_over_2beta_plus_d():
    p = replace(PRESETS["cpu"], size="theory", ffn_width=256, n_heads=4)
    for d, beta in ((1, 1.0), (4, 0.5)):
        n_lo, n_hi = min(p.ns), max(p.ns)
        (w_lo, h_lo), (w_hi, h_hi) = p.theory_shape(d, beta, n_lo), p.theory_shape(d, beta, n_hi)
        assert (w_hi, h_hi) == (256, 4)  # the tuned shape at the anchor, max(ns) by default
        assert abs(np.log(w_hi / w_lo) - d / (2 * beta + d) * np.log(n_hi / n_lo)) < 0.1
        assert h_lo <= h_hi
        assert n_params(p.model_config(w_hi, h_hi)) > n_params(p.model_config(w_lo, h_lo))


def test_the_theory_arm_grows_width_and_heads_from_its_anchor():
    p = PRESETS["cpu-theory"].at(2, 0.5)  # tuned at n = 10,000: width 64, 4 heads
    assert p.size == "theory" and p.size_anchor == 10_000
    assert p.theory_shape(2, 0.5, 10_000) == (p.ffn_width, p.n_heads)
    w, h = p.theory_shape(2, 0.5, 100_000)
    factor = 10 ** (2 / 3)
    assert (w, h) == (round(p.ffn_width * factor), round(p.n_heads * factor))
    sizes = [n_params(p.model_config(*p.theory_shape(2, 0.5, n))) for n in p.ns]
    slope = np.polyfit(np.log(p.ns), np.log(sizes), 1)[0]
    assert abs(slope - 2 / 3) < 0.1, slope  # N ∝ n^{d/(2β+d)}: a fixed model (slope 0) fails this
    # no step cap binds: the budget at the top n is far below the cap
    from tmcheck.empirics.sweep.synthetic import train_config

    n_train = 80_000
    assert train_config(p, n_train).max_steps == p.epochs * n_train // p.batch_size < p.max_steps
    assert train_config(p, 800).max_steps >= 3000  # small n: enough steps for early stopping to end the run


@pytest.mark.parametrize(
    "override,message",
    [
        (dict(dims=(9,)), "exceeds the ambient"),
        (dict(betas=(1.2,)), r"betas\[0\]: expected less than or equal to 1"),
        (dict(dims=(1, 0)), r"dims\[1\]: expected greater than or equal to 1"),
        (dict(noise=-0.5), "noise: expected greater than or equal to 0"),
        (dict(ns=(10, 100)), "smaller than the validation split"),
        (dict(size="huge"), "unknown size rule"),
        (dict(ns=(100, 1000, 10**9)), r"--set ns asks for about .* GB of memory for a data pool of 1,000,000,000"),
    ],
)
def test_bad_sweep_parameters(override, message):
    with pytest.raises(ValueError, match=message):
        PRESETS["tiny"].with_overrides(**override)


def test_resume_after_sigkill_loses_nothing(tmp_path):
    reference = run_sweep(tmp_path / "ref", MICRO, log=lambda s: None)
    killed = tmp_path / "killed"
    code = (
        "import json, sys; from tmcheck.empirics.sweep.kinds import preset_from_dict; "
        "from tmcheck.empirics.sweep import run_sweep; "
        "run_sweep(sys.argv[1], 'synthetic', preset_from_dict('synthetic', json.loads(sys.argv[2])), "
        "progress=False, log=lambda s: None)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(killed), json.dumps(MICRO.as_dict())])
    deadline = time.time() + 120
    # kill mid-training: once a transformer run has a checkpoint but before the sweep is done
    while time.time() < deadline and not list(killed.glob("runs/*/last.pt")):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    rows = run_sweep(killed, MICRO, log=lambda s: None)
    got = {r["run"]: r["test_mse"] for r in rows}
    want = {r["run"]: r["test_mse"] for r in reference}
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == pytest.approx(want[k], rel=1e-5), k
    assert len(atomic.read_jsonl(killed / "results.jsonl")) == len(plan(MICRO))


def test_sweep_refuses_a_second_process_and_another_preset(tmp_path):
    run_sweep(tmp_path, MICRO, log=lambda s: None)
    with SweepDir(tmp_path).lock():
        with pytest.raises(SweepBusy):
            run_sweep(tmp_path, MICRO, log=lambda s: None)
    with pytest.raises(ValueError, match="other settings"):
        run_sweep(tmp_path, replace(MICRO, noise=0.1), log=lambda s: None)
    # rerunning a finished sweep recomputes nothing
    before = (tmp_path / "results.jsonl").read_text()
    run_sweep(tmp_path, MICRO, log=lambda s: None)
    assert (tmp_path / "results.jsonl").read_text() == before


def test_report_recovers_a_known_exponent_and_gives_verdicts():
    rows = []
    for method, slope in (("transformer", alpha_D(2, 1.0)), ("knn", 0.9)):
        for n in (100, 300, 1000, 3000, 10000):
            for seed in range(3):  # seeds spread -2%, 0, +2% around the law: alpha-hat is exactly the slope
                mse = 2.0 * n**-slope * np.exp(0.02 * (seed - 1))
                rows.append(
                    {"sweep": "data", "method": method, "d": 2, "beta": 1.0, "n": n, "seed": seed, "test_mse": mse}
                )
    data, model = build_tables(rows, [{"d": 2, "dimension": 2.0, "ci": [1.9, 2.1]}], bootstrap=300)
    by = {e["method"]: e for e in data}
    line = by["transformer"]["exponent"]["fits"]["loglog"]
    assert line["alpha"] == pytest.approx(0.5, abs=0.02) and line["interval"]["coverage"] >= 0.93
    tests = by["transformer"]["exponent"]["predictions"]
    assert tests["true d"]["loglog"]["verdict"] == "equivalent within ±0.05"
    assert tests["d-hat"]["loglog"]["outcome"] != "differs"
    assert tests["d-hat"]["loglog"]["alpha_pred_ci"][0] < 0.5 < tests["d-hat"]["loglog"]["alpha_pred_ci"][1]
    assert by["knn"]["exponent"]["predictions"]["true d"]["loglog"]["verdict"] == "differs by more than 0.05"
    assert by["transformer"]["exponent"]["range"]["entries"][0]["range"] == "all sizes"
    assert model == []


def test_a_size_on_the_step_cap_is_left_out():
    rng = np.random.default_rng(0)
    rows = [
        {
            "sweep": "data",
            "method": "transformer",
            "d": 1,
            "beta": 1.0,
            "n": n,
            "seed": s,
            "max_steps": 500,
            "stop": "cap" if n == 10000 else "patience",
            "test_mse": 2.0 * n**-0.6 * np.exp(0.02 * rng.standard_normal()),
        }
        for n in (100, 300, 1000, 3000, 10000)
        for s in range(2)
    ]
    (e,), _ = build_tables(rows, [], bootstrap=100)
    assert e["capped"] == [{"n": 10000.0, "capped": 2, "runs": 2}] and 10000.0 not in e["fitted_sizes"]
    for r in rows:
        r["stop"] = "cap" if r["n"] >= 1000 else "patience"
    (e,), _ = build_tables(rows, [], bootstrap=100)
    assert e["exponent"] is None and "fewer than 3 converged sizes" in e["withheld"]


def test_write_report_on_a_finished_micro_sweep(tmp_path):
    assert not SweepDir(tmp_path).exists()
    run_sweep(tmp_path, MICRO, log=lambda s: None)
    assert SweepDir(tmp_path).kind == "synthetic"
    rep = build_report(tmp_path, bootstrap=50)
    for name in ("report.md", "report.json", "fig_alpha.png", "fig_loss.png", "fig_model.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert rep["kind"] == "synthetic" and rep["data_scaling"] and rep["model_scaling"]
    text = (tmp_path / "report.md").read_text()
    assert "predicted α_D" in text and "empirical risk minimiser" in text
    assert "withheld" in text  # MICRO's runs stop on their 60-step cap: no verdict rests on them
