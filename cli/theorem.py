"""`tmcheck theorem`: Theorem 2 (Section 2.4, proof in Appendix E.2) as one network on a manifold."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tmcheck.cli.common import console, handle_errors
from tmcheck.cli.lemma1 import export_and_maybe_json, table_of

app = typer.Typer(no_args_is_help=True, help="Theorem 2 (Appendix E.2): Hölder functions on manifolds as one network.")


@app.command("2")
@handle_errors
def theorem2_cmd(
    manifold: str = typer.Option("sphere", "--manifold", help="circle, sphere or torus (rotated into R^D)."),
    D: int = typer.Option(8, "--D", help="Ambient dimension D."),
    eps: float = typer.Option(0.2, "--eps", help="Accuracy ε in (0, 1)."),
    target: str = typer.Option("x0*x1", "--target", help="f as a sympy expression in x0..x{D-1} (Lipschitz, β = 1)."),
    N: Optional[int] = typer.Option(None, "--N", help="Grid per chart (default: the proven N, reduced to fit --max-tokens)."),
    max_tokens: int = typer.Option(20000, "--max-tokens", help="Largest l built when N is not given."),
    shallow: bool = typer.Option(False, "--shallow-indicator", help="One-layer indicator with weight 1/Δ instead of the deep bounded one."),
    points: int = typer.Option(300, "--points", help="Manifold sample size for the error."),
    export: Optional[Path] = typer.Option(None, "--export", help="Write the network (tmcheck-network v1)."),
    json_: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Theorem 2: charts, exact projections, indicators and a Lemma 1 network per chart in parallel; error split and resources."""
    from tmcheck.theory.lemmas.theorem2 import theorem2_report

    rep = theorem2_report(manifold, D, eps, target, N, max_tokens, not shallow, points)
    if export_and_maybe_json(rep, export, json_):
        return
    console.print(table_of(rep["resources"], f"Theorem 2 network, f = {target} on the {manifold} in R^{D}: resources"))
    console.print(
        f"atlas: C_M = {rep['C_M']} charts, r = τ/4 = {rep['r']}, at most μ = {rep['mu']} charts per point; "
        f"indicator Δ = {rep['Delta']} with {rep['L_indicator']} doubling layers"
    )
    proven = "the proven N" if rep["proven"] else f"reduced from the proven N = {rep['N_proven']} (chart Lipschitz estimate {rep['H_chart_estimate']:.3g}); the error is measured, not guaranteed"
    console.print(f"N = {rep['N']} per chart: {proven}")
    console.print(
        f"max |T - f| = {rep['error']:.4g} on {rep['n_points']} manifold points vs ε = {eps}: "
        f"{'within' if rep['within_eps'] else 'NOT within'} ε; split: max E_n1 = {rep['E1_max']:.3g}, "
        f"E_n2 = 0 (exact projection), max E_n3 = {rep['E3_max']:.3g}; network vs claim {rep['network_vs_claim']:.2g}"
    )
    if export:
        console.print(f"written to {export}")
