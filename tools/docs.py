"""The documentation site: generated blocks, the strict mkdocs build, and the files behind its numbers.

    python tools/docs.py build              # fill every <!-- gen:NAME --> block, then mkdocs build --strict
    python tools/docs.py serve              # fill the blocks, then mkdocs serve
    python tools/docs.py check              # exit 1 when a committed block differs from its generator,
                                            # or a build-time (benchmark) block's generator fails
    python tools/docs.py test-report JUNIT  # results/test-run.json from a pytest JUnit report
    python tools/docs.py record-time NAME -- CMD ...   # time CMD into results/timings.json

It is also mkdocs' hook module (mkdocs.yml `hooks:`): the nav keeps only the pages that exist (pages
of other owners appear once their files are there), the API reference reads the packages through a
tree of links named as they are installed (tmcheck.theory -> theory/, ...) on pages generated per
module group (docs_gen.api, with their nav), the committed figures
of results/ are served under figures/ without a copy in docs/, MathJax is served from its installed
package under assets/mathjax/ (the math renders offline), and the build-time blocks (the
benchmark numbers, read from benchmarks/results/*.json) are filled into each page as it is rendered.

Errors are one line on stderr and exit 2; a stale block or a failed build exits 1.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import json
import os
import subprocess
import sys
import time
import tomllib
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from docs_gen import (  # noqa: E402  (tools/ is not a package: path set just above)
    GeneratorError,
    build_time_failures,
    fill_all,
    fill_site,
    load_generators,
)
from docs_gen._math import math  # noqa: E402

SITE = ROOT / "build" / "site"
API_SRC = ROOT / "build" / "api-src"
RESULTS = ROOT / "results"
TEST_RUN = RESULTS / "test-run.json"
TIMINGS = RESULTS / "timings.json"
FIGURES = "figures"  # the site folder of results/**/*.png
MATH_PAGES = ("theory/",)  # pages whose plain-text formulas (`N = d(2^d H_f/ε)^{1/β}`) the site renders as math
MATHJAX = "assets/mathjax"  # the site folder of MathJax's files (mkdocs.yml extra_javascript loads tex-chtml.js)
QUIET_SHARE = 0.10  # other processes' share of the machine above which a timing is DISTURBED (../shared/tools/quiet)


# ------------------------------------------------------------------------------------ blocks
def write_blocks(root: Path = ROOT) -> list[str]:
    """Fill every block and write the files that changed; returns 'file: block' for each change."""
    from tmcheck.util import atomic

    out = []
    for f in fill_all(root):
        if f.changed:
            atomic.write_text(f.path, f.new)
            out += [f"{f.path.relative_to(root)}: {name}" for name in f.changed]
    return out


def stale_blocks(root: Path = ROOT) -> list[str]:
    """One paragraph per block whose committed text differs from its generator's (with a short diff), and
    one line per build-time generator that fails."""
    out = build_time_failures()
    for f in fill_all(root):
        if not f.changed:
            continue
        diff = difflib.unified_diff(f.old.splitlines(), f.new.splitlines(), "committed", "generated", lineterm="", n=0)
        lines = list(diff)[2:14]
        out.append(
            f"{f.path.relative_to(root)}: block(s) {', '.join(f.changed)} differ from their generators "
            "(run `python tools/docs.py build`)\n    " + "\n    ".join(lines)
        )
    return out


# ------------------------------------------------------------------------------------ mkdocs
def mkdocs(*args: str, root: Path = ROOT) -> int:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.call([sys.executable, "-m", "mkdocs", *args, "-f", str(root / "mkdocs.yml")], env=env, cwd=root)


def build(root: Path = ROOT, site: Path | None = None) -> int:
    changed = write_blocks(root)
    for c in changed:
        print(f"regenerated {c}")
    site = site or root / "build" / "site"
    return mkdocs("build", "--strict", "--site-dir", str(site), root=root)


# ------------------------------------------------------------------------------------ hooks
def package_dirs(root: Path = ROOT) -> dict[str, str]:
    """The top-level packages as installed (tmcheck.theory -> theory, ...), from pyproject's package-dir."""
    mapping = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    return {k.split(".", 1)[1]: v for k, v in mapping.items() if k.count(".") == 1}


def api_tree(root: Path = ROOT, dest: Path | None = None) -> Path:
    """build/api-src/tmcheck/<part> -> <dir>: the packages under the names griffe looks for."""
    dest = dest or root / "build" / "api-src"
    pkg = dest / "tmcheck"
    pkg.mkdir(parents=True, exist_ok=True)
    for name, directory in package_dirs(root).items():
        link = pkg / name
        target = os.path.relpath(root / directory, pkg)
        if link.is_symlink() and os.readlink(link) == target:
            continue
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target, target_is_directory=True)
    return dest


def prune_nav(nav: list, exists) -> list:
    """The nav with every page that does not exist removed, and every section left empty."""
    out = []
    for item in nav:
        if isinstance(item, str):
            if exists(item):
                out.append(item)
            continue
        ((title, value),) = item.items()
        if isinstance(value, list):
            kept = prune_nav(value, exists)
            if kept:
                out.append({title: kept})
        elif "://" in value or exists(value):
            out.append({title: value})
    return out


def _first(fn):
    """Run this hook before the plugins' own (mkdocstrings reads its paths in its on_config)."""
    try:
        from mkdocs.plugins import event_priority
    except ImportError:  # mkdocs absent: the command-line tool does not need its hooks
        return fn
    return event_priority(100)(fn)


@_first
def on_config(config, **kwargs):
    docs_dir = Path(config["docs_dir"])
    if config.get("nav"):
        config["nav"] = prune_nav(with_api_nav(config["nav"]), lambda p: (docs_dir / p).is_file() or p in _api_pages())
    api_tree(ROOT)
    return config


_SITE_CACHE: dict[str, str] = {}


def on_pre_build(config, **kwargs):
    _SITE_CACHE.clear()  # `mkdocs serve` rebuilds: read the benchmark files again
    _api_pages.cache_clear()


def on_page_markdown(markdown, page, config, files, **kwargs):
    """The build-time blocks (benchmark numbers) filled in as the page is rendered, never committed; on the
    pages that write formulas in plain text (MATH_PAGES, or `math: true` in a page's front matter), each
    formula marked as math for MathJax (docs_gen._math)."""
    text = fill_site(markdown, _site_generators(), page.file.src_path, _SITE_CACHE)
    src = page.file.src_path.replace(os.sep, "/")
    if src.startswith(MATH_PAGES) or (getattr(page, "meta", None) or {}).get("math"):
        text = math(text)
    return text


@functools.cache
def _site_generators():
    return load_generators()


def mathjax_files() -> list[tuple[str, Path]]:
    """(site path, file) of the MathJax 3 the site renders its math with, from the docs extra's wheel
    (django-static-mathjax: the static files only): the TeX-to-HTML bundle, the TeX extensions it loads on
    demand, its fonts and its menu. Nothing is fetched from a CDN."""
    import importlib.util

    spec = importlib.util.find_spec("mathjax")
    es5 = Path(spec.origin).parent / "static" / "mathjax" / "es5" if spec and spec.origin else None
    if es5 is None or not (es5 / "tex-chtml.js").is_file():
        raise FileNotFoundError("MathJax is not installed: the docs extra has django-static-mathjax (make docs)")
    wanted = [es5 / "tex-chtml.js"]
    for sub in ("input/tex/extensions", "output/chtml/fonts", "ui"):
        wanted += sorted(p for p in (es5 / sub).rglob("*") if p.is_file())
    return [(f"{MATHJAX}/{p.relative_to(es5).as_posix()}", p) for p in wanted]


@functools.cache
def _api_pages() -> dict[str, str]:
    from docs_gen.api import site_pages

    return site_pages()


def with_api_nav(nav: list) -> list:
    """The nav with its "API reference" section replaced by the generated pages (docs_gen.api.api_nav)."""
    from docs_gen.api import api_nav

    return [{"API reference": api_nav()} if isinstance(i, dict) and "API reference" in i else i for i in nav]


def on_files(files, config, **kwargs):
    """Serve results/**/*.png as figures/** (the committed figures are the site's, without a copy), and
    MathJax under assets/mathjax/ from its installed package."""
    from mkdocs.structure.files import File

    for png in sorted(RESULTS.rglob("*.png")):
        rel = png.relative_to(RESULTS).as_posix()
        files.append(File.generated(config, f"{FIGURES}/{rel}", abs_src_path=str(png)))
    for dest, src in mathjax_files():
        files.append(File.generated(config, dest, abs_src_path=str(src)))
    for dest, text in _api_pages().items():
        files.append(File.generated(config, dest, content=text))
    return files


# ------------------------------------------------------------------------------------ recorded files
def git_commit(root: Path = ROOT) -> str | None:
    try:
        return subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=root, text=True).strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def junit_counts(report: Path) -> dict:
    """passed / failed / skipped / errors and the suite's seconds, from a pytest JUnit XML report."""
    tree = ET.parse(report)
    counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    for case in tree.iter("testcase"):
        tags = {child.tag for child in case}
        key = (
            "errors"
            if "error" in tags
            else "failed"
            if "failure" in tags
            else "skipped"
            if "skipped" in tags
            else "passed"
        )
        counts[key] += 1
    suites = [s for s in tree.iter("testsuite")]
    seconds = sum(float(s.get("time", 0)) for s in suites)
    return {**counts, "seconds": seconds, "timestamp": suites[0].get("timestamp") if suites else None}


def test_report(junit: Path, out: Path = TEST_RUN, command: str = "make test") -> dict:
    from tmcheck.util import atomic

    doc = {
        "command": command,
        **junit_counts(junit),
        "commit": git_commit(),
        "cores": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "written": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    atomic.write_json(out, doc)
    return doc


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot (all but idle and iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def record_time(name: str, cmd: list[str], out: Path = TIMINGS) -> int:
    """Run cmd, and store its wall time with the share of the machine other processes took meanwhile
    (the measure of ../shared/tools/quiet: above 10% the figure is DISTURBED and is not quoted)."""
    from tmcheck.util import atomic

    cores = os.cpu_count() or 1
    load = os.getloadavg()[0]
    b0, t0, c0 = busy_seconds(), time.time(), os.times()
    rc = subprocess.call(cmd)
    b1, t1, c1 = busy_seconds(), time.time(), os.times()
    wall = t1 - t0
    own = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
    share = max(0.0, (b1 - b0) - own) / max(wall * cores, 1e-9)
    store = json.loads(out.read_text()) if out.exists() else {}
    store[name] = {
        "command": " ".join(cmd),
        "seconds": wall,
        "exit": rc,
        "cores": cores,
        "load_before": load,
        "own_cpu_seconds": own,
        "quiet": {
            "verdict": "quiet" if share <= QUIET_SHARE else "DISTURBED",
            "other_cpu_share": share,
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
        },
        "commit": git_commit(),
    }
    atomic.write_json(out, store)
    print(f"{name}: {wall:.1f} s, exit {rc}, other processes {share:.0%} of the machine", file=sys.stderr)
    return rc


# ------------------------------------------------------------------------------------ command line
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/docs.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="fill the generated blocks, then mkdocs build --strict")
    b.add_argument("--site-dir", type=Path, default=None, help="where the site goes (default build/site)")
    sub.add_parser("serve", help="fill the generated blocks, then mkdocs serve")
    sub.add_parser("check", help="exit 1 when a committed generated block differs from its generator")
    t = sub.add_parser("test-report", help="write results/test-run.json from a pytest JUnit report")
    t.add_argument("junit", type=Path)
    t.add_argument("--command", default="make test")
    r = sub.add_parser("record-time", help="time a command into results/timings.json")
    r.add_argument("name")
    r.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    try:
        if args.cmd == "build":
            return build(site=args.site_dir)
        if args.cmd == "serve":
            write_blocks()
            return mkdocs("serve")
        if args.cmd == "check":
            stale = stale_blocks()
            for s in stale:
                print(s, file=sys.stderr)
            if not stale:
                print("every generated block is current")
            return 1 if stale else 0
        if args.cmd == "test-report":
            if not args.junit.is_file():
                raise ValueError(f"{args.junit}: no such JUnit report")
            doc = test_report(args.junit, command=args.command)
            print(json.dumps(doc))
            return 0
        if args.cmd == "record-time":
            cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
            if not cmd:
                raise ValueError("record-time needs a command after --")
            return record_time(args.name, cmd)
    except (GeneratorError, ValueError, OSError, ET.ParseError) as exc:
        print(f"tools/docs.py: {exc}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
