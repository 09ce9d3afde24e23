"""Old option and command spellings keep working one release, with one deprecation line on stderr."""

from __future__ import annotations

import pytest

from tmcheck.cli import main as cli_main


@pytest.fixture
def renamed(monkeypatch):
    module = cli_main.GROUPS[0][1]
    monkeypatch.setattr(module, "RENAMED_OPTIONS", {("synth", "regress"): {"--seed": "--seeds"}}, raising=False)
    monkeypatch.setattr(module, "RENAMED_COMMANDS", {("synth", "regress"): ("sweep", "synthetic")}, raising=False)


def test_old_command_and_option_are_rewritten_with_one_line_each(renamed):
    args, warnings = cli_main.rewrite_deprecated(["synth", "regress", "D", "--seed", "0,1", "--json"])
    assert args == ["sweep", "synthetic", "D", "--seeds", "0,1", "--json"]
    assert warnings == [
        "tmcheck: 'synth regress' is deprecated; use 'tmcheck sweep synthetic'",
        "tmcheck: '--seed' is deprecated; use '--seeds'",
    ]


def test_equals_form_and_the_new_spelling(renamed):
    args, _ = cli_main.rewrite_deprecated(["synth", "regress", "--seed=3"])
    assert args == ["sweep", "synthetic", "--seeds=3"]
    args, warnings = cli_main.rewrite_deprecated(["sweep", "synthetic", "--seeds", "3"])
    assert args == ["sweep", "synthetic", "--seeds", "3"] and warnings == []


def test_other_commands_and_values_after_the_separator_are_untouched(renamed):
    assert cli_main.rewrite_deprecated(["sweep", "data", "--seed", "1"]) == (["sweep", "data", "--seed", "1"], [])
    args, _ = cli_main.rewrite_deprecated(["sweep", "synthetic", "--", "--seed"])
    assert args == ["sweep", "synthetic", "--", "--seed"]


def test_the_root_group_prints_the_line_on_stderr(renamed, capsys):
    with pytest.raises(SystemExit):
        cli_main.app(["synth", "regress", "--help"])
    assert "'synth regress' is deprecated" in capsys.readouterr().err


def test_shell_completion_is_installable():
    from typer.testing import CliRunner

    out = CliRunner().invoke(cli_main.app, ["--help"]).output
    assert "--install-completion" in out
