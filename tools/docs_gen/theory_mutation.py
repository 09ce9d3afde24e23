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
