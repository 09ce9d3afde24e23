"""Generators of the docs owner: the CLI and API references, the results pages, the speed page and the
README's numbers. Each reads a generated file (the Typer app, the package tree, results/*/report.json,
benchmarks/results/*.json, results/test-run.json, results/timings.json) and returns markdown; nothing
here holds a measured number of its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
BENCH = ROOT / "benchmarks" / "results"
DOCS = ROOT / "docs"


def _cell(text: object) -> str:
    """Text for a markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _read(path: Path) -> dict | list | None:
    return json.loads(path.read_text()) if path.is_file() else None


# ------------------------------------------------------------------------------------ CLI reference
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


def cli_reference() -> str:
    """Every command of the Typer app: its help, usage, and every argument and option with its help."""
    from typer._click import Context

    from tmcheck.cli.main import renames

    renamed_options, renamed_commands = renames()
    parts = []
    for path, cmd in command_tree():
        name = " ".join(("tmcheck", *path))
        level = "#" * min(2 + max(len(path) - 1, 0), 4)
        parts.append(f"{level} `{name}`")
        parts.append("")
        ctx = Context(cmd, info_name=name)
        if getattr(cmd, "commands", None):
            parts.append(_help_text(cmd) or "(no help text)")
            parts.append("")
            subs = ", ".join(f"`{s}`" for s in cmd.commands)
            parts.append(f"Commands: {subs}.")
            parts.append("")
            continue
        parts.append("```text")
        parts.append(cmd.get_usage(ctx).strip())
        parts.append("```")
        parts.append("")
        parts.append(_help_text(cmd) or "(no help text)")
        parts.append("")
        rows = []
        for p in cmd.params:
            if getattr(p, "hidden", False):
                continue
            record = p.get_help_record(ctx)
            if record is None:
                continue
            spelling, help_ = record
            kind = "argument" if p.param_type_name == "argument" else "option"
            rows.append(f"| `{_cell(spelling)}` | {kind} | {_cell(help_)} |")
        if rows:
            parts += ["| spelling | kind | help |", "|---|---|---|", *rows, ""]
        old = renamed_options.get(path, {})
        if old:
            parts.append(
                "Deprecated spellings (they work for one release, with a line on stderr): "
                + ", ".join(f"`{o}` → `{n}`" for o, n in sorted(old.items()))
                + "."
            )
            parts.append("")
    if renamed_commands:
        parts.append("## Renamed commands")
        parts.append("")
        for old, new in sorted(renamed_commands.items()):
            parts.append(f"- `tmcheck {' '.join(old)}` → `tmcheck {' '.join(new)}`")
        parts.append("")
    return "\n".join(parts)


def cli_count() -> str:
    leaves = [p for p, c in command_tree() if p and not getattr(c, "commands", None)]
    groups = [p for p, c in command_tree() if p and getattr(c, "commands", None)]
    return f"`tmcheck` has {len(leaves)} commands; {len(groups)} of its names are groups of commands."


# ------------------------------------------------------------------------------------ API reference
# Members whose docstrings do not render in strict mode, in files owned by others (listed in the report
# of this page's owner): module -> member names left out of the page.
API_EXCLUDE: dict[str, tuple[str, ...]] = {
    "tmcheck.empirics.fit": ("exponent_report",),
    "tmcheck.empirics.fit.exponent": ("exponent_report",),
}


def modules(part: str) -> list[str]:
    """Every module of tmcheck.<part>, from the source tree (package-dir of pyproject.toml)."""
    import tomllib

    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    base = ROOT / mapping[f"tmcheck.{part}"]
    out = []
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(base).with_suffix("")
        names = [n for n in rel.parts if n != "__init__"]
        if any(n.startswith("_") for n in names):
            continue
        out.append(".".join(["tmcheck", part, *names]))
    return sorted(set(out))


def api_page(part: str) -> str:
    lines = []
    for mod in modules(part):
        lines.append(f"::: {mod}")
        excluded = API_EXCLUDE.get(mod)
        if excluded:
            pattern = "|".join(excluded)
            lines += ["    options:", f'      filters: ["!^_", "!^({pattern})$"]']
        lines.append("")
    return "\n".join(lines)


def api_index() -> str:
    rows = ["| package | modules |", "|---|---|"]
    for part in ("theory", "proofs_check", "empirics", "cli", "util"):
        rows.append(f"| [`tmcheck.{part}`]({part}.md) | {len(modules(part))} |")
    left = [f"`{m}`: {', '.join(f'`{x}`' for x in xs)}" for m, xs in sorted(API_EXCLUDE.items())]
    if left:
        rows += ["", "Left out because their docstrings do not render yet: " + "; ".join(left) + "."]
    return "\n".join(rows)


GENERATORS: dict[str, Callable[[], str]] = {
    "cli.reference": cli_reference,
    "cli.count": cli_count,
    "api.index": api_index,
    **{
        f"api.{part}": (lambda part=part: api_page(part))
        for part in ("theory", "proofs_check", "empirics", "cli", "util")
    },
}
