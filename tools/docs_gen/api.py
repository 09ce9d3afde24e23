"""The API reference pages (docs/api/*.md): one mkdocstrings block per module of each part."""

from __future__ import annotations

from collections.abc import Callable

from docs_gen._common import ROOT

PAGES = (
    "docs/api/index.md",
    "docs/api/theory.md",
    "docs/api/proofs_check.md",
    "docs/api/empirics.md",
    "docs/api/cli.md",
    "docs/api/util.md",
)


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
    "api.index": api_index,
    **{
        f"api.{part}": (lambda part=part: api_page(part))
        for part in ("theory", "proofs_check", "empirics", "cli", "util")
    },
}
