"""The architecture docs/development.md describes, checked on the tree. Every import counts, the ones
inside functions included:

- layers: util <- theory <- proofs_check; theory, util <- empirics; everything <- cli (nothing points up);
- no import cycle between modules, and none between folders (a folder: the directory of a module);
- no private name imported across modules; CLI modules import no other CLI module but the shared helpers;
- no function over 80 lines outside the CLI's commands.

Each rule has a test that plants a violation and shows the check fails on it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PARTS = {"theory": "tmcheck.theory", "proofs_check": "tmcheck.proofs_check", "empirics": "tmcheck.empirics"}
PARTS |= {"cli": "tmcheck.cli", "util": "tmcheck.util"}
# what each part may import (itself included): the layers of docs/development.md
MAY_IMPORT = {
    "util": {"util"},
    "theory": {"util", "theory"},
    "proofs_check": {"util", "theory", "proofs_check"},
    "empirics": {"util", "theory", "empirics"},
    "cli": set(PARTS),
}
SHARED_CLI = {"tmcheck.cli.common", "tmcheck.cli.options"}
MAX_FUNCTION_LINES = 80
CODE_FOLDERS = (*PARTS, "tools", "benchmarks")


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


def _part(module: str) -> str:
    return next(folder for folder, dotted in PARTS.items() if module == dotted or module.startswith(dotted + "."))


def module_graph() -> dict[str, set[str]]:
    """module -> the modules it imports, anywhere in the file. Importing an enclosing package is no edge:
    Python imports the package before its module anyway, so it can never close a cycle of its own."""
    graph = {}
    for m, p in MODULES.items():
        deps = {_target(t, n) for t, n, _ in imports(p)} & MODULES.keys()
        graph[m] = {d for d in deps if d != m and not m.startswith(d + ".")}
    return graph


def folder_graph() -> dict[str, set[str]]:
    """folder -> the folders its modules import (a folder is the directory that holds a module)."""
    folder = {m: _rel(p.parent) for m, p in MODULES.items()}
    graph: dict[str, set[str]] = {}
    for m, deps in module_graph().items():
        graph.setdefault(folder[m], set()).update(folder[d] for d in deps if folder[d] != folder[m])
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected part of the graph that has any (Tarjan, iteratively)."""
    index, low, on, stack, found, counter = {}, {}, set(), [], [], 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                part = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    part.append(w)
                    if w == v:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return found


def test_empirics_is_packages_with_few_top_level_modules():
    top = [p.name for p in (ROOT / "empirics").glob("*.py") if p.name != "__init__.py"]
    assert len(top) <= 8, top
    for package in ("id", "lm", "fit", "synthetic", "sweep", "report", "data", "reference"):
        assert (ROOT / "empirics" / package / "__init__.py").is_file(), package


def test_layers_point_one_way():
    bad = [
        f"{_rel(MODULES[m])} imports {d}"
        for m, deps in module_graph().items()
        for d in sorted(deps)
        if _part(d) not in MAY_IMPORT[_part(m)]
    ]
    assert not bad, bad


def test_no_import_cycle_between_modules():
    found = cycles(module_graph())
    assert not found, found


def test_no_import_cycle_between_folders():
    found = cycles(folder_graph())
    assert not found, found


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


def _is_command(fn: ast.FunctionDef) -> bool:
    """A Typer command or group callback: decorated with `<app>.command(...)` or `<app>.callback(...)`."""
    for dec in fn.decorator_list:
        call = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(call, ast.Attribute) and call.attr in ("command", "callback"):
            return True
    return False


def long_functions(paths) -> list[str]:
    out = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not _is_command(node):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    out.append(f"{_rel(path)}:{node.lineno} {node.name} ({length} lines)")
    return out


def code_paths() -> list[Path]:
    return [p for folder in CODE_FOLDERS for p in sorted((ROOT / folder).rglob("*.py")) if ".venv" not in p.parts]


def test_no_function_over_80_lines_outside_cli_commands():
    found = long_functions(code_paths())
    assert not found, found


@pytest.mark.parametrize("mutant", ["back-import", "function-cycle", "folder-cycle", "private", "long"])
def test_the_checks_can_fail(mutant, monkeypatch, tmp_path):
    """Each check fails on one planted violation; the import ones are planted inside a function."""
    (tmp_path / "sub").mkdir()
    a, b, c = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "sub" / "c.py"
    if mutant == "back-import":
        a.write_text("def f():\n    from tmcheck.empirics.sweep import SweepDir\n")
        monkeypatch.setitem(MODULES, "tmcheck.theory.a", a)
        check = test_layers_point_one_way
    elif mutant == "function-cycle":
        a.write_text("from tmcheck.empirics.b import x\n")
        b.write_text("def g():\n    from tmcheck.empirics.a import y\n")
        monkeypatch.setitem(MODULES, "tmcheck.empirics.a", a)
        monkeypatch.setitem(MODULES, "tmcheck.empirics.b", b)
        check = test_no_import_cycle_between_modules
    elif mutant == "folder-cycle":  # a -> sub.c and sub.c -> b: no module cycle, but the folders circle
        a.write_text("from tmcheck.empirics.sub.c import x\n")
        b.write_text("y = 1\n")
        c.write_text("def h():\n    from tmcheck.empirics.b import y\n")
        planted = {f"tmcheck.empirics.{name}": path for name, path in {"a": a, "b": b, "sub.c": c}.items()}
        monkeypatch.setitem(globals(), "MODULES", planted)  # the planted modules alone
        assert not cycles(module_graph())
        check = test_no_import_cycle_between_folders
    elif mutant == "private":
        a.write_text("from tmcheck.theory.sparse import _layer\n")
        monkeypatch.setitem(MODULES, "tmcheck.empirics.a", a)
        check = test_no_private_name_is_imported_across_modules
    else:
        body = "    x = 1\n" * MAX_FUNCTION_LINES
        a.write_text("def f():\n" + body + "\n\n@app.command()\ndef cmd():\n" + body)
        assert [line.split()[1] for line in long_functions([a])] == ["f"]  # the command is exempt, f is not
        monkeypatch.setitem(globals(), "code_paths", lambda: [a])
        check = test_no_function_over_80_lines_outside_cli_commands
    with pytest.raises(AssertionError):
        check()
