"""Selecting, running and counting obligations: what `tmcheck proofs`, the demo and the errata report (the
paper's claims, all sections; proofs_check/registry.py holds them).

`run_selected` runs the obligations of a section (or all) in paper order, section by section, and keeps those
with a verdict; `totals` and `gaps` count outcomes; `outcome_json` is one obligation's machine-readable record.
"""

from __future__ import annotations

from collections.abc import Callable

from tmcheck.proofs_check.registry import SECTIONS, Outcome, Verdict, all_obligations, run
from tmcheck.util.jsonable import plain

# the --verdict filter's words
VERDICT_NAMES = {
    "holds": Verdict.HOLDS.value,
    "fails": Verdict.FAILS.value,
    "corrected": Verdict.CORRECTED.value,
    "unevaluable": Verdict.UNEVALUABLE.value,
}
LABELS = [v.value for v in Verdict] + ["ERROR"]
# how each label is shown on a terminal (rich style names)
STYLE = {
    Verdict.HOLDS.value: "green",
    Verdict.FAILS.value: "red",
    Verdict.CORRECTED.value: "yellow",
    Verdict.UNEVALUABLE.value: "cyan",
    "ERROR": "bold magenta",
}


class SelectionError(ValueError):
    """An unknown section or verdict word."""


def wanted_verdict(verdict: str) -> str | None:
    """The verdict label a --verdict word selects (holds, fails, corrected, unevaluable, or a label), or None."""
    if not verdict:
        return None
    key = verdict.strip().lower()
    want = VERDICT_NAMES.get(key) or next((v for v in VERDICT_NAMES.values() if v.lower() == key), None)
    if want is None:
        raise SelectionError(f"unknown verdict {verdict!r}; expected holds, fails, corrected or unevaluable")
    return want


def run_selected(
    section: str = "",
    verdict: str = "",
    on_section: Callable[[str, list], None] | None = None,
    on_start: Callable[[str, int], None] | None = None,
) -> list[Outcome]:
    """Outcomes of the selected obligations (section prefix, verdict filter), in paper order.

    `on_start(section, n)` is called before a section runs and `on_section(section, outcomes)` after it."""
    if section and section not in SECTIONS:
        raise SelectionError(f"unknown section {section!r}; expected one of {', '.join(SECTIONS)}")
    want = wanted_verdict(verdict)
    obls = [o for o in all_obligations() if not section or o.section == section]
    outs = []
    for sec in SECTIONS:
        mine = [o for o in obls if o.section == sec]
        if not mine:
            continue
        if on_start:
            on_start(sec, len(mine))
        done = [run(o) for o in mine]
        if on_section:
            on_section(sec, done)
        outs += done
    if want:
        outs = [o for o in outs if o.error or o.result.verdict.value == want]
    return outs


def totals(outs) -> dict[str, int]:
    """Outcomes per label (the four verdicts and ERROR)."""
    return {k: sum(1 for o in outs if o.label == k) for k in LABELS}


def gaps(outs) -> int:
    """Findings about a proof step or a construction resource: gaps in a proof, the statement not refuted."""
    return sum(1 for o in outs if o.result is not None and o.result.gap)


def refuted(outs) -> int:
    """Findings about a statement as written."""
    return sum(
        1
        for o in outs
        if o.result is not None and o.result.verdict is not Verdict.HOLDS and o.result.kind.value == "statement"
    )


def outcome_json(o: Outcome) -> dict:
    """One obligation's record: id, location, claim, kind, method, verdict, time, and the evidence's summary."""
    ob = o.obligation
    out = {
        "id": ob.id,
        "location": ob.location,
        "claim": ob.claim,
        "kind": ob.kind.value,
        "method": ob.method,
        "implemented_as": ob.implemented_as,
        "verdict": o.label,
        "seconds": round(o.seconds, 4),
    }
    if o.error:
        return {**out, "error": o.error}
    res, ev = o.result, o.result.evidence
    out.update(gap=res.gap, summary=res.summary, counterexample=plain(res.counterexample), corrected=res.corrected)
    if res.searched:
        out["evidence"] = {
            "domain": ev.domain,
            "searched": res.searched,
            "broken": len(res.broken),
            "corrected_claim": ev.corrected_claim or None,
            "corrected_broken": None if ev.corrected is None else sum(not w.holds for w in ev.corrected),
            "note": ev.note,
        }
    else:
        out["evidence"] = {"reason": ev.reason, "reading": ev.reading}
    return out
