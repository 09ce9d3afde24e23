"""`make demo` stage: run the proofs_check registry and print the totals by verdict (and the findings)."""

from __future__ import annotations

from pathlib import Path

from tmcheck.cli.common import console


def stage(out: Path, quick: bool) -> str:
    from rich.table import Table

    from tmcheck.cli.proofs import STYLE, run_registry, totals

    outs = run_registry()
    tot = totals(outs)
    table = Table(title="paper claims that fail as written or need a correction")
    table.add_column("id")
    table.add_column("verdict")
    for o in outs:
        if o.error or o.result.verdict.value != "HOLDS":
            lab = "ERROR" if o.error else o.result.verdict.value
            table.add_row(o.obligation.id, f"[{STYLE[lab]}]{lab}[/]")
    console.print(table)
    console.print("  ".join(f"{k}: {v}" for k, v in tot.items()))
    return f"{len(outs)} obligations: {tot['HOLDS']} hold, {tot['FAILS-AS-WRITTEN']} fail as written, {tot['HOLDS-AFTER-CORRECTION']} hold after correction, {tot['ERROR']} errors"
