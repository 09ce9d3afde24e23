"""The README: under 250 lines, its architecture map names folders and modules that exist, its
relative links point at files that exist."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from helpers import ROOT  # noqa: E402

README = ROOT / "README.md"


def architecture_names(text: str) -> list[tuple[str, str]]:
    """(folder, name) for every `name` of the architecture table: a folder (`x/`) or a module (`x.py`),
    read inside the row's folder."""
    section = text.split("## Architecture", 1)[1].split("\n## ", 1)[0]
    out = []
    for line in section.splitlines():
        m = re.match(r"\| `([a-z_]+/)` \|", line)
        if not m:
            continue
        folder = m.group(1)
        for name in re.findall(r"`([A-Za-z0-9_./]+)`", line.split("|", 3)[3]):
            if name.endswith((".py", "/")):
                out.append((folder, name))
    return out


def absent(text: str, root: Path = ROOT) -> list[str]:
    return [
        f"{folder}{name}"
        for folder, name in architecture_names(text)
        if not ((root / folder / name).exists() or (root / name).exists())
    ]


def test_the_readme_is_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) < 250


def test_the_architecture_map_names_modules_that_exist():
    text = README.read_text(encoding="utf-8")
    names = architecture_names(text)
    assert ("empirics/", "id/") in names and ("empirics/", "schema.py") in names and len(names) > 20
    assert absent(text) == []


def test_a_module_that_does_not_exist_is_caught():
    text = README.read_text(encoding="utf-8").replace("`device.py`", "`devices.py`")
    assert absent(text) == ["empirics/devices.py"]


def test_relative_links_resolve():
    text = README.read_text(encoding="utf-8")
    links = [t.split("#")[0] for t in re.findall(r"\]\(([^)]+)\)", text) if "://" not in t]
    assert links and [p for p in links if p and not (ROOT / p).exists()] == []
