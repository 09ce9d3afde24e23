"""The site's math, API pages, environment variables and gallery: formulas in plain text are marked as math
(and a formula left unmarked is found), the API tables leave a refused peer spelling out, every variable
the package reads is documented, and every example has its script and page."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from docs_gen import _math  # noqa: E402  (helpers put tools/ on the path)
from helpers import ROOT  # noqa: E402

RAW = re.compile(r"[\^_]\{")


def raw_tex(markdown: str) -> list[str]:
    """TeX a reader would see as source: `^{` or `_{` outside marked math and code."""
    text = re.sub(r"\\\(.*?\\\)|`[^`]*`", "", markdown)
    return [m.group() for m in RAW.finditer(text)]


@pytest.mark.parametrize(
    "text,formula",
    [
        ("pick N = d(2^d H_f/ε)^{1/β} + 1 to obtain", r"\(N = d(2^d H_f/ε)^{1/β} + 1\)"),
        ("in R^{d_embd×w}.", r"\(R^{d_{\mathrm{embd}}×w}\)."),
        ("rate n^(−2β/(2β+d)) here", r"\(n^{−2β/(2β+d)}\)"),
        ("holds L_T² <= 4", r"\(L_T^{2} \le  4\)"),
    ],
)
def test_formulas_are_marked_in_tex(text, formula):
    assert formula in _math.math(text)


def test_prose_code_and_structure_are_kept():
    text = "- see `a_b^{c}` in theory.bounds.block_constants, alpha_D_hat and tmcheck's\n| a | b |"
    assert _math.math(text) == text


@pytest.mark.parametrize("page", sorted((ROOT / "docs" / "theory").glob("*.md")), ids=lambda p: p.name)
def test_the_theory_pages_leave_no_raw_tex(page):
    assert raw_tex(_math.math(page.read_text(encoding="utf-8"))) == []


def test_raw_tex_is_found_where_a_formula_is_not_marked():
    assert raw_tex("x^{2} and \\(y^{2}\\)") == ["^{"]
    assert raw_tex(_math.math("a set x}^{2} here")) == ["^{"]  # unbalanced: left as it is, and found


def test_mle_parameter_table_leaves_the_refused_K_out():
    from docs_gen.api import parameter_table

    from tmcheck.empirics.id import MLE

    t = parameter_table("tmcheck.empirics.id.MLE", MLE)
    assert "| `k` |" in t and "| `bootstrap` | `int` | `0` |" in t
    assert "| `K` |" not in t and "refused" in t and "`K`" in t


def test_api_pages_cover_every_module_once():
    from docs_gen import api

    for part in api.PARTS:
        grouped = [m for mods in api.groups(part).values() for m in mods]
        assert sorted(grouped) == api.modules(part)
    assert "api/empirics/id.md" in {api.page_path(g) for g in api.groups("empirics")}


ENV_READ = re.compile(r"""environ(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]+)["']|^ENV = ["']([A-Z][A-Z0-9_]+)["']""", re.M)


def variables_read(root: Path = ROOT) -> set[str]:
    """Every environment variable the package reads (os.environ.get / os.environ[...] / ENV = ...)."""
    out = set()
    for part in ("theory", "proofs_check", "empirics", "cli", "util"):
        for path in (root / part).rglob("*.py"):
            out |= {a or b for a, b in ENV_READ.findall(path.read_text(encoding="utf-8"))}
    return out


def undocumented(page: str, names: set[str]) -> set[str]:
    return {n for n in names if f"`{n}`" not in page}


def test_every_environment_variable_is_documented():
    page = (ROOT / "docs" / "guide" / "environment.md").read_text(encoding="utf-8")
    names = variables_read()
    assert {"TMCHECK_DATA", "TMCHECK_PROGRESS", "TMCHECK_MEMORY_BYTES"} <= names
    assert undocumented(page, names) == set()
    assert undocumented(page.replace("`TMCHECK_DATA`", "TMCHECK DATA"), names) == {"TMCHECK_DATA"}


def test_the_gallery_has_four_examples_each_with_its_script_and_page():
    from docs_gen import examples

    assert len(examples.NAMES) >= 4
    for name in examples.NAMES:
        assert examples.script(name).is_file()
        page = ROOT / "docs" / "examples" / f"{name.replace('_', '-')}.md"
        assert f"<!-- gen:examples.{name}.output -->" in page.read_text(encoding="utf-8")
        assert f"examples.{name}.output" in examples.AT_BUILD  # printed by the build, never committed


@pytest.mark.slow
def test_an_example_runs_and_a_failing_one_fails_the_build(tmp_path, monkeypatch):
    from docs_gen import GeneratorError, examples

    assert "HOLDS" in examples.output("lemma1_network")
    (tmp_path / "broken.sh").write_text("tmcheck lemma 1 --d 0\n")
    monkeypatch.setattr(examples, "EXAMPLES", tmp_path)
    with pytest.raises(GeneratorError, match="exited"):
        examples.run("broken")


# The pages the headless-browser check (.ci/browser-check.py) reads for raw TeX without marking math, and
# the README and results index that carry the same generated results table: a `^{` there fails CI.
PLAIN_PAGES = ("README.md", "docs/index.md", "docs/results/index.md", "docs/results/pretrain.md")


def _prose(markdown: str) -> str:
    return re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)


@pytest.mark.parametrize("page", PLAIN_PAGES)
def test_the_plain_pages_leave_no_raw_tex(page):
    assert raw_tex(_prose((ROOT / page).read_text(encoding="utf-8"))) == []


def test_the_results_table_rows_are_plain_text():
    from docs_gen import results

    for key, (_page, title, what) in results.EXPERIMENTS.items():
        assert raw_tex(title + " " + what) == [], key


def test_a_plain_page_with_tex_is_found():
    assert raw_tex(_prose("a size ∝ n^{d/(2β+d)} here\n```\nx^{2}\n```\n")) == ["^{"]
