"""No import circle between the modules of the sweep package, the presets and the schema (function-level
imports included: a lazy import is still a dependency), and no private name imported across modules in
the sweep, presets, data, LM-stack and shared CLI modules. Each check is shown to catch its mutation."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PACKAGES = {"empirics": "tmcheck.empirics", "util": "tmcheck.util", "cli": "tmcheck.cli", "theory": "tmcheck.theory"}
CIRCLE_FREE = ["empirics/sweep/*.py", "empirics/schema.py", "util/*.py"]
NO_PRIVATE_IMPORTS = [
    *CIRCLE_FREE,
    "empirics/data/*.py",
    "empirics/lm/checkpoint.py",
    "empirics/lm/pretrain.py",
    "empirics/lm/hf.py",
    *(f"cli/{m}.py" for m in ("common", "options", "sweep", "synth", "train")),
    *(f"cli/{m}.py" for m in ("data", "export", "report")),
]


def module_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    name = ".".join([PACKAGES[parts[0]], *parts[1:]])
    return name.removesuffix(".__init__")


def files(patterns) -> list[Path]:
    return sorted({p for pat in patterns for p in ROOT.glob(pat)})


def type_checking_lines(tree: ast.AST) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in ast.walk(node):
                lines.add(getattr(sub, "lineno", -1))
    return lines


def imports(source: str, known: set[str]) -> list[tuple[str, list[str]]]:
    """(module, names) of every import in `source` (TYPE_CHECKING blocks left out); `from pkg import sub`
    counts as an import of pkg.sub when that is a known module."""
    tree = ast.parse(source)
    skip = type_checking_lines(tree)
    out = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = [a.name for a in node.names if f"{node.module}.{a.name}" in known]
            out += [(f"{node.module}.{s}", []) for s in subs]
            rest = [a.name for a in node.names if a.name not in subs]
            if rest:
                out.append((node.module, rest))
    return out


def graph(sources: dict[str, str]) -> dict[str, set[str]]:
    known = set(sources)
    return {m: {t for t, _ in imports(src, known) if t in known and t != m} for m, src in sources.items()}


def cycle(g: dict[str, set[str]]) -> list[str] | None:
    """One import circle of g, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for t in sorted(g[m]):
            if state.get(t) == 1:
                return stack[stack.index(t) :] + [t]
            if t not in state and (found := visit(t)):
                return found
        state[m] = 2
        stack.pop()
        return None

    for m in sorted(g):
        if m not in state and (found := visit(m)):
            return found
    return None


def sources(patterns) -> dict[str, str]:
    return {module_of(p): p.read_text(encoding="utf-8") for p in files(patterns)}


def test_no_import_circle_between_sweep_presets_schema_and_util():
    g = graph(sources(CIRCLE_FREE))
    assert "tmcheck.empirics.sweep.core" in g and "tmcheck.empirics.sweep.preset" in g
    assert cycle(g) is None, " -> ".join(cycle(g))
    assert not [m for m in g["tmcheck.empirics.sweep.preset"] if m.startswith("tmcheck.empirics.sweep")]


@pytest.mark.parametrize(
    "src,dst",
    [
        ("tmcheck.empirics.sweep.kinds", "tmcheck.empirics.sweep.core"),
        ("tmcheck.empirics.sweep.core", "tmcheck.empirics.sweep.executors"),
        ("tmcheck.empirics.sweep.synthetic_preset", "tmcheck.empirics.sweep.synthetic"),
    ],
)
def test_the_circle_check_catches_the_old_circles(src, dst):
    srcs = sources(CIRCLE_FREE)
    srcs[src] += f"\n\ndef _lazy():\n    import {dst}\n"  # mutation: the lazy import the tree had
    assert cycle(graph(srcs)) is not None


def private_imports(srcs: dict[str, str]) -> list[str]:
    known = set(srcs)
    found = []
    for m, src in srcs.items():
        for target, names in imports(src, known):
            if target.startswith("tmcheck."):
                found += [f"{m}: {target}.{n}" for n in names if n.startswith("_") and not n.startswith("__")]
    return found


def test_no_private_name_is_imported_across_modules():
    srcs = sources(NO_PRIVATE_IMPORTS)
    assert private_imports(srcs) == []
    srcs["tmcheck.empirics.sweep.slurm"] += "\nfrom tmcheck.empirics.sweep.executors import _worker\n"
    assert private_imports(srcs) == ["tmcheck.empirics.sweep.slurm: tmcheck.empirics.sweep.executors._worker"]
