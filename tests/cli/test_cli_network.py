"""`tmcheck --version`, `tmcheck network eval|info` and `tmcheck demo` through Typer's runner."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.theory import netfile
from tmcheck.theory.examples import worked_example

runner = CliRunner()


def _file(tmp_path, arithmetic="exact"):
    return str(netfile.save(worked_example(arithmetic), tmp_path / "w.json"))


def test_version():
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.startswith("tmcheck 0.")


def test_eval_exact_and_float_json(tmp_path):
    f = _file(tmp_path)
    res = runner.invoke(app, ["network", "eval", f, "--json", "--", "1/2", "3/2", "-2", "1/3"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["outputs"] == ["3", "1/3"]
    res = runner.invoke(app, ["network", "eval", f, "0.5", "1.5", "--float", "--json"])
    assert json.loads(res.stdout)["outputs"] == [3.0]
    res = runner.invoke(app, ["network", "eval", f, "1/2", "3/2"])
    assert res.exit_code == 0 and "3" in res.stdout


def test_info_json(tmp_path):
    res = runner.invoke(app, ["network", "info", _file(tmp_path), "--json"])
    d = json.loads(res.stdout)
    assert (d["L_T"], d["m"], d["L_FFN"], d["w_FFN"], d["l"], d["kappa"]) == (1, 1, 2, 1, 2, 1.0)


def test_bad_input_gives_one_line_error_and_exit_2(tmp_path):
    f = _file(tmp_path)
    for args, msg in [
        (["network", "eval", f, "1"], "multiple of D = 2"),
        (["network", "eval", str(tmp_path / "nope.json"), "1", "2"], "no such network file"),
        (["network", "eval", f, "1", "abc"], "is not an exact number"),
        (["network", "info", str(tmp_path)], "no such network file"),
    ]:
        res = runner.invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert msg in res.stderr and len(res.stderr.strip().splitlines()) == 1
        assert "Traceback" not in res.output


def test_demo_network_stage(tmp_path):
    res = runner.invoke(app, ["demo", "--quick", "--only", "network", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "T(1/2,3/2) = 3" in res.stdout
    assert netfile.load(tmp_path / "worked-example.json").l == 2


def test_eval_accepts_negative_coordinates_without_dashes(tmp_path):
    f = _file(tmp_path)
    res = runner.invoke(app, ["network", "eval", f, "1/2", "3/2", "-2", "1/3", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["outputs"] == ["3", "1/3"]
    res = runner.invoke(app, ["network", "eval", f, "-1/2", "1e-3", "--json"])
    assert res.exit_code == 0, res.output


def test_every_theory_help_cites_the_paper_and_an_example():
    for cmd in (
        ["lemma", "interaction"],
        ["lemma", "gating"],
        ["lemma", "addition"],
        ["lemma", "replace"],
        ["lemma", "parallel"],
        ["lemma", "1"],
        ["theorem", "2"],
        ["network", "eval"],
        ["network", "info"],
        ["bound", "covering"],
        ["bound", "theorem1"],
        ["bound", "lemma1"],
        ["bound", "theorem2"],
    ):
        res = runner.invoke(app, [*cmd, "--help"])
        assert res.exit_code == 0, cmd
        assert ("Appendix" in res.stdout or "Section" in res.stdout) and "Example" in res.stdout, cmd
