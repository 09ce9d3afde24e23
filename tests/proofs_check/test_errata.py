"""The README's errata section is generated from the full registry and must not be stale."""

from pathlib import Path

import pytest

from tmcheck.proofs_check import errata
from tmcheck.proofs_check.registry import Obligation, Outcome, Result, Verdict

README = Path(__file__).resolve().parents[2] / "README.md"


def _outcome(oid, verdict, corrected=None):
    obl = Obligation(oid, "Appendix X", "claim  as\nwritten", "exact", lambda: None, "how tmcheck does it")
    res = Result(verdict, "evidence", counterexample=None if verdict is Verdict.HOLDS else {"x": 1}, corrected=corrected)
    return Outcome(obl, res, 0.0)


def test_render_lists_findings_only():
    text = errata.render([_outcome("lemma1.a", Verdict.HOLDS), _outcome("lemma1.b", Verdict.FAILS), _outcome("lemma1.c", Verdict.CORRECTED, "fixed")])
    assert text.startswith(errata.START) and text.endswith(errata.END)
    assert "lemma1.a" not in text
    assert "**`lemma1.b`** (FAILS-AS-WRITTEN), Appendix X." in text and "  - True: evidence" in text
    assert "  - Written: claim as written" in text and "  - True: fixed" in text
    assert "3 obligations: 1 hold, 1 fail as written, 1 hold after correction." in text


def test_replace_section():
    doc = f"a\n{errata.START}\nold\n{errata.END}\nb\n"
    assert errata.replace_section(doc, "NEW") == "a\nNEW\nb\n"
    with pytest.raises(ValueError):
        errata.replace_section("no markers", "NEW")


def test_readme_errata_is_current():
    readme = README.read_text(encoding="utf-8")
    assert errata.current_section(readme) == errata.generate(), (
        "README errata are stale: python -m tmcheck.proofs_check.errata --write README.md"
    )
