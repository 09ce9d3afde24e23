"""The registry's machinery at the inputs its own obligations do not produce: a corrected statement (not a proof
step) in the errata, a check that crashes (its time is still reported), and the reach scan through keyword-only
defaults and through a function imported from a sibling proofs_check module."""

from __future__ import annotations

from tmcheck.proofs_check import errata, reach, registry
from tmcheck.proofs_check.registry import Evidence, Kind, Obligation, Outcome, Result, Verdict, Witness


def test_a_corrected_statement_says_the_corrected_one_holds():
    ev = Evidence("a search", [Witness({"x": 0}, 3, 2)], [Witness({"x": 0}, 1, 2)], "the fixed claim")
    res = Result(ev, Kind.STATEMENT)
    assert res.verdict is Verdict.CORRECTED and not res.gap
    assert errata._finding(res) == "the statement as written does not hold, the corrected one does"
    failed = Result(Evidence("a search", [Witness({"x": 0}, 3, 2)]), Kind.STATEMENT)
    assert errata._finding(failed) == "the statement as written does not hold"


def _crash():
    raise ValueError("boom")


def test_a_crashing_check_is_reported_with_its_time():
    obl = Obligation("lemma1.crash", "Appendix X", "a claim", "exact", _crash, "nothing", Kind.STEP)
    out = registry.run(obl)
    assert isinstance(out, Outcome) and out.result is None
    assert out.error == "ValueError: boom" and out.label == "ERROR"
    assert isinstance(out.seconds, float) and out.seconds >= 0


def test_the_scan_reads_keyword_only_defaults(tmp_path):
    """Keyword-only arguments with a default (read) and without one (nothing to read) in the same def."""
    src = tmp_path / "m.py"
    src.write_text(
        "from tmcheck.theory.bounds import alpha_D, alpha_N\n\n"
        "def check(*, points=alpha_D(1, 1), n):\n    return points + n\n\n"
        "def bare(*, n):\n    return alpha_N(n, 1)\n",
        encoding="utf-8",
    )
    assert reach.file_reach(src, "check") == {"tmcheck.theory.bounds.alpha_D"}
    assert reach.file_reach(src, "bare") == {"tmcheck.theory.bounds.alpha_N"}


def test_the_scan_follows_a_function_imported_from_a_sibling(tmp_path):
    """`from tmcheck.proofs_check.lemma2 import ffn_all_kappa`: the scan follows that function into lemma2, where
    it runs tmcheck's exact backend."""
    src = tmp_path / "m.py"
    src.write_text(
        "from tmcheck.proofs_check.lemma2 import ffn_all_kappa\n\n"
        "def check(k):\n    return ffn_all_kappa([1, 1], k, k)\n",
        encoding="utf-8",
    )
    found = reach.file_reach(src, "check")
    assert "tmcheck.theory.backends.run_blocks" in found
    assert found == reach.reach("tmcheck.proofs_check.lemma2", "ffn_all_kappa")
