"""The home page (docs/index.md): the headline results."""

from __future__ import annotations

from collections.abc import Callable

from docs_gen.results import headline

PAGES = ("docs/index.md",)


GENERATORS: dict[str, Callable[[], str]] = {
    "home.results": lambda: headline(""),
}
