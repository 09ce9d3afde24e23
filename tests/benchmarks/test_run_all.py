"""benchmarks/run_all.py: the quiet tool's verdict is parsed and written into the entries a run changed."""

from __future__ import annotations

import json
import os

from benchmarks import run_all

QUIET = "quiet: load before 0.31; wall 12.5 s; own CPU 24.0 s; other processes 0.4 CPU s = 2% of the machine: quiet"
LOUD = (
    "quiet: load before 0.70; wall 10.0 s; own CPU 19.0 s; other processes 5.0 CPU s = 25% of the machine: "
    "DISTURBED: rerun before quoting it"
)


def test_verdict_lines_are_parsed():
    assert run_all.parse_verdict("noise\n" + QUIET) == {
        "verdict": "quiet",
        "other_cpu_share": 0.02,
        "load_before": 0.31,
        "wall_s": 12.5,
    }
    assert run_all.parse_verdict(LOUD)["verdict"] == "DISTURBED"
    assert run_all.parse_verdict("no verdict here") is None


def test_only_changed_entries_are_stamped(tmp_path, monkeypatch):
    monkeypatch.setattr(run_all, "RESULTS", tmp_path)
    (tmp_path / "id.json").write_text(json.dumps({"knn_engine": {"s": 1}, "mle": {"s": 2}}))
    before = run_all._snapshot()
    (tmp_path / "id.json").write_text(json.dumps({"knn_engine": {"s": 3}, "mle": {"s": 2}}))
    stamped = run_all.stamp(before, {"verdict": "quiet", "other_cpu_share": 0.02}, "bench_knn")
    got = json.loads((tmp_path / "id.json").read_text())
    assert stamped == ["id.json:knn_engine"] and got["knn_engine"]["quiet"]["verdict"] == "quiet"
    assert "quiet" not in got["mle"] and got["quiet"]["entries"] == ["knn_engine"]


def test_a_file_of_plain_values_is_stamped_as_a_whole(tmp_path, monkeypatch):
    """bench_coverage writes numbers and lists, no sections: a changed file of them gets a whole-file verdict
    (no "entries"), which the speed page reads as "the whole file measured alone"; an unchanged one gets
    none (the mutation, stamping only changed sections, left coverage.json without a verdict)."""
    monkeypatch.setattr(run_all, "RESULTS", tmp_path)
    (tmp_path / "coverage.json").write_text(json.dumps({"seconds": 500.0, "cases": [1, 2]}))
    (tmp_path / "fit.json").write_text(json.dumps({"seconds": 3.0}))
    before = run_all._snapshot()
    (tmp_path / "coverage.json").write_text(json.dumps({"seconds": 230.0, "cases": [1, 2]}))
    stamped = run_all.stamp(before, {"verdict": "quiet", "other_cpu_share": 0.0}, "bench_coverage")
    got = json.loads((tmp_path / "coverage.json").read_text())
    assert stamped == ["coverage.json"] and got["quiet"]["verdict"] == "quiet" and "entries" not in got["quiet"]
    assert "quiet" not in json.loads((tmp_path / "fit.json").read_text())


STAT0 = "cpu  1000 0 200 8000 10 0 5 100 0 0"
STAT1 = "cpu  1600 0 260 8200 10 0 5 340 0 0"  # 1100 jiffies more, 240 of them stolen


def test_host_steal_is_read_from_proc_stat_and_a_busy_host_disturbs_a_quiet_run():
    """/proc/stat's eighth field is steal; its share of the interval decides. The mutation, a run judged
    by the quiet tool's verdict alone, would keep 22% steal "quiet"."""
    a, b = run_all.cpu_times(STAT0), run_all.cpu_times(STAT1)
    assert a == (100, 9315) and b == (340, 10415)
    steal = run_all.host_steal(a, b)
    assert abs(steal - 240 / 1100) < 1e-12
    quiet = run_all.parse_verdict(QUIET)
    busy = run_all.with_steal(quiet, steal)
    assert busy["verdict"] == "DISTURBED" and busy["disturbed_by"] == "host steal time"
    calm = run_all.with_steal(quiet, 0.03)
    assert calm["verdict"] == "quiet" and calm["host_steal_share"] == 0.03
    assert run_all.with_steal(quiet, None)["host_steal_share"] is None
    assert run_all.cpu_times("intr 1 2 3") is None and run_all.host_steal(None, b) is None
    assert run_all.cpu_times() is None or len(run_all.cpu_times()) == 2  # this machine's, where it has one


def test_the_docs_refuse_a_figure_the_host_disturbed():
    from tools.docs_gen._common import quiet_ok

    assert quiet_ok({"verdict": "quiet", "other_cpu_share": 0.02, "host_steal_share": 0.03})
    assert not quiet_ok({"verdict": "quiet", "other_cpu_share": 0.02, "host_steal_share": 0.2})
    assert quiet_ok({"verdict": "quiet", "other_cpu_share": 0.02})  # recorded before steal was


def test_tools_run_in_the_users_environment_without_a_wait_policy(monkeypatch):
    """The benchmarks' environment drops OMP_WAIT_POLICY (each OpenMP runtime's default) and keeps the rest;
    the mutation, the caller's environment as it is, would keep `passive`."""
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    monkeypatch.setenv("TMCHECK_PROBE", "kept")
    env = run_all.user_environment(HF_HUB_OFFLINE="1")
    assert "OMP_WAIT_POLICY" not in env
    assert env["TMCHECK_PROBE"] == "kept" and env["HF_HUB_OFFLINE"] == "1"
    assert "OMP_WAIT_POLICY" in dict(os.environ)  # the caller's own environment is left as it is


def test_the_local_sweep_figures_are_a_section_that_gets_a_verdict(tmp_path, monkeypatch):
    """bench_sweep writes its cases into the section `local`, which run_all stamps. They used to be a
    list beside a `slurm` section, so only the SLURM part (DISTURBED by construction: slurmd's CPU
    counts as other processes') could carry a verdict, and the local figures never could."""
    from benchmarks import bench_sweep

    monkeypatch.setattr(run_all, "RESULTS", tmp_path)
    monkeypatch.setattr(bench_sweep, "OUT", tmp_path / "sweep.json")
    monkeypatch.setattr(bench_sweep, "prepare", lambda base, preset: 2)
    rows = [{"run": "a", "test_loss": 1.0}, {"run": "b", "test_loss": 2.0}]
    walls = {"w1-1core": 4.0, "w2": 2.5, "w1": 3.0}
    monkeypatch.setattr(
        bench_sweep,
        "local_case",
        lambda base, work, name: {
            "case": name,
            "wall_s": walls[name],
            "load_before": [0.1],
            "load_after": [0.2],
            "rows": [dict(r) for r in rows],
        },
    )
    before = run_all._snapshot()
    bench_sweep.main(["--cases", "w1-1core,w2,w1"])
    stamped = run_all.stamp(before, {"verdict": "quiet", "other_cpu_share": 0.0}, "bench_sweep")
    got = json.loads((tmp_path / "sweep.json").read_text())
    assert "sweep.json:local" in stamped and got["local"]["quiet"]["verdict"] == "quiet"
    assert got["local"]["speedup_w2_over_w1_1core"] == 1.6 and got["local"]["speedup_w2_over_w1"] == 1.2
    assert all(c["rows_equal_w1_1core"] and c["rows"] == 2 for c in got["local"]["cases"])


def test_inner_takes_only_a_benchmark_module(capsys):
    # before (#43): `--inner NAME` imported any module name given, and a bad one was a ModuleNotFoundError traceback
    assert run_all.main(["--inner", "no_such_bench"]) == 2
    assert run_all.main(["--inner", "os"]) == 2  # a module that exists, but is not a benchmark
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "--inner takes one benchmark module" in err
