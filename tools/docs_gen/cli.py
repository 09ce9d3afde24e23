"""The command reference (docs/cli.md): every command of the Typer app with its help, usage and options."""

from __future__ import annotations

from collections.abc import Callable

from docs_gen._common import cell

PAGES = ("docs/cli.md",)


def command_tree() -> list[tuple[tuple[str, ...], object]]:
    """(path, click command) for every group and command of `tmcheck`, depth first in registration order."""
    import typer

    from tmcheck.cli.main import app

    out = []

    def walk(cmd, path):
        out.append((path, cmd))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return out


def _help_text(cmd) -> str:
    return (cmd.help or "").strip()


def _options_table(cmd, ctx) -> list[str]:
    rows = []
    for p in cmd.params:
        if getattr(p, "hidden", False):
            continue
        record = p.get_help_record(ctx)
        if record is None:
            continue
        spelling, help_ = record
        kind = "argument" if p.param_type_name == "argument" else "option"
        rows.append(f"| `{cell(spelling)}` | {kind} | {cell(help_)} |")
    return ["| spelling | kind | help |", "|---|---|---|", *rows, ""] if rows else []


def cli_reference() -> str:
    """Every command of the Typer app: its help, usage, and every argument and option with its help."""
    from typer._click import Context

    parts = []
    for path, cmd in command_tree():
        name = " ".join(("tmcheck", *path))
        level = "#" * min(2 + max(len(path) - 1, 0), 4)
        parts += [f"{level} `{name}`", ""]
        ctx = Context(cmd, info_name=name)
        if not getattr(cmd, "commands", None):
            parts += ["```text", cmd.get_usage(ctx).strip(), "```", ""]
        parts += [_help_text(cmd) or "(no help text)", ""]
        if getattr(cmd, "commands", None):
            parts += [f"Commands: {', '.join(f'`{s}`' for s in cmd.commands)}.", ""]
        parts += _options_table(cmd, ctx)
    parts += [
        "Options and commands renamed in this release (the old spellings are refused): [changelog](changelog.md).",
        "",
    ]
    return "\n".join(parts)


def cli_count() -> str:
    leaves = [p for p, c in command_tree() if p and not getattr(c, "commands", None)]
    groups = [p for p, c in command_tree() if p and getattr(c, "commands", None)]
    return f"`tmcheck` has {len(leaves)} commands; {len(groups)} of its names are groups of commands."


GENERATORS: dict[str, Callable[[], str]] = {
    "cli.reference": cli_reference,
    "cli.count": cli_count,
}
