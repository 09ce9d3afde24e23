"""The mutation report's estimate of the score over all mutants from per-file samples (tools/mutation.py)."""

import importlib.util
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("mutation_tool", ROOT / "tools" / "mutation.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_files_are_weighted_by_their_mutants_not_by_their_sample():
    """File a ran in full (100 of 100, 90 detected), file b on a sample (30 of 300, 15 detected): the estimate
    is 0.25 * 0.9 + 0.75 * 0.5 = 0.6, not the pooled 105 / 130 = 0.81; only b's sample has variance,
    0.75^2 * q (1 - q) / 30 * (1 - 30/300) with q = 16/32."""
    est = _tool().stratified(
        {"a": {"mutants": 100, "ran": 100, "killed": 88, "timeout": 2}, "b": {"mutants": 300, "ran": 30, "killed": 15}}
    )
    assert est["estimate"] == pytest.approx(0.6)
    half = 1.959963984540054 * math.sqrt(0.75**2 * 0.25 / 30 * 0.9)
    assert est["ci95"] == pytest.approx([0.6 - half, 0.6 + half])
    assert est["mutants"] == 400


def test_credit_and_unsampled_files():
    tool = _tool()
    per = {"a": {"mutants": 10, "ran": 10, "killed": 8}, "b": {"mutants": 10, "ran": 10, "killed": 10}}
    assert tool.stratified(per)["estimate"] == pytest.approx(0.9)
    assert tool.stratified(per, {"a": 2})["estimate"] == pytest.approx(1.0)
    assert tool.stratified(per)["ci95"] == pytest.approx([0.9, 0.9])  # both ran in full: no sampling error
    assert tool.stratified({**per, "c": {"mutants": 5, "ran": 0}}) is None  # a stratum with no sample: unknown
    assert tool.stratified({**per, "d": {"mutants": 0, "ran": 0}})["estimate"] == pytest.approx(0.9)  # no mutants


@pytest.mark.parametrize(
    "removed, added, text",
    [
        ('raise ValueError("bad input here")', 'raise ValueError("XXbad input hereXX")', True),
        ('print(f"score {x:.3f}")', 'print(f"XXscore {x:.3f}XX")', True),
        ('note=f"the {n} runs",', 'note=f"XXthe {n} runsXX",', True),
        # issue 41: a JSON key or a shown value's rounding is an output change, never "text"
        ('"score": round(x, 3),', '"XXscoreXX": round(x, 3),', False),
        ('print(f"score {x:.3f}")', 'print(f"score {x:.4f}")', False),
        ('print(f"score {x}")', 'print(f"score {y}")', False),
        ('raise ValueError("bad")', 'raise TypeError("bad")', False),
    ],
)
def test_text_only_survivors_change_words_not_keys_or_values(removed, added, text):
    assert _tool().text_only(f"--- a\n+++ b\n-    {removed}\n+    {added}") is text


def _records(counts: dict[str, int]) -> dict:
    return {rel: {f"{rel}.m_{i}": None for i in range(n)} for rel, n in counts.items()}


def test_the_holdout_draws_every_file_in_proportion_and_is_seeded(monkeypatch):
    tool = _tool()
    files = {"theory/a.py": 900, "theory/b.py": 90, "proofs_check/c.py": 9, "proofs_check/d.py": 1}
    monkeypatch.setattr(tool, "records", lambda: _records(files))
    monkeypatch.setattr(tool, "targets", lambda _: sorted(files))
    hold = tool.draw_holdout(300, 7, "abc")
    sizes = {rel: len(v) for rel, v in hold["names"].items()}
    assert sum(sizes.values()) == hold["size"] >= 300
    assert all(sizes[rel] >= 1 for rel in files)  # every file represented, the one-mutant file too
    assert sizes["theory/a.py"] == pytest.approx(270, abs=2) and sizes["theory/b.py"] == pytest.approx(27, abs=2)
    assert hold == tool.draw_holdout(300, 7, "abc") | {"drawn": hold["drawn"]}
    assert tool.draw_holdout(300, 8, "abc")["names"] != hold["names"]
    assert all(set(v) <= set(_records(files)[rel]) for rel, v in hold["names"].items())


def test_the_holdout_score_has_its_exact_binomial_interval(monkeypatch):
    """285 killed, 5 timed out, 10 survived of 300: 290 / 300 with the Clopper-Pearson interval (scipy's exact);
    a mutant not run counts in neither; the survivors' classes come from their explanations."""
    from scipy.stats import beta

    tool = _tool()
    names = [f"m_{i}" for i in range(301)]
    codes = {n: 1 for n in names[:285]} | {n: 36 for n in names[285:290]} | {n: 0 for n in names[290:300]}
    codes[names[300]] = None
    hold = {"seed": 1, "commit": "c", "drawn": "d", "size": 301, "population": 9, "method": "m", "names": {"f": names}}
    surv = [
        {"mutant": n, "explanation": {"text": "t"} if i < 3 else {"pending": "p"}} for i, n in enumerate(names[290:300])
    ]
    results = {n: {"file": "f", "status": tool.status(c)} for n, c in codes.items() if c is not None}
    out = tool.holdout_summary(hold, results, surv)
    assert (out["ran"], out["detected"], out["not_run"]) == (300, 290, 1)
    assert out["score"] == pytest.approx(290 / 300)
    assert out["ci95"] == pytest.approx([beta.ppf(0.025, 290, 11), beta.ppf(0.975, 291, 10)])
    assert out["survivor_classes"] == {"text": 3, "pending": 7}


def test_the_holdout_resumes_from_its_kept_outcomes(monkeypatch, tmp_path):
    """mutmut's records (an ignored folder) are gone in a later sitting: the outcomes kept in the committed
    holdout_results.json still count, and one recorded now replaces a kept one."""
    tool = _tool()
    monkeypatch.setattr(tool, "RESULTS", tmp_path / "holdout_results.json")
    monkeypatch.setattr(tool, "diff", lambda n, rel: "--- a\n+++ b\n-    x = 1\n+    x = 2")
    hold = {"names": {"f": ["a", "b", "c"]}}
    tool.RESULTS.write_text('{"a": {"file": "f", "status": "killed"}, "b": {"file": "f", "status": "killed"}}')
    kept = tool.holdout_results(hold, {"f": {"a": None, "b": 0, "c": None}})
    assert kept["a"]["status"] == "killed"  # kept from an earlier sitting
    assert kept["b"]["status"] == "survived" and "diff" in kept["b"]  # recorded now: replaces the kept one
    assert "c" not in kept  # never run
