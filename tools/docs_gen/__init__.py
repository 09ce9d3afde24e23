"""Generated text in the documentation: `<!-- gen:NAME -->` blocks filled by generator modules.

Every module `tools/docs_gen/<owner>.py` exposes `GENERATORS: dict[str, Callable[[], str]]`; each
callable returns markdown. A page holds a block as two marker lines:

    <!-- gen:NAME -->
    ...whatever NAME's generator returns...
    <!-- /gen:NAME -->

`fill` replaces what lies between the markers with the generator's output; `stale` lists the blocks
whose committed text differs from it. The modules are discovered, not listed: one module per page
(or per group of pages: the API reference, the results pages), named after it; a module whose name
starts with `_` holds shared helpers and no generators. A block naming a generator that no module
provides is reported, never left as it is silently.

Benchmark numbers enter the site when it is built, not the committed page: a module lists such
generators in `AT_BUILD` (a set of its names). In the committed page their block holds the fixed line
PLACEHOLDER; the mkdocs hook (tools/docs.py `on_page_markdown`) fills them in the built page only. A
benchmark rerun therefore commits its JSON alone, and `tools/docs.py check` still fails on a stale
committed block, on numbers pasted into a build-time block, and on a build-time generator that fails.
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


PLACEHOLDER = "*Filled in from `benchmarks/results/` when the site is built (`make docs`).*\n"


class Generators(dict):
    """NAME -> generator, with `at_build`: the names whose text enters only the built site."""

    at_build: frozenset[str] = frozenset()


def generator_modules(directory: Path = HERE) -> list[Path]:
    """The generator modules present: every tools/docs_gen/*.py but __init__ and the `_` helpers."""
    return sorted(p for p in directory.glob("*.py") if not p.name.startswith("_"))


def load_generators(directory: Path = HERE) -> Generators:
    """NAME -> generator, merged over every module present; two modules claiming one NAME is an error."""
    found = Generators()
    owner: dict[str, str] = {}
    at_build: set[str] = set()
    if str(directory.parent) not in sys.path:  # the modules import their shared helpers as docs_gen._name
        sys.path.insert(0, str(directory.parent))
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
        late = set(getattr(module, "AT_BUILD", ()))
        if late - gens.keys():
            raise GeneratorError(f"{path.name}: AT_BUILD names {sorted(late - gens.keys())}, which it does not define")
        at_build |= late
    found.at_build = frozenset(at_build)
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
    text: str, gens: dict[str, Callable[[], str]], where: str = "", cache: dict | None = None, site: bool = False
) -> tuple[str, list[str]]:
    """`text` with every block's body replaced by its generator's output; returns (text, changed names).

    A build-time block (`gens.at_build`) gets PLACEHOLDER in the committed text, and its generator's
    output only with `site=True` (the page as the site shows it). `cache` keeps each generator's output
    for one run (a block used twice is generated once)."""
    blocks(text, where)  # refuse malformed markers before touching anything
    cache = {} if cache is None else cache
    at_build = getattr(gens, "at_build", frozenset())
    changed: list[str] = []

    def one(m: re.Match) -> str:
        name = m.group("name")
        if name not in gens:
            raise GeneratorError(f"{where}: block {name!r} has no generator (no tools/docs_gen module defines it)")
        if name in at_build and not site:
            if m.group("body") != PLACEHOLDER:
                changed.append(name)
            return f"<!-- gen:{name} -->\n{PLACEHOLDER}<!-- /gen:{name} -->"
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
    """Every target file with its blocks filled as committed (nothing written)."""
    gens = load_generators() if gens is None else gens
    cache: dict[str, str] = {}
    out = []
    for path in targets(root):
        old = path.read_text(encoding="utf-8")
        new, changed = fill(old, gens, str(path.relative_to(root)), cache)
        out.append(Filled(path, old, new, changed))
    return out


def fill_site(text: str, gens: Generators, where: str = "", cache: dict | None = None) -> str:
    """`text` (a committed page, its other blocks current) with its build-time blocks filled for the site."""
    blocks(text, where)
    cache = {} if cache is None else cache

    def one(m: re.Match) -> str:
        name = m.group("name")
        if name not in gens.at_build:
            return m.group(0)
        if name not in cache:
            cache[name] = gens[name]().strip("\n") + "\n"
        return f"<!-- gen:{name} -->\n{cache[name]}<!-- /gen:{name} -->"

    return BLOCK.sub(one, text)


def build_time_failures(gens: Generators | None = None) -> list[str]:
    """One line per build-time generator that fails or returns no text (the check runs them all)."""
    gens = load_generators() if gens is None else gens
    out = []
    for name in sorted(gens.at_build):
        try:
            body = gens[name]()
        except Exception as exc:  # noqa: BLE001  (any failure of a generator is a finding, reported by name)
            out.append(f"build-time block {name!r}: its generator raised {type(exc).__name__}: {exc}")
            continue
        if not isinstance(body, str) or not body.strip():
            out.append(f"build-time block {name!r}: its generator returned no markdown text")
    return out
