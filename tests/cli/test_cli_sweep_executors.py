"""Every sweep command (`sweep data`, `sweep model`, `sweep synthetic`) takes the one set of executor
options (cli/options.py: ExecutorSpec, @executor_options): they reach run_sweep as its executor, options
of the other executor are refused, failed runs exit 1 in one line. run_sweep is replaced here (the
options are what is tested; the tiny sweeps are tested in tests/empirics/)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import tmcheck.empirics.sweep as sweep_pkg
from tmcheck.cli.main import app
from tmcheck.empirics.sweep import executors

runner = CliRunner()


@pytest.fixture
def calls(monkeypatch):
    seen = {}

    def fake_local(workers=None, max_failures=None, log=print):
        seen["local"] = (workers, max_failures)
        return "the-local-executor"

    def fake_run_sweep(path, kind, preset=None, options=None, progress=True, log=print, executor=None, reuse=None):
        seen["run_sweep"] = (kind, preset, options, executor)
        if seen.get("fail"):
            raise executors.SweepFailed("1 run(s) failed (w8-l1); see `tmcheck sweep status DIR`; rerun to retry")
        return []

    monkeypatch.setattr(executors, "local", fake_local)
    monkeypatch.setattr(sweep_pkg, "run_sweep", fake_run_sweep)
    return seen


@pytest.mark.parametrize(
    "args,workers",
    [(["--workers", "1"], 1), (["--executor", "local", "--workers", "2"], 2), ([], None)],
    ids=["workers 1", "local workers 2", "default"],
)
def test_executor_options_reach_run_sweep_of_sweep_model(tmp_path, calls, args, workers):
    res = runner.invoke(
        app, ["sweep", "model", str(tmp_path / "m"), "--preset", "tiny", "--json", *args, "--max-failures", "3"]
    )
    assert res.exit_code == 0, res.output
    assert calls["local"] == (workers, 3)
    assert calls["run_sweep"] == ("model", "tiny", {"corpus": None}, "the-local-executor")


COMMANDS = {"data": [], "model": [], "synthetic": ["--no-report"]}  # synthetic: no report of no rows


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_sweep_command_takes_the_executor_options(tmp_path, calls, command):
    res = runner.invoke(app, ["sweep", command, str(tmp_path / "s"), "--json", "--workers", "2", *COMMANDS[command]])
    assert res.exit_code == 0, res.output
    assert calls["local"] == (2, None)
    assert calls["run_sweep"][3] == "the-local-executor"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_slurm_options_reach_the_slurm_executor(tmp_path, calls, monkeypatch, command):
    from tmcheck.empirics.sweep import slurm

    def fake_slurm(partition, gpus, cpus, limit, parallelism, extra, max_failures=None, log=print):
        calls["slurm"] = (partition, gpus, cpus, limit, parallelism, extra, max_failures)
        return "the-slurm-executor"

    monkeypatch.setattr(slurm, "slurm", fake_slurm)
    args = ["--executor", "slurm", "--slurm-partition", "gpu", "--slurm-gpus-per-task", "1", "--slurm-time", "90"]
    args += [
        "--slurm-array-parallelism",
        "4",
        "--slurm-cpus-per-task",
        "8",
        "--sbatch",
        "qos=high",
        "--max-failures",
        "2",
    ]
    res = runner.invoke(app, ["sweep", command, str(tmp_path / "s"), "--json", *args, *COMMANDS[command]])
    assert res.exit_code == 0, res.output
    assert calls["slurm"] == ("gpu", 1, 8, 90, 4, {"qos": "high"}, 2)
    assert calls["run_sweep"][3] == "the-slurm-executor"


# why kept: a table of bad inputs, one case a row: the shape of other such tables, other data
@pytest.mark.parametrize(
    "args,message",
    [
        (["--executor", "slurm", "--workers", "2"], "--workers is for --executor local"),
        (["--slurm-partition", "gpu"], "--slurm-partition needs --executor slurm"),
        (["--executor", "pbs"], "unknown executor"),
        (["--workers", "0"], "must be a count"),
    ],
)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_executor_options_are_refused_in_one_line(tmp_path, calls, args, message, command):
    res = runner.invoke(app, ["sweep", command, str(tmp_path / "m"), *args])
    err = res.stderr.strip()
    assert res.exit_code == 2 and len(err.splitlines()) == 1 and message in err, res.output
    assert "run_sweep" not in calls


def test_failed_runs_exit_1_in_one_line(tmp_path, calls):
    calls["fail"] = True
    res = runner.invoke(app, ["sweep", "model", str(tmp_path / "m"), "--workers", "2"])
    err = res.stderr.strip()
    assert res.exit_code == 1 and len(err.splitlines()) == 1 and "1 run(s) failed" in err, res.output
