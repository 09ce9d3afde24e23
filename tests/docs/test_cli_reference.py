"""The CLI reference lists every registered command and every option: the Typer tree is walked, and
the committed page (docs/cli.md) must hold a heading for each command and each option's spelling."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from docs_gen.cli import command_tree  # noqa: E402
from helpers import ROOT  # noqa: E402

PAGE = ROOT / "docs" / "cli.md"


def sections(page: str) -> dict[str, str]:
    """Heading `tmcheck ...` -> the text under it, up to the next heading."""
    parts = re.split(r"^#{2,4} `(tmcheck[^`]*)`$", page, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def missing(page: str) -> list[str]:
    """Commands without a section, and options whose spelling their section lacks."""
    secs = sections(page)
    out = []
    for path, cmd in command_tree():
        name = " ".join(("tmcheck", *path))
        if name not in secs:
            out.append(name)
            continue
        for p in cmd.params:
            if getattr(p, "hidden", False):
                continue
            for opt in getattr(p, "opts", []):
                if opt.startswith("-") and f"`{opt}" not in secs[name] and f" {opt}" not in secs[name]:
                    out.append(f"{name} {opt}")
    return out


def test_the_page_lists_every_command_and_option():
    assert missing(PAGE.read_text(encoding="utf-8")) == []
    leaves = [p for p, c in command_tree() if p and not getattr(c, "commands", None)]
    assert len(leaves) > 30 and ("demo",) in leaves and ("sweep", "status") in leaves


def test_a_page_missing_a_command_or_an_option_fails():
    page = PAGE.read_text(encoding="utf-8")
    cut = re.sub(r"^### `tmcheck sweep status`$.*?(?=^#{2,4} `)", "", page, count=1, flags=re.M | re.S)
    assert "tmcheck sweep status" in missing(cut)
    no_opt = page.replace("--second-id", "--other-id")
    assert "tmcheck report --second-id" in missing(no_opt)
