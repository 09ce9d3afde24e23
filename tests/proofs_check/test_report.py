"""proofs_check/report.py (selection, counts, JSON records), errata.main, Witness.as_dict and registry.run's outcome
of a check that crashes, on obligations made here (the registry's own are run by test_registry_verdicts.py)."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from tmcheck.proofs_check import errata, registry, report
from tmcheck.proofs_check.registry import Evidence, Kind, Obligation, Outcome, Result, Unevaluable, Verdict, Witness


def _obl(oid, kind=Kind.STEP, check=lambda: None):
    return Obligation(oid, "Appendix X", "a claim", "exact", check, "how tmcheck does it", kind)


def _holds():
    return Evidence("d", [Witness({"x": 1}, 1, 2)])


def _fails():
    return Evidence("d", [Witness({"x": 1}, 1, 2), Witness({"x": 2}, 3, 2)], note="n")


def _corrected():
    ws = [Witness({"x": 1}, 3, 2)]
    return Evidence("d", ws, [Witness({"x": 1}, 1, 2)], "fixed")


def _unevaluable():
    return Unevaluable("why", "the reading")


def _boom():
    raise RuntimeError("broken check")


@pytest.mark.parametrize(
    "word,label",
    [
        ("holds", "HOLDS"),
        ("FAILS", "FAILS-AS-WRITTEN"),
        (" corrected ", "HOLDS-AFTER-CORRECTION"),
        ("unevaluable", "NOT-EVALUABLE"),
        ("fails-as-written", "FAILS-AS-WRITTEN"),
        ("holds-after-correction", "HOLDS-AFTER-CORRECTION"),
    ],
)
def test_wanted_verdict(word, label):
    assert report.wanted_verdict(word) == label


def test_wanted_verdict_empty_and_unknown():
    assert report.wanted_verdict("") is None
    with pytest.raises(report.SelectionError, match="unknown verdict 'maybe'; expected holds, fails"):
        report.wanted_verdict("maybe")


@pytest.fixture
def fake_registry(monkeypatch):
    obls = [
        _obl("lemma3.b", check=_fails),
        _obl("definitions.a", Kind.NOTATION, check=_unevaluable),
        _obl("lemma3.a", Kind.STATEMENT, check=_holds),
        _obl("theorem1.c", Kind.RESOURCE, check=_corrected),
        _obl("theorem1.d", check=_boom),
    ]
    monkeypatch.setattr(report, "all_obligations", lambda: obls)
    return obls


def test_run_selected_in_paper_order_with_callbacks(fake_registry):
    started, finished = [], []
    outs = report.run_selected(on_start=lambda s, n: started.append((s, n)), on_section=lambda s, o: finished.append(s))
    assert [o.obligation.id for o in outs] == ["definitions.a", "lemma3.b", "lemma3.a", "theorem1.c", "theorem1.d"]
    assert started == [("definitions", 1), ("lemma3", 2), ("theorem1", 2)]
    assert finished == ["definitions", "lemma3", "theorem1"]
    assert report.totals(outs) == {
        "HOLDS": 1,
        "FAILS-AS-WRITTEN": 1,
        "HOLDS-AFTER-CORRECTION": 1,
        "NOT-EVALUABLE": 1,
        "ERROR": 1,
    }
    assert report.gaps(outs) == 2  # the failing step and the corrected resource
    assert report.refuted(outs) == 0
    assert outs[-1].error == "RuntimeError: broken check"


def test_a_crashing_check_is_reported_with_its_time():
    out = registry.run(_obl("lemma1.crash", check=_boom))
    assert isinstance(out, Outcome) and out.result is None
    assert out.error == "RuntimeError: broken check" and out.label == "ERROR"
    assert isinstance(out.seconds, float) and out.seconds >= 0


def test_run_selected_section_and_verdict(fake_registry):
    assert [o.obligation.id for o in report.run_selected("lemma3")] == ["lemma3.b", "lemma3.a"]
    # the verdict filter keeps errors (never hidden)
    assert [o.obligation.id for o in report.run_selected(verdict="holds")] == ["lemma3.a", "theorem1.d"]
    assert [o.obligation.id for o in report.run_selected("lemma3", "fails")] == ["lemma3.b"]
    assert report.run_selected("lemma3", "corrected") == []
    with pytest.raises(report.SelectionError, match="unknown section 'lemma9'; expected one of definitions, lemma1"):
        report.run_selected("lemma9")
    with pytest.raises(report.SelectionError):
        report.run_selected("lemma3", "nope")


def test_refuted_counts_statements_only():
    outs = [
        Outcome(_obl("a.x", Kind.STATEMENT), Result(_fails(), Kind.STATEMENT), 0.0),
        Outcome(_obl("a.y", Kind.STATEMENT), Result(_corrected(), Kind.STATEMENT), 0.0),
        Outcome(_obl("a.z", Kind.STATEMENT), Result(_holds(), Kind.STATEMENT), 0.0),
        Outcome(_obl("a.w", Kind.STEP), Result(_fails(), Kind.STEP), 0.0),
        Outcome(_obl("a.v", Kind.STEP), None, 0.0, error="E"),
    ]
    assert report.refuted(outs) == 2 and report.gaps(outs) == 1


def test_plain():
    assert report.plain(Fraction(3, 4)) == "3/4"
    assert report.plain({1: (Fraction(1, 2), [np.float64(2.5)])}) == {"1": ["1/2", [2.5]]}
    assert report.plain(np.array([[1, 2]])) == [[1, 2]] and type(report.plain(np.int64(3))) is int
    assert report.plain(float("nan")) == "nan" and report.plain(float("inf")) == "inf"
    assert report.plain(float("-inf")) == "-inf" and report.plain(1.5) == 1.5
    assert report.plain(None) is None and report.plain(True) is True and report.plain("s") == "s"
    assert report.plain(7) == 7 and report.plain(complex(1, 2)) == "(1+2j)"
    json.dumps(report.plain({"a": [Fraction(1, 3), np.nan, {2: np.arange(2)}]}))


def test_outcome_json_evidence():
    o = Outcome(_obl("lemma3.b"), Result(_fails(), Kind.STEP), 0.123456)
    j = report.outcome_json(o)
    assert j == {
        "id": "lemma3.b",
        "location": "Appendix X",
        "claim": "a claim",
        "kind": "proof step",
        "method": "exact",
        "implemented_as": "how tmcheck does it",
        "verdict": "FAILS-AS-WRITTEN",
        "seconds": 0.1235,
        "gap": True,
        "summary": o.result.summary,
        "counterexample": {"at": {"x": 2}, "lhs": 3, "rel": "<=", "rhs": 2, "holds": False},
        "corrected": None,
        "evidence": {
            "domain": "d",
            "searched": 2,
            "broken": 1,
            "corrected_claim": None,
            "corrected_broken": None,
            "note": "n",
        },
    }
    c = report.outcome_json(Outcome(_obl("x.c", Kind.RESOURCE), Result(_corrected(), Kind.RESOURCE), 0.0))
    assert c["evidence"]["corrected_claim"] == "fixed" and c["evidence"]["corrected_broken"] == 0
    assert c["corrected"] == "fixed" and c["verdict"] == Verdict.CORRECTED.value
    bad = Evidence("d", [Witness({"x": 1}, 3, 2)], [Witness({"x": 1}, 3, 2)], "still wrong")
    assert report.outcome_json(Outcome(_obl("x.f"), Result(bad), 0.0))["evidence"]["corrected_broken"] == 1
    u = report.outcome_json(Outcome(_obl("x.u", Kind.NOTATION), Result(_unevaluable(), Kind.NOTATION), 0.0))
    assert u["evidence"] == {"reason": "why", "reading": "the reading"} and u["counterexample"] is None
    e = report.outcome_json(Outcome(_obl("x.e"), None, 1.0, error="RuntimeError: x"))
    assert e["error"] == "RuntimeError: x" and e["verdict"] == "ERROR" and "evidence" not in e
    json.dumps(j)


def test_witness_as_dict():
    w = Witness({"d": 2}, Fraction(1, 2), 1, "<")
    assert w.as_dict() == {"at": {"d": 2}, "lhs": Fraction(1, 2), "rel": "<", "rhs": 1, "holds": True}
    assert Witness({}, 2, 1, "<").as_dict()["holds"] is False


def test_errata_main_write_and_check(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(errata, "generate", lambda: f"{errata.START}\nNEW\n{errata.END}")
    doc = tmp_path / "README.md"
    doc.write_text(f"top\n{errata.START}\nold\n{errata.END}\nbottom\n", encoding="utf-8")
    assert errata.current_section(doc.read_text()) == f"{errata.START}\nold\n{errata.END}"
    assert errata.main(["--check", str(doc)]) == 1
    assert "errata section is stale; run python -m tmcheck.proofs_check.errata --write" in capsys.readouterr().err
    assert errata.main(["--write", str(doc)]) == 0
    assert doc.read_text() == f"top\n{errata.START}\nNEW\n{errata.END}\nbottom\n"
    assert errata.main(["--check", str(doc)]) == 0 and capsys.readouterr().err == ""
    with pytest.raises(SystemExit):
        errata.main([])


def test_errata_generate_renders_every_obligation(monkeypatch):
    obls = [_obl("lemma3.b", check=_fails), _obl("lemma3.a", Kind.STATEMENT, check=_holds)]
    monkeypatch.setattr(errata, "all_obligations", lambda: obls)
    text = errata.generate()
    assert text.startswith(errata.START) and "lemma3.b" in text and "2 obligations" in text


def test_on_section_gets_the_outcomes(fake_registry):
    got = {}
    report.run_selected("lemma3", on_section=lambda s, outs: got.update({s: [o.obligation.id for o in outs]}))
    assert got == {"lemma3": ["lemma3.b", "lemma3.a"]}


def test_errata_markers_once_each():
    one = f"a{errata.START}x{errata.END}b"
    assert errata.current_section(one) == f"{errata.START}x{errata.END}"
    for bad in (f"{one}{errata.START}", f"{one}{errata.END}", f"a{errata.END}x{errata.START}b", "none"):
        with pytest.raises(ValueError, match="once each"):
            errata.current_section(bad)
        with pytest.raises(ValueError, match="once each"):
            errata.replace_section(bad, "S")


def test_errata_help(capsys):
    with pytest.raises(SystemExit):
        errata.main(["--help"])
    out = capsys.readouterr().out
    assert errata.__doc__.splitlines()[0] in " ".join(out.split())
    flat = " ".join(out.split())
    assert "--write README regenerate the errata section in place --check README exit 1 if the errata" in flat
    assert flat.endswith("exit 1 if the errata section is stale")


def test_errata_fallback_words():
    obl = Obligation("lemma3.q", "Appendix X", "a claim", "exact", lambda: None, "", Kind.STATEMENT)
    out = Outcome(obl, Result(Evidence("d", [Witness({"x": 1}, 3, 2)]), Kind.STATEMENT), 0.0)
    text = errata.render([out])
    assert "  - True: no corrected claim" in text and "  - tmcheck: no implementation depends on it." in text
