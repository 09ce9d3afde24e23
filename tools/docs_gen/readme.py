"""The README's blocks: the headline results, the recorded timings and the pages to read next."""

from __future__ import annotations

from collections.abc import Callable

from docs_gen._common import DOCS, ROOT, timings
from docs_gen.results import headline

PAGES = ("README.md",)


def read_more(prefix: str) -> str:
    """The pages of the site that exist, as the nav of mkdocs.yml orders them."""
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]

    def walk(items, depth) -> list[str]:
        out = []
        for item in items:
            ((title, value),) = item.items()
            if isinstance(value, list):
                sub = walk(value, depth + 1)
                if sub:
                    out += [f"{'  ' * depth}- {title}", *sub]
            elif (DOCS / value).is_file():
                out.append(f"{'  ' * depth}- [{title}]({prefix}{value})")
        return out

    return "\n".join(walk(nav, 0))


GENERATORS: dict[str, Callable[[], str]] = {
    "readme.results": lambda: headline("docs/"),
    "readme.timings": timings,
    "readme.more": lambda: read_more("docs/"),
}
