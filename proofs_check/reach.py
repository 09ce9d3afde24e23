"""Static reach scan: which `tmcheck.theory` names an obligation's check reaches (DESIGN.md, "every check can fail").

A check's evidence must be computed by the code it judges. This scan reads the check's source (its body,
its default arguments and the decorator's `satisfied` search are not followed: the default search is what
the verdict rests on) and follows every name it uses that is a function or class of a `proofs_check`
module, transitively; the names it meets that were imported from `tmcheck.theory` (or attributes of an
imported `tmcheck.theory` module) are the check's reach. An obligation whose reach is empty decides its
verdict with formulas of its own; the only ones allowed are the `oracles` the obligation names, each of
which a test compares with the construction (`tests/proofs_check/test_reach.py`).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
from dataclasses import dataclass

THEORY = "tmcheck.theory"
PACKAGE = "tmcheck.proofs_check"


@dataclass(frozen=True)
class ModuleNames:
    """What the names of one proofs_check module refer to."""

    functions: dict[str, ast.AST]  # module-level def/class name -> its node
    theory: dict[str, str]  # local name -> dotted tmcheck.theory name (a module or a member)
    siblings: dict[str, tuple[str, str]]  # local name -> (proofs_check module, member or "" for the module)


def _imports(nodes) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    theory, siblings = {}, {}
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                local = a.asname or a.name
                if node.module == THEORY or node.module.startswith(THEORY + "."):
                    theory[local] = f"{node.module}.{a.name}"
                elif node.module == PACKAGE:
                    siblings[local] = (f"{PACKAGE}.{a.name}", "")
                elif node.module.startswith(PACKAGE + "."):
                    siblings[local] = (node.module, a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(THEORY):
                    theory[a.asname or a.name] = a.name
    return theory, siblings


def names_of_source(source: str) -> ModuleNames:
    tree = ast.parse(source)
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    theory, siblings = _imports(tree.body)
    return ModuleNames(functions, theory, siblings)


@functools.cache
def module_names(module: str) -> ModuleNames:
    if module.startswith(FILE):
        with open(module[len(FILE) :], encoding="utf-8") as fh:
            return names_of_source(fh.read())
    return names_of_source(inspect.getsource(importlib.import_module(module)))


FILE = "file:"  # module_names("file:/path/to/x.py"): a source file that is not an importable module (a test)


def _used_names(node: ast.AST) -> set[str]:
    """Names read anywhere in a def (body and default arguments), minus the decorators."""
    out: set[str] = set()
    parts = list(node.body)
    if isinstance(node, ast.FunctionDef):
        parts += node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
    for part in parts:
        for n in ast.walk(part):
            if isinstance(n, ast.Name):
                out.add(n.id)
    return out


def _local_imports(node: ast.AST) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    return _imports([n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))])


def reach(module: str, name: str) -> set[str]:
    """The tmcheck.theory names that `module.name` reaches (transitively through proofs_check code)."""
    seen: set[tuple[str, str]] = set()
    found: set[str] = set()

    def visit(mod: str, fn: str) -> None:
        if (mod, fn) in seen:
            return
        seen.add((mod, fn))
        names = module_names(mod)
        node = names.functions.get(fn)
        if node is None:
            return
        loc_theory, loc_siblings = _local_imports(node)
        theory = {**names.theory, **loc_theory}
        siblings = {**names.siblings, **loc_siblings}
        for used in _used_names(node):
            if used in theory:
                found.add(theory[used])
            elif used in names.functions and used != fn:
                visit(mod, used)
            elif used in siblings:
                smod, member = siblings[used]
                if member:
                    visit(smod, member)
                else:  # a sibling module used as `lipschitz.f`: every function of it counts
                    for f in module_names(smod).functions:
                        visit(smod, f)

    visit(module, name)
    return found


def file_reach(path: str, name: str) -> set[str]:
    """The theory names function `name` of the source file at `path` reaches (through its own functions and
    proofs_check's)."""
    return reach(FILE + str(path), name)


def obligation_reach(obl) -> set[str]:
    """The theory names an obligation's check reaches."""
    return reach(obl.check.__module__, obl.check.__name__)


def scan(obligations) -> dict[str, set[str]]:
    """Obligation id -> the tmcheck.theory names its check reaches."""
    return {o.id: obligation_reach(o) for o in obligations}
