"""The `tmcheck` command: one Typer app per group of DESIGN.md.

Each group lives in its own module under tmcheck.cli and exposes either `app` (a Typer group,
attached with add_typer) or `command` (a single command). Modules are imported when present, so a
part of tmcheck that is not built yet is simply absent; an import error in a present module is raised.
Group modules import heavy libraries (torch, transformers) inside their commands, keeping start-up fast.
"""

from __future__ import annotations

import importlib
import importlib.util
from importlib.metadata import PackageNotFoundError, version
from typing import Optional

import typer

# (command name, module under tmcheck.cli), in the order `tmcheck --help` lists them.
GROUPS = [
    ("demo", "demo"),
    ("network", "network"),
    ("lemma", "lemma"),
    ("theorem", "theorem"),
    ("proofs", "proofs"),
    ("bound", "bound"),
    ("predict", "predict"),
    ("id", "id"),
    ("fit", "fit"),
    ("data", "data"),
    ("train", "train"),
    ("sweep", "sweep"),
    ("embed", "embed"),
    ("report", "report"),
    ("synth", "synth"),
]

app = typer.Typer(
    name="tmcheck",
    no_args_is_help=True,
    add_completion=False,
    help="Verification-first toolkit for transformer scaling laws on low-dimensional data "
    "(Havrilla & Liao, NeurIPS 2024).",
)


def _version_callback(value: bool) -> None:
    if value:
        try:
            v = version("tmcheck")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            v = "unknown"
        typer.echo(f"tmcheck {v}")
        raise typer.Exit()


@app.callback()
def main(
    version_: Optional[bool] = typer.Option(
        None, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """tmcheck: the paper's theory as checked constructions, and its empirics as measurements."""


def _register() -> None:
    for name, module in GROUPS:
        full = f"tmcheck.cli.{module}"
        if importlib.util.find_spec(full) is None:
            continue
        mod = importlib.import_module(full)
        if hasattr(mod, "app"):
            app.add_typer(mod.app, name=name)
        else:
            app.command(name)(mod.command)


_register()
