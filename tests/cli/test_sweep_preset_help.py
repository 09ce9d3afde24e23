"""`tmcheck sweep synthetic --preset`'s help names every synthetic preset (it once left cpu-decide out):
it is filled from the registry (cli/options.py: RegistryHelp) when read."""

import re

import typer

from tmcheck.cli.main import app
from tmcheck.empirics.sweep.kinds import preset_names

SYNTHETIC = preset_names("synthetic")


def preset_help(command: str) -> str:
    group = typer.main.get_command(app).commands["sweep"]
    option = next(p for p in group.commands[command].params if "--preset" in p.opts)
    return option.help


def named(text: str) -> set[str]:
    return {name for name in SYNTHETIC if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)}


def test_the_synthetic_preset_help_names_every_preset():
    assert named(preset_help("synthetic")) == set(SYNTHETIC)


def test_the_check_fails_on_a_help_without_one_preset():
    text = preset_help("synthetic").replace("cpu-decide", "")  # mutation: the old help
    assert named(text) != set(SYNTHETIC)
