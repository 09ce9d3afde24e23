"""The generated blocks: filled from the generator modules present, a stale block reported (an edited
number fails `tools/docs.py check`), malformed markers and unknown generators refused, an absent module
tolerated, two modules claiming one name refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from docs_gen import GeneratorError, blocks, fill, fill_all, load_generators, targets  # noqa: E402
from helpers import ROOT, load_tool, need_mkdocs  # noqa: E402  (the helper beside this file; importlib mode)

GENS = {"n": lambda: "the number is 42", "t": lambda: "| a |\n|---|\n| 1 |"}


def test_fill_replaces_the_body_and_reports_the_change():
    text = "intro\n<!-- gen:n -->\nthe number is 41\n<!-- /gen:n -->\nend\n"
    new, changed = fill(text, GENS)
    assert changed == ["n"] and "the number is 42" in new and new.startswith("intro\n") and new.endswith("end\n")
    again, changed = fill(new, GENS)
    assert again == new and changed == []


# why kept: a table of bad inputs, one case a row: the shape of other such tables, other data
@pytest.mark.parametrize(
    "text,match",
    [
        ("<!-- gen:n -->\nx\n", "never closed"),
        ("<!-- /gen:n -->\n", "closes no open block"),
        ("<!-- gen:n -->\n<!-- gen:t -->\n<!-- /gen:t -->\n<!-- /gen:n -->\n", "inside block"),
        ("<!-- gen:zz -->\n<!-- /gen:zz -->\n", "no generator"),
    ],
)
def test_malformed_blocks_and_unknown_generators_are_refused(text, match):
    with pytest.raises(GeneratorError, match=match):
        fill(text, GENS)


def test_blocks_lists_names_in_order():
    assert blocks("<!-- gen:a -->\n<!-- /gen:a -->\n<!-- gen:b -->\n<!-- /gen:b -->\n") == ["a", "b"]


def test_modules_are_discovered_an_absent_one_is_fine_and_duplicates_are_refused(tmp_path):
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "one.py").write_text("GENERATORS = {'x': lambda: 'one'}\n")
    assert set(load_generators(tmp_path)) == {"x"}  # a second owner's module not there: nothing missing
    (tmp_path / "two.py").write_text("GENERATORS = {'y': lambda: 'two'}\n")
    assert set(load_generators(tmp_path)) == {"x", "y"}
    (tmp_path / "three.py").write_text("GENERATORS = {'x': lambda: 'again'}\n")
    with pytest.raises(GeneratorError, match="defined by both"):
        load_generators(tmp_path)
    (tmp_path / "three.py").write_text("NOTHING = 1\n")
    with pytest.raises(GeneratorError, match="no GENERATORS"):
        load_generators(tmp_path)


@pytest.mark.slow  # runs every generator or obligation (1-3 min): CI's documentation stage runs it
def test_every_committed_block_is_current():
    need_mkdocs()  # the nav generator reads mkdocs.yml with PyYAML, which the docs extra brings
    stale = [f"{f.path}: {f.changed}" for f in fill_all(ROOT) if f.changed]
    assert not stale, f"run `python tools/docs.py build`: {stale}"


@pytest.mark.slow  # runs every generator or obligation (1-3 min): CI's documentation stage runs it
def test_check_fails_on_an_edited_number_in_a_committed_block(tmp_path, capsys):
    docs = load_tool("docs")
    readme = (ROOT / "README.md").read_text()
    start = readme.index("<!-- gen:readme.results -->")
    block = readme[start : readme.index("<!-- /gen:readme.results -->")]
    digit = next(i for i, ch in enumerate(block) if ch.isdigit() and block[i - 1] == ".")
    edited = readme[: start + digit] + str((int(block[digit]) + 1) % 10) + readme[start + digit + 1 :]
    (tmp_path / "README.md").write_text(edited)
    assert any("readme.results" in s for s in docs.stale_blocks(tmp_path))
    (tmp_path / "README.md").write_text(readme)
    assert docs.stale_blocks(tmp_path) == []


def test_record_time_writes_the_machine_share_and_a_verdict(tmp_path):
    docs = load_tool("docs")
    out = tmp_path / "timings.json"
    assert docs.record_time("x", [sys.executable, "-c", "pass"], out) == 0
    import json

    rec = json.loads(out.read_text())["x"]
    assert rec["exit"] == 0 and rec["seconds"] > 0 and rec["quiet"]["verdict"] in ("quiet", "DISTURBED")
    assert 0 <= rec["quiet"]["other_cpu_share"]


def test_junit_counts(tmp_path):
    docs = load_tool("docs")
    (tmp_path / "j.xml").write_text(
        '<testsuites><testsuite time="2.5" timestamp="t"><testcase classname="a" name="x"/>'
        '<testcase classname="a" name="y"><failure/></testcase><testcase classname="a" name="z"><skipped/>'
        "</testcase></testsuite></testsuites>"
    )
    got = docs.junit_counts(tmp_path / "j.xml")
    assert (got["passed"], got["failed"], got["skipped"], got["errors"], got["seconds"]) == (1, 1, 1, 0, 2.5)


def test_long_floats_are_printed_to_digits_every_cpu_agrees_on():
    """The same evidence on two CPUs (one last-bit apart) gives one page; short numbers are kept."""
    from docs_gen._theory import machine_independent

    a = "at (seed = 0): 0.5424942334888799 == 1.3088351925685942 is false"
    b = "at (seed = 0): 0.5424942334888799 == 1.3088351925685933 is false"
    assert a != b and machine_independent(a) == machine_independent(b)
    assert machine_independent(a) == "at (seed = 0): 0.5424942335 == 1.308835193 is false"
    kept = "ε = 0.5, N = 3, κ = 2.19e+03, x = 1.25, 12345678901"
    assert machine_independent(kept) == kept
    # mutation: a difference in the 8th digit is a different number, and the page shows it
    assert machine_independent("1.3088351925685942") != machine_independent("1.3088358925685942")


# ------------------------------------------------------------------------------------ build-time blocks
def _late_gens(number: str = "4.25"):
    from docs_gen import Generators

    gens = Generators({"n": lambda: "the number is 42", "bench": lambda: f"speed-up {number}×"})
    gens.at_build = frozenset({"bench"})
    return gens


def test_a_build_time_block_commits_its_placeholder_and_a_rerun_changes_no_page():
    from docs_gen import PLACEHOLDER

    text = f"<!-- gen:bench -->\n{PLACEHOLDER}<!-- /gen:bench -->\n"
    assert fill(text, _late_gens("4.25")) == (text, [])
    assert fill(text, _late_gens("9.99")) == (text, [])  # a benchmark rerun: its JSON alone changes
    pasted = "<!-- gen:bench -->\nspeed-up 4.25×\n<!-- /gen:bench -->\n"  # mutation: numbers committed
    assert fill(pasted, _late_gens()) == (text, ["bench"])


def test_the_site_shows_the_build_time_numbers_and_leaves_the_other_blocks():
    from docs_gen import PLACEHOLDER, fill_site

    text = f"<!-- gen:n -->\nkept\n<!-- /gen:n -->\n<!-- gen:bench -->\n{PLACEHOLDER}<!-- /gen:bench -->\n"
    site = fill_site(text, _late_gens("9.99"))
    assert "speed-up 9.99×" in site and PLACEHOLDER not in site and "kept" in site


def test_the_mkdocs_hook_fills_build_time_blocks_as_a_page_renders(monkeypatch):
    from types import SimpleNamespace

    from docs_gen import PLACEHOLDER

    docs = load_tool("docs")
    monkeypatch.setattr(docs, "_site_generators", lambda: _late_gens("7.5"))
    page = SimpleNamespace(file=SimpleNamespace(src_path="speed.md"))
    docs.on_pre_build({})
    out = docs.on_page_markdown(f"<!-- gen:bench -->\n{PLACEHOLDER}<!-- /gen:bench -->\n", page, {}, None)
    assert "speed-up 7.5×" in out


def test_a_failing_build_time_generator_fails_the_check():
    from docs_gen import Generators, build_time_failures

    gens = _late_gens()
    assert build_time_failures(gens) == []
    broken = Generators({**gens, "bench": lambda: {}["missing"]})  # mutation: a benchmark file lost a key
    broken.at_build = gens.at_build
    assert "'bench'" in build_time_failures(broken)[0]


def test_at_build_must_name_the_modules_own_generators(tmp_path):
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "one.py").write_text("GENERATORS = {'x': lambda: 'one'}\nAT_BUILD = {'y'}\n")
    with pytest.raises(GeneratorError, match="AT_BUILD names"):
        load_generators(tmp_path)


def test_every_committed_build_time_block_is_the_placeholder():
    from docs_gen import PLACEHOLDER

    gens = load_generators()
    assert {"speed", "speed.targets", "speed.gpu", "dev.gpu"} <= gens.at_build
    seen = set()
    for path in targets(ROOT):  # the committed pages as they are: nothing is generated to read them
        text = path.read_text(encoding="utf-8")
        for name in blocks(text):
            if name in gens.at_build:
                seen.add(name)
                assert f"<!-- gen:{name} -->\n{PLACEHOLDER}<!-- /gen:{name} -->" in text, (path, name)
    assert seen == set(gens.at_build)  # every build-time block is on some page, so each was looked at


# ------------------------------------------------------------------------------------ one module per page
def _page_modules():
    from docs_gen import generator_modules

    out = {}
    for path in generator_modules():
        module = load_tool_module(path)
        out[path.stem] = module
    return out


def load_tool_module(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"tmcheck_docs_gen_test_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _slug(page: str) -> str:
    rel = page.removeprefix("docs/").removesuffix(".md").removesuffix("/index").removesuffix("/README")
    return rel.replace("/", "_").replace("-", "_").lower()


def test_generators_are_organised_one_module_per_page():
    """Each module is named after its (first) page and fills blocks of its own pages only: a page's
    generators are found by its name, not by who wrote them. A block may be reused on another page."""
    from docs_gen import blocks as names_in

    bad = []
    for stem, module in _page_modules().items():
        pages = getattr(module, "PAGES", ())
        if not pages or not all((ROOT / p).is_file() for p in pages):
            bad.append(f"{stem}: PAGES {pages} must name existing pages")
            continue
        slugs = {_slug(p) for p in pages}
        if stem not in slugs and not any(s.startswith(stem + "_") or s == stem for s in slugs):
            bad.append(f"{stem}: named after none of its pages {pages}")
        used = {n for p in pages for n in names_in((ROOT / p).read_text())}
        bad += [f"{stem}: {name!r} is on none of its pages" for name in module.GENERATORS if name not in used]
    assert not bad, bad


def test_the_page_rule_fails_on_a_module_named_after_its_origin(monkeypatch, tmp_path):
    origin = tmp_path / "coordinator.py"  # mutation: a module named after who wrote it
    origin.write_text("PAGES = ('docs/speed.md',)\nGENERATORS = {'speed': lambda: ''}\n")
    monkeypatch.setattr(sys.modules[__name__], "_page_modules", lambda: {"coordinator": load_tool_module(origin)})
    with pytest.raises(AssertionError, match="named after none"):
        test_generators_are_organised_one_module_per_page()
