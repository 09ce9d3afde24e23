"""Generated text in the documentation: `<!-- gen:NAME -->` blocks filled by generator modules.

Every module `tools/docs_gen/<owner>.py` exposes `GENERATORS: dict[str, Callable[[], str]]`; each
callable returns markdown. A page holds a block as two marker lines:

    <!-- gen:NAME -->
    ...whatever NAME's generator returns...
    <!-- /gen:NAME -->

`fill` replaces what lies between the markers with the generator's output; `stale` lists the blocks
whose committed text differs from it. The modules are discovered, not listed: a module that is not
there (another owner's branch not merged yet) simply contributes nothing, and a block naming a
generator that no module provides is reported, never left as it is silently.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

# A block: an opening marker line, the generated text, the closing marker line of the same name.
BLOCK = re.compile(
    r"^<!-- gen:(?P<name>[A-Za-z0-9_.:-]+) -->\n(?P<body>.*?)^<!-- /gen:(?P=name) -->$",
    re.MULTILINE | re.DOTALL,
)
OPEN = re.compile(r"^<!-- (/?)gen:([A-Za-z0-9_.:-]+) -->$", re.MULTILINE)


class GeneratorError(ValueError):
    """A generator module or a block is malformed (one line that names the file and the block)."""


def generator_modules(directory: Path = HERE) -> list[Path]:
    """The generator modules present: every tools/docs_gen/*.py but this package's __init__."""
    return sorted(p for p in directory.glob("*.py") if p.name != "__init__.py")


def load_generators(directory: Path = HERE) -> dict[str, Callable[[], str]]:
    """NAME -> generator, merged over every module present; two modules claiming one NAME is an error."""
    found: dict[str, Callable[[], str]] = {}
    owner: dict[str, str] = {}
    for path in generator_modules(directory):
        name = f"tmcheck_docs_gen_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        gens = getattr(module, "GENERATORS", None)
        if not isinstance(gens, dict):
            raise GeneratorError(f"{path} has no GENERATORS dict")
        for key, fn in gens.items():
            if key in found:
                raise GeneratorError(f"generator {key!r} is defined by both {owner[key]} and {path.name}")
            if not callable(fn):
                raise GeneratorError(f"generator {key!r} of {path.name} is not callable")
            found[key], owner[key] = fn, path.name
    return found


def targets(root: Path = ROOT) -> list[Path]:
    """The markdown files that may hold blocks: README.md, every page under docs/, results/*/README.md."""
    files = [
        root / "README.md",
        *sorted((root / "docs").rglob("*.md")),
        *sorted((root / "results").glob("*/README.md")),
    ]
    return [p for p in files if p.is_file()]


def blocks(text: str, where: str = "") -> list[str]:
    """The names of the blocks of `text`, in order; unbalanced or nested markers are refused."""
    names, stack = [], []
    for m in OPEN.finditer(text):
        closing, name = m.group(1) == "/", m.group(2)
        if closing:
            if not stack or stack[-1] != name:
                raise GeneratorError(f"{where}: <!-- /gen:{name} --> closes no open block")
            stack.pop()
        else:
            if stack:
                raise GeneratorError(f"{where}: block {name!r} opens inside block {stack[-1]!r}")
            stack.append(name)
            names.append(name)
    if stack:
        raise GeneratorError(f"{where}: block {stack[-1]!r} is never closed")
    return names


@dataclass
class Filled:
    """A file with its blocks filled: the new text and the names of the blocks whose text changed."""

    path: Path
    old: str
    new: str
    changed: list[str]


def fill(
    text: str, gens: dict[str, Callable[[], str]], where: str = "", cache: dict | None = None
) -> tuple[str, list[str]]:
    """`text` with every block's body replaced by its generator's output; returns (text, changed names).

    `cache` keeps each generator's output for one run (a block used twice is generated once)."""
    blocks(text, where)  # refuse malformed markers before touching anything
    cache = {} if cache is None else cache
    changed: list[str] = []

    def one(m: re.Match) -> str:
        name = m.group("name")
        if name not in gens:
            raise GeneratorError(f"{where}: block {name!r} has no generator (no tools/docs_gen module defines it)")
        if name not in cache:
            body = gens[name]()
            if not isinstance(body, str):
                raise GeneratorError(f"generator {name!r} returned {type(body).__name__}, not markdown text")
            cache[name] = body.strip("\n") + "\n"
        if cache[name] != m.group("body"):
            changed.append(name)
        return f"<!-- gen:{name} -->\n{cache[name]}<!-- /gen:{name} -->"

    return BLOCK.sub(one, text), changed


def fill_all(root: Path = ROOT, gens: dict[str, Callable[[], str]] | None = None) -> list[Filled]:
    """Every target file with its blocks filled (nothing written)."""
    gens = load_generators() if gens is None else gens
    cache: dict[str, str] = {}
    out = []
    for path in targets(root):
        old = path.read_text(encoding="utf-8")
        new, changed = fill(old, gens, str(path.relative_to(root)), cache)
        out.append(Filled(path, old, new, changed))
    return out
