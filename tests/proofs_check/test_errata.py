"""The errata (docs/theory/claims.md, block theory.errata) are generated from the full registry, name the kind of
every finding (a corrected statement as one whose corrected form holds), and are current."""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from tmcheck.proofs_check import errata
from tmcheck.proofs_check.registry import Evidence, Kind, Obligation, Outcome, Result, Unevaluable, Verdict, Witness

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = ROOT / "docs" / "theory" / "claims.md"


def _outcome(oid, kind, written, corrected=None, claim="fixed"):
    obl = Obligation(oid, "Appendix X", "claim  as\nwritten", "exact", lambda: None, "how tmcheck does it", kind)
    ws = [Witness({"x": i}, a, b) for i, (a, b) in enumerate(written)]
    cs = None if corrected is None else [Witness({"x": i}, a, b) for i, (a, b) in enumerate(corrected)]
    return Outcome(obl, Result(Evidence("a search", ws, cs, claim if cs else "", note="why"), kind), 0.0)


def test_render_lists_findings_with_their_kind():
    outs = [
        _outcome("lemma1.a", Kind.STEP, [(1, 2)]),
        _outcome("lemma1.b", Kind.STATEMENT, [(3, 2)]),
        _outcome("lemma1.c", Kind.STEP, [(3, 2)], [(1, 2)]),
        _outcome("lemma1.d", Kind.RESOURCE, [(3, 2)]),
    ]
    obl = Obligation("definitions.e", "Def. 9", "two readings", "exact", lambda: None, "", Kind.NOTATION)
    outs.append(Outcome(obl, Result(Unevaluable("a definition", "the first one"), Kind.NOTATION), 0.0))
    text = errata.render(outs)
    assert text.startswith(errata.START) and text.endswith(errata.END)
    assert "lemma1.a" not in text
    assert "**`lemma1.b`** (statement; FAILS-AS-WRITTEN), Appendix X: the statement as written does not hold." in text
    assert "**`lemma1.c`** (proof step; HOLDS-AFTER-CORRECTION)" in text and "closed by the correction" in text
    assert "**`lemma1.d`** (construction resource; FAILS-AS-WRITTEN)" in text and "the statement is not refuted" in text
    assert "  - Evidence: 1 of 1 witnesses break it; at (x = 0): 3 <= 2 is false." in text
    assert "  - Written: claim as written" in text and "  - True: fixed" in text and "  - True: why" in text
    assert "(definition or notation; NOT-EVALUABLE)" in text and "  - True: the first one" in text
    assert "5 obligations: 1 hold, 2 fail as written, 1 hold after correction, 1 are not evaluable" in text
    assert "2 are gaps in a proof" in text and "1 concern a statement as written" in text


def test_a_corrected_statement_says_the_corrected_one_holds():
    ev = Evidence("a search", [Witness({"x": 0}, 3, 2)], [Witness({"x": 0}, 1, 2)], "the fixed claim")
    res = Result(ev, Kind.STATEMENT)
    assert res.verdict is Verdict.CORRECTED and not res.gap
    assert errata._finding(res) == "the statement as written does not hold, the corrected one does"
    failed = Result(Evidence("a search", [Witness({"x": 0}, 3, 2)]), Kind.STATEMENT)
    assert errata._finding(failed) == "the statement as written does not hold"


def test_replace_section():
    doc = f"a\n{errata.START}\nold\n{errata.END}\nb\n"
    assert errata.replace_section(doc, "NEW") == "a\nNEW\nb\n"
    with pytest.raises(ValueError):
        errata.replace_section("no markers", "NEW")


def _generators():
    path = ROOT / "tools" / "docs_gen" / "theory_claims.py"  # the generators of docs/theory/claims.md
    sys.path.insert(0, str(path.parents[1]))  # it imports its helpers as docs_gen._name
    spec = importlib.util.spec_from_file_location("theory_docs_gen", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.GENERATORS


def test_render_unframed_is_the_docs_block():
    outs = [_outcome("lemma1.b", Kind.STATEMENT, [(3, 2)])]
    assert errata.START not in errata.render(outs, framed=False)
    assert errata.render(outs, framed=False) in errata.render(outs)


@pytest.mark.slow  # runs every generator or obligation (1-3 min): CI's documentation stage runs it
def test_docs_errata_are_current():
    page = CLAIMS.read_text(encoding="utf-8")
    m = re.search(r"^<!-- gen:theory.errata -->\n(.*?)^<!-- /gen:theory.errata -->$", page, re.M | re.S)
    assert m, "docs/theory/claims.md has no theory.errata block"
    stale = "the errata are stale: rebuild the docs (tools/docs.py build)"
    assert m.group(1) == _generators()["theory.errata"](), stale
