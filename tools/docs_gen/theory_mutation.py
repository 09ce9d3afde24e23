"""Mutation testing (docs/theory/mutation.md), from mutation/report.json."""

from __future__ import annotations

import json
from collections.abc import Callable

from docs_gen._common import table
from docs_gen._theory import MUTATION

PAGES = ("docs/theory/mutation.md",)


def mutation() -> str:
    """The mutation run recorded in mutation/report.json (tools/mutation.py)."""
    if not MUTATION.is_file():
        return "No mutation run is recorded yet (`make mutation` writes mutation/report.json).\n"
    rep = json.loads(MUTATION.read_text(encoding="utf-8"))

    def pct(x):
        return "–" if x is None else f"{100 * x:.1f}%"

    rows = []
    for f, c in rep["per_file"].items():
        rows.append(
            [
                f"`{f}`",
                c["mutants"],
                c["ran"],
                c.get("killed", 0),
                c.get("timeout", 0),
                c.get("survived", 0),
                c.get("no tests", 0),
                pct(c["score"]),
            ]
        )
    if rep.get("holdout"):
        return _holdout(rep, pct)
    pending = sum(1 for s in rep["survivors"] if "pending" in s["explanation"])
    equivalent = sum(1 for s in rep["survivors"] if "equivalent" in s["explanation"])
    text = sum(1 for s in rep["survivors"] if "text" in s["explanation"])
    return (
        f"{rep['tool']}, recorded {rep['generated']}: {rep['ran']} of {rep['mutants']} mutants ran "
        f"({rep['not_run']} not yet: the per-file rows are estimates over the mutants that ran, a seeded sample "
        f"for most files), {rep['killed']} killed and {rep['timeout']} timed out; score {pct(rep['score'])} "
        f"({pct(rep['score_killed_only'])} counting killed ones only, "
        f"{pct(rep['score_with_explained_equivalents'])} counting the survivors explained as equivalent). "
        f"{len(rep['survivors'])} survivors: {equivalent} explained as equivalent, {text} changing only the words "
        f"of a message, {pending} not yet explained (mutation/SURVIVORS.md lists each with its diff)."
        + _estimate(rep, pct)
        + "\n\n"
        + table(["file", "mutants", "ran", "killed", "timeout", "survived", "no tests", "score"], rows)
        + "\n"
    )


# the survivor classes of mutation/explanations.json in words (a class not listed is printed as its key)
CLASS_WORDS = {
    "equivalent": "equivalent (no output can change)",
    "test_added": "killed by a test written after the sample ran (still counted as surviving here)",
    "pending": "not yet explained",
    "text": "changing only the words of a message",
}


def _holdout(rep: dict, pct) -> str:
    """The held-out sample first (its score, interval and survivors), then the earlier pooled figures."""
    h = rep["holdout"]
    lo, hi = h["ci95"] or (None, None)
    classes = ", ".join(f"{n} {CLASS_WORDS.get(k, k)}" for k, n in sorted(h["survivor_classes"].items())) or "none"
    words = (
        f"**Held-out sample** ({rep['tool']}): {h['size']} of the {h['population']} mutants of every file of "
        f"`theory/` and `proofs_check/` at commit `{h['commit'][:10]}`, drawn on {h['drawn']} (seed {h['seed']}; "
        f"{h['method']}) and recorded in mutation/holdout.json before any of them ran. {h['ran']} ran"
        + (f" ({h['not_run']} not yet)" if h["not_run"] else "")
        + f" over {h['files_with_a_run']} of {h['files']} files; {h['detected']} detected (killed or timed out): "
        f"score {pct(h['score'])}, {h['interval']} {pct(lo)} to {pct(hi)}"
        + (
            " (**partial**: mutmut runs the mutants whose tests are quickest first, so the part that ran is not a "
            "uniform subsample of the draw, and the score is final only when every drawn mutant has run; "
            "`python tools/mutation.py --holdout "
            f"{h['size']} --seed {h['seed']} --commit {h['commit'][:10]}` resumes it)"
            if h["not_run"]
            else ""
        )
        + f". Its survivors by class: {classes} "
        "(mutation/SURVIVORS.md gives each with its diff; a survivor that changes a JSON key or a shown value is "
        "never counted as text)."
    )
    e = rep.get("earlier")
    if e and e.get("ran"):
        words += (
            f" Beside it, the pooled score of the earlier runs ({e['tool']}, {e['generated']}, fewer target files), "
            f"over the {e['ran']} mutants drawn while tests were being added against them: {pct(e['score'])}, "
            "biased upward for that reason."
        )
    rows = [
        [f"`{f}`", c["drawn"], c.get("killed", 0), c.get("timeout", 0), c.get("survived", 0), c.get("no tests", 0)]
        + [c.get("not run", 0)]
        for f, c in h["per_file"].items()
    ]
    head = ["file", "drawn", "killed", "timeout", "survived", "no tests", "not run"]
    return words + "\n\n" + table(head, rows) + "\n"


def _estimate(rep: dict, pct) -> str:
    """The stratified estimate of the score over all mutants (tools/mutation.py `stratified`), in words."""
    est = rep.get("estimated_score_all_mutants")
    if not est:
        return ""
    eq = rep.get("estimated_score_all_mutants_with_explained_equivalents") or est
    return (
        f" Weighting each file's sample by its number of mutants, the score of all {est['mutants']} mutants is "
        f"estimated at {pct(est['estimate'])} (95% interval {pct(est['ci95'][0])} to {pct(est['ci95'][1])}), "
        f"{pct(eq['estimate'])} ({pct(eq['ci95'][0])} to {pct(eq['ci95'][1])}) counting the explained equivalents "
        f"as killed; method: {est['method']}."
    )


GENERATORS: dict[str, Callable[[], str]] = {
    "theory.mutation": mutation,
}
