"""`tmcheck lemma 1`: Lemma 1 (Section 2.4, proof in Appendix E.1) as one network, built, measured, exported.

Registered on the `tmcheck lemma` group by cli/lemma.py (`register(app)`); a thin wrapper over
`theory.lemmas.lemma1.lemma1_report`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from tmcheck.cli.common import UserError, console, handle_errors, print_json
from tmcheck.theory import netfile


def table_of(rows: list[dict], title: str) -> Table:
    t = Table(title=title)
    for c in ("quantity", "paper formula", "formula value", "measured", "ratio"):
        t.add_column(c, justify="left" if c in ("quantity", "paper formula") else "right")
    for r in rows:
        t.add_row(r["quantity"], r["formula"], f"{r['value']:.4g}", f"{r['measured']:.4g}", f"{r['ratio']:.3g}")
    return t


def export_and_maybe_json(rep: dict, export, json_: bool) -> bool:
    """Write rep's network if asked; print rep (without its objects) as JSON if asked. True if printed."""
    if export is not None:
        netfile.save(rep["network"], export)
    if json_:
        out = {k: v for k, v in rep.items() if k not in ("network", "spec")}
        out["exported"] = str(export) if export else None
        print_json(out)
    return json_


def register(app: typer.Typer) -> None:
    @app.command("1")
    @handle_errors
    def lemma1_cmd(
        d: int = typer.Option(2, "--d", help="Input dimension d (f on [0,1]^d)."),
        eps: float = typer.Option(0.1, "--eps", help="Accuracy ε in (0, 1)."),
        target: str = typer.Option("sin(3*x0)*x1", "--target", help="f as a sympy expression in x0..x{d-1}."),
        beta: float = typer.Option(1.0, "--beta", help="Hölder exponent β in (0, 1]."),
        hf: float = typer.Option(3.0, "--hf", help="Declared Hölder constant H_f."),
        R: Optional[float] = typer.Option(None, "--R", help="Declared bound on |f| (default: max |f_n|)."),
        grid: str = typer.Option("tight", "--grid", help="'paper' (N = d(2^d H_f/ε)^{1/β}+1) or 'tight' (corrected analysis)."),
        N: Optional[int] = typer.Option(None, "--N", help="Override the grid size (the bound is then reported for it)."),
        exact: bool = typer.Option(False, "--exact/--float", help="Evaluate exactly (checks T = f̂ with ==) or in float64."),
        points: int = typer.Option(2000, "--points", help="Size of the dense sample (exact: at most 200)."),
        export: Optional[Path] = typer.Option(None, "--export", help="Write the network (tmcheck-network v1)."),
        json_: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ) -> None:
        """Lemma 1 (Appendix E.1): one transformer computing f̂ = Σ f_n φ_n on [0,1]^d; error vs ε and resources vs the formulas."""
        from tmcheck.theory.lemmas.lemma1 import lemma1_report

        if grid not in ("paper", "tight"):
            raise UserError(f"--grid must be 'paper' or 'tight', got {grid!r}")
        rep = lemma1_report(target, d, eps, beta, hf, R, grid, N, "exact" if exact else "float64", points)
        if export_and_maybe_json(rep, export, json_):
            return
        e = rep["error"]
        console.print(table_of(rep["resources"], f"Lemma 1 network for f = {target} on [0,1]^{d}: resources"))
        console.print(
            f"grid {grid}: N = {rep['N']} (paper's N = {rep['paper_N']}); bound H_f(2√d/3(N-1))^β = {rep['tight_bound']:.4g}, "
            f"paper's bound {rep['paper_bound']:.4g}"
        )
        exact_note = f"; T = f̂ exactly at all {e['n_points']} rational points" if e["exact_mismatches"] == 0 else ""
        console.print(
            f"max |T - f| = {e['max_error']:.4g} on {e['n_points']} points ({e['backend']}) vs ε = {eps}: "
            f"{'within' if rep['within_eps'] else 'NOT within'} ε{exact_note}"
        )
        grow = [g for g in rep["growth_with_d"] if g["grid"] == grid]
        console.print(
            f"growth with d at ε = {eps} ({grid} grid): l/(dε^(-d/β)) = "
            + ", ".join(f"d={g['d']}: {g['ratio_l']:.3g}" for g in grow)
            + " (Lemma 1 says this factor depends on H_f only)"
        )
        if e["exact_mismatches"]:
            console.print(f"[red]{e['exact_mismatches']} points where T != f̂[/]")
        if export:
            console.print(f"written to {export}")
