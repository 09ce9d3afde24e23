"""Old spellings end: every renamed option and command that docs/changelog.md names is refused with one
line on stderr and exit code 2, and its new spelling is accepted. No argv rewriter is left."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tmcheck.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
CHANGELOG = ROOT / "docs" / "changelog.md"
ROW = re.compile(r"^\| `tmcheck ([\w -]+)` \| `([^`]+)` \| `([^`]+)` \|$")
runner = CliRunner()


def renamed() -> list[tuple[tuple[str, ...], str, str]]:
    """(command path, old spelling, new spelling) for each row of the changelog's table."""
    rows = []
    for line in CHANGELOG.read_text().splitlines():
        m = ROW.match(line)
        if m:
            rows.append((tuple(m[1].split()), m[2], m[3]))
    return rows


def _is_command(spelling: str) -> bool:
    return not spelling.startswith("-")


def test_the_changelog_names_the_renames():
    rows = renamed()
    assert len(rows) >= 20, rows
    assert ("synth regress", "sweep synthetic") in [r[1:] for r in rows]


@pytest.mark.parametrize("path,old,new", renamed(), ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_old_spelling_is_refused_and_the_new_one_accepted(path, old, new):
    if _is_command(old):
        res = runner.invoke(cli_main.app, [*old.split(), "--help"])
        assert res.exit_code == 2, res.output
        assert len(res.stderr.strip().splitlines()) == 1 and "No such command" in res.stderr
        res = runner.invoke(cli_main.app, [*new.split(), "--help"])
        assert res.exit_code == 0, res.output
        return
    res = runner.invoke(cli_main.app, [*path, old, "1"])
    assert res.exit_code == 2, res.output
    line = res.stderr.strip()
    assert len(line.splitlines()) == 1 and f"No such option: {old}" in line, line
    help_text = runner.invoke(cli_main.app, [*path, "--help"], terminal_width=200).stdout
    spelling = new.split()[0]
    assert re.search(rf"(^|\s){re.escape(spelling)}(\s|,|$)", help_text, re.M), (spelling, help_text)
    if spelling == "--set":  # the field named by the new spelling is one the preset has
        from tmcheck.empirics.sweep import overrides
        from tmcheck.empirics.sweep.kinds import preset_class

        field = new.split()[1].split("=")[0]
        assert field in overrides.settable(preset_class("synthetic")), field


def test_no_rewriter_is_left():
    """The argv rewriter and the tables it read are gone from every group module."""
    assert not hasattr(cli_main, "rewrite_deprecated") and not hasattr(cli_main, "renames")
    for _, module in cli_main.GROUPS:
        assert not hasattr(module, "RENAMED_OPTIONS") and not hasattr(module, "RENAMED_COMMANDS"), module


def test_a_row_that_is_still_accepted_fails_the_check():
    """Mutation: a 'renamed' option that the command still has is not refused, so the check would fail."""
    res = runner.invoke(cli_main.app, ["fit", "--output", "1"])  # fit still has --output: no refusal of it
    assert "No such option" not in res.stderr


def test_shell_completion_is_installable():
    out = runner.invoke(cli_main.app, ["--help"]).output
    assert "--install-completion" in out
