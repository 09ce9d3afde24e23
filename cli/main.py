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


def renames() -> tuple[dict, dict]:
    """The renamed options and commands every group module declares, merged.

    A group module may define ``RENAMED_OPTIONS = {(group, command, ...): {"--old": "--new"}}`` and
    ``RENAMED_COMMANDS = {("old", "path"): ("new", "path")}``; the old spellings keep working one release."""
    options: dict[tuple[str, ...], dict[str, str]] = {}
    commands: dict[tuple[str, ...], tuple[str, ...]] = {}
    for _, module in GROUPS:
        for path, table in getattr(module, "RENAMED_OPTIONS", {}).items():
            options.setdefault(tuple(path), {}).update(table)
        commands.update({tuple(k): tuple(v) for k, v in getattr(module, "RENAMED_COMMANDS", {}).items()})
    return options, commands


def rewrite_deprecated(args: list[str]) -> tuple[list[str], list[str]]:
    """argv with every deprecated spelling replaced by the current one, and one warning line per rewrite.

    The command path is the leading run of words before the first option. A renamed command is replaced
    by its new path; an option is renamed when its table's path (old or new spelling of the command) is
    a prefix of the command path. Arguments after ``--`` are never touched."""
    options, commands = renames()
    args = list(args)
    n_path = next((i for i, a in enumerate(args) if a.startswith("-")), len(args))
    path = tuple(args[:n_path])
    warnings: list[str] = []
    old_path = path
    for old in sorted(commands, key=len, reverse=True):
        if path[: len(old)] == old:
            new = commands[old]
            args[: len(old)] = list(new)
            warnings.append(f"tmcheck: '{' '.join(old)}' is deprecated; use 'tmcheck {' '.join(new)}'")
            path = new + path[len(old) :]
            break
    table: dict[str, str] = {}
    for key, renamed in options.items():
        if path[: len(key)] == key or old_path[: len(key)] == key:
            table.update(renamed)
    if table:
        start = len(path)
        for i in range(start, len(args)):
            arg = args[i]
            if arg == "--":
                break
            name, eq, value = arg.partition("=")
            if name in table:
                args[i] = table[name] + eq + value
                warnings.append(f"tmcheck: '{name}' is deprecated; use '{table[name]}'")
    return args, warnings


class OneLineErrorsGroup(TyperGroup):
    """The root group: a usage error (bad option value, unknown command) is one line on stderr, exit 2.

    Typer would draw a multi-line box; scripts and the fuzz tests need `error: ...` on one line."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        args, warnings = rewrite_deprecated(sys.argv[1:] if args is None else list(args))
        for line in warnings:
            sys.stderr.write(line + "\n")
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
