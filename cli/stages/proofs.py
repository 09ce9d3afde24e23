"""`make demo` stage: run the proofs_check registry and print the totals by verdict, the gaps, and the findings."""

from __future__ import annotations

from pathlib import Path

from tmcheck.cli.common import console


def stage(out: Path, quick: bool) -> str:
    from rich.table import Table

    from tmcheck.proofs_check.report import STYLE, gaps, run_selected, totals

    outs = run_selected()
    tot, g = totals(outs), gaps(outs)
    table = Table(title="paper claims that fail as written, need a correction or cannot be evaluated")
    for col in ("id", "kind", "verdict"):
        table.add_column(col)
    for o in outs:
        if o.label != "HOLDS":
            table.add_row(o.obligation.id, o.obligation.kind.value, f"[{STYLE[o.label]}]{o.label}[/]")
    console.print(table)
    console.print("  ".join(f"{k}: {v}" for k, v in tot.items()) + f"  proof gaps: {g}")
    return (
        f"{len(outs)} obligations: {tot['HOLDS']} hold, {tot['FAILS-AS-WRITTEN']} fail as written, "
        f"{tot['HOLDS-AFTER-CORRECTION']} hold after correction, {tot['NOT-EVALUABLE']} not evaluable, "
        f"{g} proof gaps, {tot['ERROR']} errors"
    )
