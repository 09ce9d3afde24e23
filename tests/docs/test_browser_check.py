"""The headless-browser check (.ci/browser-check.py) in a real Chromium: a page with its heading, table
and figure passes; the same page with the figure missing, the table gone or the heading changed fails."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from helpers import ROOT, load_tool, need_chromium  # noqa: E402

PAGE = """<!doctype html><html><head><title>t</title></head><body><div class="md-content">
<h1>Figure 2: data scaling</h1><h2>The report</h2>
<table><tr><th>a</th></tr><tr><td>1</td></tr></table>
<p><img src="fig.png" alt="a figure"></p></div></body></html>"""


@pytest.fixture(scope="module")
def check():
    binary = need_chromium()
    module = load_tool("browser-check")
    return lambda site, pages: module.check(site, site / "shots", pages, binary=binary, root=site)


@pytest.fixture
def site(tmp_path):
    (tmp_path / "index.html").write_text(PAGE)
    shutil.copy(ROOT / "results" / "pretrain" / "fig_scaling.png", tmp_path / "fig.png")
    return tmp_path


def spec():
    module = sys.modules["tmcheck_tool_browser_check"]
    return [module.Page("p", "index.html", "Figure 2", ["The report"], tables=1, images=1)]


def test_a_rendered_page_passes_and_is_screenshotted(check, site):
    report = check(site, spec())
    assert report["p"]["problems"] == [], report
    assert (site / "shots" / "p.png").stat().st_size > 1000
    assert report["p"]["found"]["images"][0]["naturalWidth"] > 100


@pytest.mark.parametrize(
    "mutate,expect",
    [
        (lambda s: (s / "fig.png").unlink(), "did not load"),
        (lambda s: (s / "fig.png").write_bytes(b"not a png"), "did not load"),
        (lambda s: (s / "index.html").write_text(PAGE.replace("<table>", "<table hidden>")), "visible tables"),
        (lambda s: (s / "index.html").write_text(PAGE.replace("Figure 2", "Figure 9")), "does not contain"),
    ],
    ids=["missing-figure", "broken-figure", "hidden-table", "wrong-heading"],
)
def test_a_mutated_page_fails(check, site, mutate, expect):
    mutate(site)
    problems = check(site, spec())["p"]["problems"]
    assert any(expect in p for p in problems), problems


def test_a_page_of_another_owner_that_does_not_exist_is_skipped(check, site):
    module = sys.modules["tmcheck_tool_browser_check"]
    pages = [module.Page("x", "nope/index.html", "", source="docs/nope.md")]
    assert "skipped" in check(site, pages)["x"]


MATH_PAGE = """<!doctype html><html><head><title>m</title>
<script>window.MathJax = {options: {ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex"}};</script>
<script src="assets/mathjax/tex-chtml.js"></script></head><body><div class="md-content">
<h1>Lemma 1</h1><p>Pick <span class="arithmatex">\\(N = d(2^d H_f/\\varepsilon)^{1/\\beta} + 1\\)</span>.</p>
</div></body></html>"""


@pytest.fixture
def math_site(tmp_path):
    """A page whose formula MathJax typesets, served from the files the site serves (tools/docs.py)."""
    docs = load_tool("docs")
    try:
        files = docs.mathjax_files()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    for dest, src in files:
        (tmp_path / dest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, tmp_path / dest)
    (tmp_path / "index.html").write_text(MATH_PAGE)
    return tmp_path


def math_spec():
    module = sys.modules["tmcheck_tool_browser_check"]
    return [module.Page("m", "index.html", "Lemma 1", math=1)]


def test_typeset_math_passes(check, math_site):
    report = check(math_site, math_spec())["m"]
    assert report["problems"] == [], report
    assert report["found"]["math"] == 1 and report["found"]["raw_tex"] == []


@pytest.mark.parametrize(
    "mutate,expect",
    [
        (lambda s: (s / "assets/mathjax/tex-chtml.js").unlink(), "raw TeX on the page"),
        (lambda s: (s / "index.html").write_text(MATH_PAGE.replace('class="arithmatex"', "")), "raw TeX"),
        (lambda s: (s / "index.html").write_text(MATH_PAGE.replace("+ 1", "+ x^1^2")), "could not"),
    ],
    ids=["no-mathjax", "unmarked-formula", "refused-formula"],
)
def test_a_page_with_raw_tex_fails(check, math_site, mutate, expect):
    mutate(math_site)
    problems = check(math_site, math_spec())["m"]["problems"]
    assert any(expect in p for p in problems), problems
