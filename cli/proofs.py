"""`tmcheck proofs`: run the obligation registry (proofs_check) section by section and print the verdicts.

One line per section as it finishes (a spinner while it runs, on a terminal), the totals and the
number of proof gaps at the end; the full evidence table only with --verbose; one JSON document and
nothing else under --json. A failing paper claim is a finding, not an error: the command exits 0
unless a check itself raises (exit 1), and 2 on bad input.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import typer

from tmcheck.cli.common import UserError, console, handle_errors, print_json, to_jsonable
from tmcheck.cli.options import JsonOpt, VerboseOpt

VERDICT_NAMES = {
    "holds": "HOLDS",
    "fails": "FAILS-AS-WRITTEN",
    "corrected": "HOLDS-AFTER-CORRECTION",
    "unevaluable": "NOT-EVALUABLE",
}
STYLE = {
    "HOLDS": "green",
    "FAILS-AS-WRITTEN": "red",
    "HOLDS-AFTER-CORRECTION": "yellow",
    "NOT-EVALUABLE": "cyan",
    "ERROR": "bold magenta",
}
LABELS = ["HOLDS", "FAILS-AS-WRITTEN", "HOLDS-AFTER-CORRECTION", "NOT-EVALUABLE", "ERROR"]


def _wanted_verdict(verdict: str) -> str | None:
    if not verdict:
        return None
    key = verdict.strip().lower()
    want = VERDICT_NAMES.get(key) or next((v for v in VERDICT_NAMES.values() if v.lower() == key), None)
    if want is None:
        raise UserError(f"unknown verdict {verdict!r}; expected holds, fails, corrected or unevaluable")
    return want


def run_registry(
    section: str = "",
    verdict: str = "",
    on_section: Callable[[str, list], None] | None = None,
    on_start: Callable[[str, int], None] | None = None,
):
    """Outcomes of the selected obligations (section prefix, verdict filter), in paper order.

    `on_start(section, n)` is called before a section runs and `on_section(section, outcomes)` after it."""
    from tmcheck.proofs_check.registry import SECTIONS, all_obligations, run

    if section and section not in SECTIONS:
        raise UserError(f"unknown section {section!r}; expected one of {', '.join(SECTIONS)}")
    want = _wanted_verdict(verdict)
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
    return {k: sum(1 for o in outs if o.label == k) for k in LABELS}


def gaps(outs) -> int:
    return sum(1 for o in outs if o.result is not None and o.result.gap)


def _plain(obj: Any) -> Any:
    """JSON-ready: Fractions as 'p/q', numpy plain; anything else unknown (sympy, mpmath) as its string."""
    obj = to_jsonable(obj)
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj if obj is None or isinstance(obj, (bool, int, float, str)) else str(obj)


def outcome_json(o) -> dict:
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
    out.update(gap=res.gap, summary=res.summary, counterexample=_plain(res.counterexample), corrected=res.corrected)
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


def _section_line(sec: str, outs: list) -> str:
    tot = totals(outs)
    parts = [f"[{STYLE[k]}]{v} {k}[/]" for k, v in tot.items() if v]
    g = gaps(outs)
    secs = sum(o.seconds for o in outs)
    return (
        f"{sec:<12} {len(outs):>3} obligations  "
        + "  ".join(parts)
        + (f"  ({g} proof gaps)" if g else "")
        + f"  {secs:.1f} s"
    )


def _table(outs):
    from rich.table import Table

    table = Table(title="proofs_check: the paper's claims", show_lines=True)
    for col in ("id", "kind", "verdict", "evidence / corrected statement", "s"):
        table.add_column(col, overflow="fold")
    for o in outs:
        text = (
            o.error
            if o.error
            else o.result.summary + (f"\n[bold]corrected:[/] {o.result.corrected}" if o.result.corrected else "")
        )
        table.add_row(
            o.obligation.id, o.obligation.kind.value, f"[{STYLE[o.label]}]{o.label}[/]", text, f"{o.seconds:.2f}"
        )
    return table


@handle_errors
def command(
    section: str = typer.Option(
        "",
        "--section",
        help="Only this section (definitions, lemma1, ..., lemma8, theorem1, theorem2, appendixB, table1).",
    ),
    verdict: str = typer.Option("", "--verdict", help="Only this verdict: holds, fails, corrected or unevaluable."),
    verbose: VerboseOpt = False,
    json_: JsonOpt = False,
) -> None:
    """Check the paper's claims (every lemma, theorem, Appendix B, Table 1); verdicts are derived from evidence."""
    _wanted_verdict(verdict)  # bad input fails before any check runs
    status = None

    def start(sec: str, n: int) -> None:
        nonlocal status
        if console.is_terminal and not json_:
            status = console.status(f"checking {sec} ({n} obligations)…")
            status.start()

    def done(sec: str, outs: list) -> None:
        if status is not None:
            status.stop()
        if not json_:
            console.print(_section_line(sec, outs), highlight=False)

    outs = run_registry(section, verdict, on_section=done, on_start=start)
    tot = totals(outs)
    if json_:
        print_json({"totals": tot, "gaps": gaps(outs), "obligations": [outcome_json(o) for o in outs]})
    else:
        if verbose:
            console.print(_table(outs))
        console.print(
            "  ".join(f"[{STYLE[k]}]{k}[/]: {v}" for k, v in tot.items()) + f"  proof gaps: {gaps(outs)}",
            highlight=False,
        )
    if tot["ERROR"]:
        raise typer.Exit(1)
