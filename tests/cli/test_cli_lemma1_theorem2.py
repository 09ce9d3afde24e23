"""`tmcheck lemma 1` and `tmcheck theorem 2`: tables, JSON, export, and one-line errors (exit code 2)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.theory import netfile

runner = CliRunner()


def test_lemma1_table_and_export(tmp_path):
    out = tmp_path / "l1.json"
    r = runner.invoke(
        app, [*"lemma 1 --d 2 --eps 0.3 --target sin(3*x0)*x1 --beta 1 --hf 3 --export".split(), str(out)]
    )
    assert r.exit_code == 0, r.output
    assert "resources" in r.output and "within ε" in r.output and "verdict: HOLDS" in r.output
    assert netfile.load(out).meta["name"] == "lemma1"


def test_lemma1_json_exact(cli_json):
    data = cli_json("lemma 1 --d 1 --eps 0.3 --target x0^2 --hf 2 --exact --points 30".split())
    assert data["error"]["exact_mismatches"] == 0
    assert data["N"] == len(data["grid_points"]) and data["within_eps"]
    assert {row["quantity"] for row in data["resources"]} >= {"L_T", "m", "l", "L_FFN", "kappa"}
    assert data["measured"]["l"] == 1 + data["N"] + data["N"]  # d + dN + dN^d for d = 1
    assert data["verdict"] == "HOLDS" and data["check"]["ok"]
    assert {r["quantity"]: r["ratio"] for r in data["resources"]}["kappa"] == 1  # the spec's κ is the measured one


def test_lemma1_below_the_grid_fails_with_exit_1(cli_json):
    """N = 3 is far below the N = 30 that ε = 0.1 needs: the error exceeds ε, the verdict is FAILS, exit 1."""
    args = "lemma 1 --d 2 --eps 0.1 --target sin(3*x0)*x1 --N 3".split()
    r = runner.invoke(app, args)
    assert r.exit_code == 1, r.output
    assert "NOT within" in r.output and "verdict: FAILS" in r.output and "error > ε" in r.output
    assert cli_json(args, code=1)["verdict"] == "FAILS"


def test_lemma1_scientific_notation_target(cli_json):
    data = cli_json(["lemma", "1", "--d", "1", "--eps", "0.3", "--target", "1e-3*x0 + 2.5E-1", "--hf", "1"])
    assert data["verdict"] == "HOLDS"


def test_lemma1_paper_grid_is_larger(cli_json):
    data = cli_json("lemma 1 --d 1 --eps 0.5 --target x0 --hf 1 --grid paper".split())
    assert data["N"] == 1 * (2 * 1 / 0.5) + 1  # d (2^d H/ε)^{1/β} + 1 = 5


# why kept: a table of bad inputs, one case a row: the shape of other such tables, other data
@pytest.mark.parametrize(
    "args,msg",
    [
        (["--eps", "1.0"], "ε must lie in (0, 1)"),
        (["--target", "sin("], "does not parse"),
        (["--target", "1/x0"], "unbounded"),
        (["--d", "0"], "d must be"),
        (["--target", "x5"], "unknown name"),
        (["--grid", "fine"], "--grid"),
    ],
)
def test_lemma1_errors_are_one_line(cli_error, args, msg):
    assert msg in cli_error(["lemma", "1", *args])


def test_theorem2_json_and_export(cli_json, tmp_path):
    out = tmp_path / "t2.json"
    data = cli_json(
        [*"theorem 2 --manifold circle --D 3 --eps 0.9 --target x0*x1 --N 4 --points 50 --export".split(), out]
    )
    assert data["C_M"] > 0 and data["E2_max"] == 0 and data["N"] == 4 and len(data["grid_points"]) == 4
    assert data["measured"]["L_T"] == 6 and data["measured"]["l"] == data["C_M"] * (3 + 1 + 1 + 4 + 2 * 4)
    assert data["verdict"] == "HOLDS" and not data["proven"]
    assert netfile.load(out).meta["name"] == "theorem2"


@pytest.mark.parametrize(
    "args,msg",
    [
        (["--eps", "2"], "ε must lie"),
        (["--manifold", "klein"], "unknown manifold"),
        (["--target", "x9"], "unknown name"),
        (["--manifold", "torus", "--D", "3"], "at least"),
        (["--target", "sin(20*x0)"], "declared H_f"),
        (["--target", "x0 + 2"], "declared R"),
    ],
)
def test_theorem2_errors_are_one_line(args, msg):
    r = runner.invoke(app, ["theorem", "2", "--manifold", "circle", "--D", "3", *args])
    assert r.exit_code == 2
    assert msg in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_theorem2_below_the_grid_fails_with_exit_1(cli_json):
    """N = 2 on the circle cannot reach ε = 0.05 (error > ε): FAILS and exit 1, the verdict of `lemma 1 --N 3`."""
    data = cli_json("theorem 2 --manifold circle --D 3 --eps 0.05 --target x0 --N 2 --points 40".split(), code=1)
    assert data["verdict"] == "FAILS" and "error > ε" in data["failed"] and data["check"]["ok"]


@pytest.mark.slow
@pytest.mark.parametrize("manifold,D,eps,N", [("circle", 3, 0.3, None), ("sphere", 4, 0.5, 2), ("torus", 5, 0.5, 2)])
def test_bound_and_builder_report_the_same_counts(cli_json, manifold, D, eps, N):
    """Done-when of the issue: `bound theorem2` and `theorem 2` agree on N, l, m, L_T (the circle at the proven N)."""
    grid = [] if N is None else ["--N", N]
    bo = cli_json(["bound", "theorem2", "--manifold", manifold, "--D", D, "--eps", eps, "--H-f", 1, *grid])
    to = cli_json(
        ["theorem", "2", "--manifold", manifold, "--D", D, "--eps", eps, "--target", "x0", "--points", 40, *grid],
        (0, 1),
    )
    assert [bo[k] for k in ("N", "l", "m", "L_T")] == [to[k] for k in ("N", "l", "m", "L_T")]
    if N is None:
        assert to["proven"] and to["verdict"] == "HOLDS"


def _readme_theory_examples() -> list[list[str]]:
    """Every `tmcheck lemma|theorem|bound|proofs|network` line of the README's bash blocks, as argv."""
    import re
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```bash\n(.*?)```", readme, re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if re.match(r"^tmcheck (lemma|theorem|bound|proofs)\b", line) and "--export" not in line:
                out.append(shlex.split(line)[1:])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("argv", _readme_theory_examples(), ids=lambda a: " ".join(a)[:60])
def test_readme_theory_examples_run(argv):
    """The README's theory commands run: a verdict (0 HOLDS, 1 FAILS, as documented) and never a traceback."""
    res = runner.invoke(app, argv)
    assert res.exit_code in (0, 1), res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
