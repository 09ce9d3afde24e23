"""A flag's help shows no value to give (#42 item 6): typer >= 0.29 printed `--json <bool>` in every help,
and `--json true` is refused (exit 2). Every command of the registered tree is walked."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from tmcheck.cli import options
from tmcheck.cli.main import app

runner = CliRunner()


def _leaves(command, path=()):
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from _leaves(sub, (*path, name))
    else:
        yield list(path)


LEAVES = list(_leaves(typer.main.get_command(app)))


def _help(path: list[str]) -> str:
    res = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_no_help_offers_a_value_to_a_flag(path):
    text = _help(path)
    assert "--json" in text and "<bool>" not in text


def test_a_flag_given_a_value_is_still_refused_in_one_line():
    res = runner.invoke(app, ["export", "hf", "run", "out", "--json", "true"])
    assert res.exit_code == 2


def test_without_the_rule_the_help_shows_bool(monkeypatch):
    if options._TYPE_COLUMN is None:
        pytest.skip("this typer shows no type for a flag")
    monkeypatch.setattr(typer.core.TyperOption, "display_type_rich", options._TYPE_COLUMN)  # the mutant
    assert "<bool>" in _help(["export", "hf"])
