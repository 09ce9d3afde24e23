"""The `tmcheck` command: one Typer app per group of DESIGN.md, registered statically below.

Each group lives in its own module under tmcheck.cli and exposes either `app` (a Typer group,
attached with add_typer) or `command` (a single command). Group modules import heavy libraries
(torch, transformers) inside their commands, keeping start-up fast.
"""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version

import typer
from typer import exceptions as typer_exc
from typer._click import exceptions as click_exc  # Typer vendors click; its errors live here
from typer.core import TyperGroup

from tmcheck.cli import (
    bound,
    data,
    demo,
    embed,
    export,
    fit,
    lemma,
    network,
    predict,
    proofs,
    report,
    sweep,
    synth,
    theorem,
    train,
)
from tmcheck.cli import id as id_group  # `id` would shadow the builtin

# (command name, module), in the order `tmcheck --help` lists them.
GROUPS = [
    ("demo", demo),
    ("network", network),
    ("lemma", lemma),
    ("theorem", theorem),
    ("proofs", proofs),
    ("bound", bound),
    ("predict", predict),
    ("id", id_group),
    ("fit", fit),
    ("data", data),
    ("train", train),
    ("sweep", sweep),
    ("embed", embed),
    ("report", report),
    ("synth", synth),
    ("export", export),
]


class OneLineErrorsGroup(TyperGroup):
    """The root group: a usage error (bad option value, unknown command) is one line on stderr, exit 2.

    Typer would draw a multi-line box; scripts and the fuzz tests need `error: ...` on one line."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click_exc.NoArgsIsHelpError as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except typer_exc.TyperException as exc:
            where = f" (see '{exc.ctx.command_path} --help')" if getattr(exc, "ctx", None) is not None else ""
            message = " ".join(exc.format_message().split())
            sys.stderr.write(f"error: {message}{where}\n")
            sys.exit(exc.exit_code)
        except typer_exc.Abort:
            sys.stderr.write("Aborted.\n")
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    cls=OneLineErrorsGroup,
    name="tmcheck",
    no_args_is_help=True,
    add_completion=True,
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
    version_: bool | None = typer.Option(
        None, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """tmcheck: the paper's theory as checked constructions, and its empirics as measurements."""
    from tmcheck.util.memory import reuse_large_allocations

    reuse_large_allocations()  # large tensors reused, not mapped afresh (util/memory.py)


for _name, _module in GROUPS:
    if hasattr(_module, "app"):
        app.add_typer(_module.app, name=_name)
    else:
        app.command(_name)(_module.command)
