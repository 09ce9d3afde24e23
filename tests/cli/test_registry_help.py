"""Every --manifold help is filled from the registry its command reads (cli/options.py: RegistryHelp):
Theorem 2's atlas manifolds for `theorem 2` and `bound theorem2`, the ID validation sets for `id synth`,
every manifold of tmcheck.theory.manifolds for `synth data`. A name added to a registry shows up in the
help without an edit of the command (the mutation test)."""

from __future__ import annotations

import pytest
import typer

from tmcheck.cli import options
from tmcheck.cli.main import app
from tmcheck.empirics.id.validation import VALIDATION_SETS
from tmcheck.theory import manifolds

CASES = [
    (("theorem", "2"), manifolds.ATLAS_MANIFOLDS),
    (("bound", "theorem2"), manifolds.ATLAS_MANIFOLDS),
    (("id", "synth"), tuple(VALIDATION_SETS)),
    (("synth", "data"), manifolds.MANIFOLDS),
]


def manifold_help(path: tuple[str, ...]) -> str:
    cmd = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]
    return next(p for p in cmd.params if "--manifold" in p.opts).help


def listed(text: str) -> list[str]:
    """The comma-separated names at the start of a help text."""
    return [w.strip() for w in text.split(":")[0].split(" (")[0].rstrip(".").split(",")]


@pytest.mark.parametrize("path,names", CASES, ids=lambda v: " ".join(v) if isinstance(v[0], str) else "")
def test_manifold_help_lists_the_registry(path, names):
    assert listed(manifold_help(path)) == list(names)


def test_a_name_added_to_the_registry_reaches_the_help(monkeypatch):
    monkeypatch.setattr(manifolds, "ATLAS_MANIFOLDS", (*manifolds.ATLAS_MANIFOLDS, "klein-bottle"))
    assert listed(manifold_help(("theorem", "2")))[-1] == "klein-bottle"
    assert options.fill_help("{manifolds:atlas}").endswith("klein-bottle")


def test_every_placeholder_is_filled():
    for path, _ in CASES:
        assert "{" not in manifold_help(path)
