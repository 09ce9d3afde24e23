"""Every `tmcheck` command accepts --json (walked from the registered tree, so a new command without
it fails here), and the groups are the ones main.py registers statically."""

from __future__ import annotations

import typer

from tmcheck.cli.main import GROUPS, app


def _leaves(command, path=()):
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from _leaves(sub, (*path, name))
    else:
        yield " ".join(path), {o for p in command.params for o in getattr(p, "opts", [])}


def test_every_command_accepts_json():
    leaves = dict(_leaves(typer.main.get_command(app)))
    assert {"demo", "report", "sweep data", "sweep synthetic", "id corpus", "export hf"} <= set(leaves)
    missing = sorted(path for path, opts in leaves.items() if "--json" not in opts)
    assert not missing, f"commands without --json: {missing}"


def test_the_walk_sees_a_command_without_json():
    extra = typer.Typer()

    @extra.command()
    def plain(n: int = 1) -> None:
        """A command without --json."""

    @extra.command()
    def other(n: int = 1) -> None:
        """A second one, so the group keeps its subcommand names."""

    leaves = dict(_leaves(typer.main.get_command(extra)))
    assert "--json" not in leaves["plain"]


def test_groups_are_registered_statically():
    names = [name for name, _ in GROUPS]
    assert len(names) == len(set(names)) and "export" in names
    registered = set(typer.main.get_command(app).commands)
    assert set(names) == registered
