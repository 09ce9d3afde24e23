"""`tmcheck proofs`: run the obligation registry (proofs_check) and print verdicts with totals.

A failing paper claim is a finding, not an error: the command exits 0 unless a check itself raises
(exit 1), and 2 on bad input.
"""

from __future__ import annotations

import typer

from tmcheck.cli.common import UserError, console, handle_errors, print_json

VERDICT_NAMES = {"holds": "HOLDS", "fails": "FAILS-AS-WRITTEN", "corrected": "HOLDS-AFTER-CORRECTION"}
STYLE = {"HOLDS": "green", "FAILS-AS-WRITTEN": "red", "HOLDS-AFTER-CORRECTION": "yellow", "ERROR": "bold magenta"}


def run_registry(section: str = "", verdict: str = ""):
    """Outcomes of the selected obligations (section prefix, verdict filter), in paper order."""
    from tmcheck.proofs_check.registry import SECTIONS, all_obligations, run

    if section and section not in SECTIONS:
        raise UserError(f"unknown section {section!r}; expected one of {', '.join(SECTIONS)}")
    want = None
    if verdict:
        key = verdict.strip().lower()
        want = VERDICT_NAMES.get(key) or next((v for v in VERDICT_NAMES.values() if v.lower() == key), None)
        if want is None:
            raise UserError(f"unknown verdict {verdict!r}; expected holds, fails or corrected")
    obls = [o for o in all_obligations() if not section or o.section == section]
    outs = [run(o) for o in obls]
    if want:
        outs = [o for o in outs if o.error or o.result.verdict.value == want]
    return outs


def _label(out) -> str:
    return "ERROR" if out.error else out.result.verdict.value


def totals(outs) -> dict[str, int]:
    keys = ["HOLDS", "FAILS-AS-WRITTEN", "HOLDS-AFTER-CORRECTION", "ERROR"]
    return {k: sum(1 for o in outs if _label(o) == k) for k in keys}


@handle_errors
def command(
    section: str = typer.Option("", "--section", help="Only this section (definitions, lemma1, ..., lemma8, theorem1, theorem2, appendixB, table1)."),
    verdict: str = typer.Option("", "--verdict", help="Only this verdict: holds, fails or corrected."),
    json_: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Check the paper's claims (every lemma, theorem, Appendix B, Table 1) and print each verdict."""
    from rich.table import Table

    from tmcheck.cli.common import to_jsonable

    outs = run_registry(section, verdict)
    tot = totals(outs)
    if json_:
        print_json(
            {
                "totals": tot,
                "obligations": [
                    {
                        "id": o.obligation.id,
                        "location": o.obligation.location,
                        "claim": o.obligation.claim,
                        "method": o.obligation.method,
                        "implemented_as": o.obligation.implemented_as,
                        "verdict": _label(o),
                        "seconds": round(o.seconds, 4),
                        **(
                            {"error": o.error}
                            if o.error
                            else {
                                "evidence": o.result.evidence,
                                "counterexample": to_jsonable(o.result.counterexample),
                                "corrected": o.result.corrected,
                            }
                        ),
                    }
                    for o in outs
                ],
            }
        )
    else:
        table = Table(title="proofs_check: the paper's claims", show_lines=True)
        for col in ("id", "verdict", "method", "evidence / corrected statement", "s"):
            table.add_column(col, overflow="fold")
        for o in outs:
            lab = _label(o)
            text = o.error if o.error else (o.result.evidence + (f"\n[bold]corrected:[/] {o.result.corrected}" if o.result.corrected else ""))
            table.add_row(o.obligation.id, f"[{STYLE[lab]}]{lab}[/]", o.obligation.method, text, f"{o.seconds:.2f}")
        console.print(table)
        console.print("  ".join(f"[{STYLE[k]}]{k}[/]: {v}" for k, v in tot.items()))
    if tot["ERROR"]:
        raise typer.Exit(1)
