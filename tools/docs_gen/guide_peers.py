"""The peers guide (docs/guide/peers.md): the scikit-dimension spellings the parity suite checks."""

from __future__ import annotations

from collections.abc import Callable

from docs_gen._common import ROOT

PAGES = ("docs/guide/peers.md",)


def skdim_spellings() -> str:
    """The scikit-dimension spellings the parity suite checks, read from the test module itself."""
    import ast

    src = (ROOT / "tests" / "empirics" / "id" / "test_skdim_interface.py").read_text()
    tree = ast.parse(src)
    cases = next(n.value for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "CASES")
    names = [k.value for k in cases.keys]
    return "\n".join(f"- `{n}`" for n in names)


GENERATORS: dict[str, Callable[[], str]] = {
    "skdim_spellings": skdim_spellings,
}
