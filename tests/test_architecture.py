"""The architecture the README and DESIGN.md describe, checked on the tree: one package per concern in
empirics/, no import circle between modules, no private name imported across modules, CLI modules that
import no other CLI module but the shared helpers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PARTS = {"theory": "tmcheck.theory", "proofs_check": "tmcheck.proofs_check", "empirics": "tmcheck.empirics"}
PARTS |= {"cli": "tmcheck.cli", "util": "tmcheck.util"}
SHARED_CLI = {"tmcheck.cli.common", "tmcheck.cli.options"}


def modules() -> dict[str, Path]:
    out = {}
    for folder, dotted in PARTS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([dotted, *parts])] = path
    return out


def imports(path: Path) -> list[tuple[str, str | None, bool]]:
    """(module, imported name or None, at module level) of every tmcheck import in the file."""
    tree = ast.parse(path.read_text())
    top = {id(n) for n in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tmcheck"):
            out += [(node.module, a.name, id(node) in top) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, None, id(node) in top) for a in node.names if a.name.startswith("tmcheck")]
    return out


MODULES = modules()


def _rel(p: Path) -> str:
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)


def _target(module: str, name: str | None) -> str:
    sub = f"{module}.{name}" if name else module
    return sub if sub in MODULES else module


def test_empirics_is_packages_with_at_most_eight_top_level_modules():
    top = [p.name for p in (ROOT / "empirics").glob("*.py") if p.name != "__init__.py"]
    assert len(top) <= 8, top
    for package in ("id", "lm", "fit", "synthetic", "sweep", "report", "data", "reference"):
        assert (ROOT / "empirics" / package / "__init__.py").is_file(), package


def test_no_import_circle_between_modules_at_import_time():
    graph = {
        m: {_target(t, n) for t, n, top in imports(p) if top and _target(t, n) in MODULES and _target(t, n) != m}
        for m, p in MODULES.items()
    }
    # a package's __init__ re-exporting its own modules is not a circle: drop edges into a parent package
    for m, deps in graph.items():
        graph[m] = {d for d in deps if not m.startswith(d + ".")}
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d) :] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, cycles[:3]


def test_no_private_name_is_imported_across_modules():
    bad = [
        f"{_rel(p)}: {t}.{n}"
        for m, p in MODULES.items()
        for t, n, _ in imports(p)
        if (n and n.startswith("_") and not n.startswith("__")) or any(s.startswith("_") for s in t.split("."))
    ]
    bench = [
        f"{_rel(p)}: {t}.{n}"
        for p in sorted((ROOT / "benchmarks").glob("*.py"))
        for t, n, _ in imports(p)
        if n and n.startswith("_") and not n.startswith("__")
    ]
    assert not bad + bench, bad + bench


def test_cli_modules_import_only_the_shared_cli_helpers():
    bad = []
    for m, p in MODULES.items():
        if not m.startswith("tmcheck.cli.") or m == "tmcheck.cli.main":
            continue
        for t, n, _ in imports(p):
            target = _target(t, n)
            if (
                target.startswith("tmcheck.cli")
                and target not in SHARED_CLI
                and target != m
                and not target.startswith(m + ".")
            ):
                if not (m.startswith("tmcheck.cli.stages") and target.startswith("tmcheck.cli.stages")):
                    bad.append(f"{m} imports {target}")
    assert not bad, bad


@pytest.mark.parametrize("mutant", ["circle", "private"])
def test_the_checks_can_fail(mutant, monkeypatch, tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    if mutant == "circle":
        a.write_text("from tmcheck.empirics.b import x\n")
        b.write_text("from tmcheck.empirics.a import y\n")
        monkeypatch.setitem(MODULES, "tmcheck.empirics.a", a)
        monkeypatch.setitem(MODULES, "tmcheck.empirics.b", b)
        with pytest.raises(AssertionError):
            test_no_import_circle_between_modules_at_import_time()
    else:
        a.write_text("from tmcheck.theory.sparse import _layer\n")
        monkeypatch.setitem(MODULES, "tmcheck.empirics.a", a)
        with pytest.raises(AssertionError):
            test_no_private_name_is_imported_across_modules()
