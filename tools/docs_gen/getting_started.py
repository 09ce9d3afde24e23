"""The getting-started page (docs/getting-started.md): the runtime ranges, extras and lock size."""

from __future__ import annotations

from collections.abc import Callable

from docs_gen._common import ROOT

PAGES = ("docs/getting-started.md",)


def requirements() -> str:
    """The runtime ranges and the extras of pyproject.toml, and the size of the lock."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [x for x in (ROOT / "constraints.txt").read_text().splitlines() if x.strip() and not x.startswith("#")]
    lines = [
        "Runtime ranges: " + ", ".join(f"`{d}`" for d in project["dependencies"]) + ".",
        "",
        "| extra | what it adds |",
        "|---|---|",
    ]
    for extra, reqs in project.get("optional-dependencies", {}).items():
        lines.append(f"| `{extra}` | {', '.join(f'`{r}`' for r in reqs)} |")
    lines += ["", f"The lock, `constraints.txt`, pins {len(pins)} packages exactly."]
    return "\n".join(lines)


GENERATORS: dict[str, Callable[[], str]] = {
    "install.requirements": requirements,
}
