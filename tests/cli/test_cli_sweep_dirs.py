"""Every sweep command refuses to start a new sweep in a directory that already holds other files
(a typo must not start hours of work in the wrong place); the check lives once, in
SweepDir.open, so each command gives the same one line and exit 2 before any config is written."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app

runner = CliRunner()

COMMANDS = [["sweep", "data", "{d}"], ["sweep", "model", "{d}"], ["sweep", "synthetic", "{d}", "--no-report"]]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_non_empty_directory_without_config_is_refused(tmp_path, argv):
    d = tmp_path / "run"
    d.mkdir()
    (d / "best.pt").write_bytes(b"someone else's checkpoint")
    res = runner.invoke(app, [a.format(d=d) for a in argv])
    err = res.stderr.strip()
    assert res.exit_code == 2 and len(err.splitlines()) == 1, res.output
    assert f"{d} exists and is not a tmcheck sweep (no config.json); use an empty or new directory" in err
    assert sorted(p.name for p in d.iterdir()) in (["best.pt"], [".lock", "best.pt"])  # nothing else written
