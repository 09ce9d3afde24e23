"""The API reference: one page per module group, generated when the site is built (the mkdocs hook of
tools/docs.py adds the pages and their nav), and the committed overview docs/api/index.md.

A group is a subpackage (`tmcheck.empirics.id`, with every module under it) or a module at the top of a part
(`tmcheck.theory.network`); `tmcheck.cli` and `tmcheck.util` are one page each. A page opens with a table
per public class and function (the package's `__all__`, or what a module defines): each parameter with its
type (its annotation, else the type of its default) and its default. Then mkdocstrings renders the
docstrings, signatures with their annotations and any Args section as a table (mkdocs.yml).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable

from docs_gen._common import ROOT, cell, table

PAGES = ("docs/api/index.md",)
PARTS = ("theory", "proofs_check", "empirics", "cli", "util")
ONE_PAGE = ("cli", "util")  # parts small or uniform enough for one page

# Members whose docstrings do not render in strict mode, in files owned by others (listed in the report
# of this page's owner): module -> member names left out of the page.
API_EXCLUDE: dict[str, tuple[str, ...]] = {
    "tmcheck.empirics.fit": ("exponent_report",),
    "tmcheck.empirics.fit.exponent": ("exponent_report",),
}


def modules(part: str) -> list[str]:
    """Every module of tmcheck.<part>, from the source tree (package-dir of pyproject.toml)."""
    import tomllib

    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    base = ROOT / mapping[f"tmcheck.{part}"]
    out = []
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(base).with_suffix("")
        names = [n for n in rel.parts if n != "__init__"]
        if any(n.startswith("_") for n in names):
            continue
        out.append(".".join(["tmcheck", part, *names]))
    return sorted(set(out))


def groups(part: str) -> dict[str, list[str]]:
    """Page name -> its modules: `tmcheck.<part>` (the package itself), each subpackage with its modules,
    each other top module alone; ONE_PAGE parts are one group."""
    mods = modules(part)
    root = f"tmcheck.{part}"
    if part in ONE_PAGE:
        return {root: mods}
    subpackages = {m for m in mods if any(x.startswith(m + ".") for x in mods)}
    out: dict[str, list[str]] = {}
    for m in mods:
        if m == root:
            out.setdefault(root, []).append(m)
            continue
        top = ".".join(m.split(".")[:3])
        out.setdefault(top if top in subpackages else m, []).append(m)
    return out


def page_path(group: str) -> str:
    """api/<part>/<rest>.md, or api/<part>.md for the part itself."""
    parts = group.split(".")[1:]
    return "api/" + "/".join(parts[:1] + (["index"] if len(parts) == 1 else parts[1:])) + ".md"


def public_objects(group: str, mods: list[str]) -> list[tuple[str, object]]:
    """(qualified name, object) of the group's public classes and functions: the package's `__all__`, else
    the public classes and functions its modules define."""
    pkg = importlib.import_module(group)
    names = getattr(pkg, "__all__", None)
    if names is not None:
        objs = [(f"{group}.{n}", getattr(pkg, n)) for n in names]
    else:
        objs = []
        for m in mods:
            mod = importlib.import_module(m)
            for n, v in vars(mod).items():
                if not n.startswith("_") and getattr(v, "__module__", None) == m:
                    objs.append((f"{m}.{n}", v))
    return [(q, v) for q, v in objs if inspect.isclass(v) or inspect.isfunction(v)]


def _type(p: inspect.Parameter) -> str:
    if p.annotation is not inspect.Parameter.empty:
        return p.annotation if isinstance(p.annotation, str) else inspect.formatannotation(p.annotation)
    if p.default is not inspect.Parameter.empty and p.default is not None:
        return type(p.default).__name__
    return ""


def _default(p: inspect.Parameter) -> str:
    if p.default is inspect.Parameter.empty:
        return "required" if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) else ""
    return f"`{p.default!r}`"


def refused_spellings() -> dict[str, str]:
    """Peer spellings a signature accepts only to refuse them (empirics.id.registry.PEER_REFUSED): no
    parameter of the table, a note under it."""
    from tmcheck.empirics.id.registry import PEER_REFUSED

    return PEER_REFUSED


def parameter_table(qualname: str, obj) -> str:
    """A heading-less block: the object's kind and name, then its parameters as a table."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return ""
    refused = refused_spellings()
    rows, left = [], []
    for name, p in sig.parameters.items():
        if name in ("self", "cls"):
            continue
        if name in refused and p.default is None:
            left.append(name)
            continue
        star = "*" if p.kind == p.VAR_POSITIONAL else "**" if p.kind == p.VAR_KEYWORD else ""
        rows.append([f"`{star}{name}`", f"`{cell(_type(p))}`" if _type(p) else "", _default(p)])
    kind = "class" if inspect.isclass(obj) else "function"
    short = qualname.rsplit(".", 1)[1]
    head = f"**`{short}`** ({kind})"
    if not rows:
        return head + ": no parameters.\n"
    out = head + "\n\n" + table(["parameter", "type", "default"], rows) + "\n"
    if left:
        out += (
            "\nAccepted only to be refused in one line (a peer's spelling): "
            + ", ".join(f"`{n}`" for n in left)
            + ".\n"
        )
    return out


def _directive(mod: str) -> list[str]:
    lines = [f"::: {mod}"]
    excluded = API_EXCLUDE.get(mod)
    if excluded:
        pattern = "|".join(excluded)
        lines += ["    options:", f'      filters: ["!^_", "!^({pattern})$"]']
    return [*lines, ""]


def api_page(group: str, mods: list[str]) -> str:
    """The page of one group: the parameter tables of its public objects, then the docstrings of its modules."""
    lines = [f"# `{group}`", ""]
    objs = public_objects(group, mods)
    if objs:
        lines += ["## Parameters", ""]
        lines += [parameter_table(q, o) for q, o in objs]
        lines += ["## Reference", ""]
    for mod in mods:
        lines += _directive(mod)
    return "\n".join(lines)


def site_pages() -> dict[str, str]:
    """Site path -> markdown of every generated API page (the mkdocs hook adds them to the build)."""
    out = {}
    for part in PARTS:
        for group, mods in groups(part).items():
            out[page_path(group)] = api_page(group, mods)
    return out


def api_nav() -> list:
    """The nav of the API reference: the overview, then each part with its pages."""
    nav: list = [{"Overview": "api/index.md"}]
    for part in PARTS:
        pages = [{f"{g}": page_path(g)} for g in groups(part)]
        nav.append({f"tmcheck.{part}": pages if len(pages) > 1 else pages[0][f"tmcheck.{part}"]})
    return nav


def api_index() -> str:
    rows = []
    for part in PARTS:
        for group, mods in groups(part).items():
            rows.append([f"[`{group}`]({page_path(group)[4:]})", len(mods)])
    out = table(["page", "modules"], rows)
    left = [f"`{m}`: {', '.join(f'`{x}`' for x in xs)}" for m, xs in sorted(API_EXCLUDE.items())]
    if left:
        out += "\n\nLeft out because their docstrings do not render yet: " + "; ".join(left) + "."
    return out


GENERATORS: dict[str, Callable[[], str]] = {"api.index": api_index}
