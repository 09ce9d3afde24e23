"""docs/development.md's map of the tree says, for each package, what it may import; those sentences must
be the rules tests/test_architecture.py enforces (MAY_IMPORT), and every package has its paragraph."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "development.md"
PARAGRAPH = re.compile(r"^\*\*`(\w+)/`\*\* \(`tmcheck\.\w+`\)\. May import: ((?:`\w+`(?:, )?)+)\.", re.M)


def declared(text: str) -> dict[str, set[str]]:
    return {m[1]: set(re.findall(r"`(\w+)`", m[2])) for m in PARAGRAPH.finditer(text)}


def rules() -> dict[str, set[str]]:
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        import test_architecture
    finally:
        sys.path.remove(str(ROOT / "tests"))
    return test_architecture.MAY_IMPORT


def test_the_map_states_the_architecture_rules():
    assert declared(PAGE.read_text()) == rules()


def test_a_map_that_allows_a_back_import_fails():
    """Mutation: the map letting theory import empirics differs from the rules."""
    text = PAGE.read_text().replace(
        "**`theory/`** (`tmcheck.theory`). May import: `util`, `theory`.",
        "**`theory/`** (`tmcheck.theory`). May import: `util`, `theory`, `empirics`.",
    )
    assert text != PAGE.read_text()
    with pytest.raises(AssertionError):
        assert declared(text) == rules()
