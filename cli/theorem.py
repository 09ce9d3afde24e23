"""`tmcheck theorem`: Theorem 2 (Section 2.4, proof in Appendix E.2) as one network on a manifold.

Parses its options, calls `theory.lemmas.theorem2_report.theorem2_report` and prints the report and the
verdict (`theory.check.verdict_lines`); exit 1 when the construction fails its claim, 2 on bad input.
"""

from __future__ import annotations

import typer

from tmcheck.cli.common import console, finish_construction, handle_errors, resource_table
from tmcheck.cli.options import (
    ExportOpt,
    JsonOpt,
    RegistryHelp,
    SizeLimitOpt,
    TrialsOpt,
    positive_finite,
    positive_int,
)
from tmcheck.theory.construction import SIZE_LIMIT

app = typer.Typer(
    no_args_is_help=True, help="Theorem 2 (Section 2.4, Appendix E.2): Hölder functions on manifolds as one network."
)


@app.command("2", cls=RegistryHelp)
@handle_errors
def theorem2_cmd(
    manifold: str = typer.Option("circle", "--manifold", help="{manifolds:atlas} (rotated into R^D)."),
    D: int = typer.Option(3, "--D", callback=positive_int, help="Ambient dimension D."),
    eps: float = typer.Option(0.3, "--eps", help="Accuracy ε in (0, 1)."),
    target: str = typer.Option("x0", "--target", help="f as a sympy expression in x0..x{D-1} (Lipschitz, β = 1)."),
    # why kept: options declared in the signature, like id ablate's: alike in shape, each its own flag
    H_f: float = typer.Option(
        1.0,
        "--H-f",
        callback=positive_finite,
        help="Declared Lipschitz constant of f on the manifold (refuted on samples).",
    ),
    R: float = typer.Option(
        1.0, "--R", callback=positive_finite, help="Declared bound on |f| on the manifold (refuted on samples)."
    ),
    N: int | None = typer.Option(
        None, "--N", min=2, help="Grid per chart (default: the proven N of `tmcheck bound theorem2`)."
    ),
    max_tokens: int | None = typer.Option(
        None, "--max-tokens", min=1, help="Lower N until l fits (then the error is measured, not guaranteed)."
    ),
    shallow: bool = typer.Option(
        False, "--shallow-indicator", help="One-layer indicator with weight 1/Δ instead of the deep bounded one."
    ),
    # why kept: Typer reads options from each signature: this tail of aliases is lemma 1's too
    points: int = typer.Option(300, "--points", min=1, help="Manifold sample size for the error."),
    trials: TrialsOpt = 2,
    size_limit: SizeLimitOpt = SIZE_LIMIT,
    export: ExportOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Theorem 2 (Section 2.4, Appendix E.2): charts, exact projections, indicators and a Lemma 1 network per
    chart in parallel, at the proven grid by default; error split, resources against the spec, and the
    verdict (exit 1 when the construction fails its claim or the error exceeds ε).

    Example: tmcheck theorem 2 --manifold circle --D 3 --eps 0.3 --target x0
    """
    from tmcheck.theory.lemmas.theorem2_report import theorem2_report

    rep = theorem2_report(
        manifold, D, eps, target, N, max_tokens, not shallow, points, H_f=H_f, R=R, trials=trials, size_limit=size_limit
    )
    if not json_:
        console.print(
            resource_table(rep["resources"], f"Theorem 2 network, f = {target} on the {manifold} in R^{D}: resources")
        )
        console.print(
            f"atlas: C_M = {rep['C_M']} charts, r = τ/4 = {rep['r']}, at most μ = {rep['mu']} charts per point; "
            f"indicator Δ = {rep['Delta']} with {rep['L_indicator']} doubling layers"
        )
        proven = (
            "the proven N"
            if rep["proven"]
            else f"below the proven N = {rep['N_proven']}; the error is measured, not guaranteed"
        )
        console.print(
            f"N = {rep['N']} per chart ({proven}; chart constant H̃ = {rep['H_chart']:.4g}); l = {rep['l']}, m "
            f"= {rep['m']}, L_T = {rep['L_T']}"
        )
        console.print(
            f"max |T - f| = {rep['error']:.4g} on {rep['n_points']} manifold points vs ε = {eps}: "
            f"{'within' if rep['within_eps'] else 'NOT within'} ε; split: max E_n1 = {rep['E1_max']:.3g}, "
            f"E_n2 = 0 (exact projection), max E_n3 = {rep['E3_max']:.3g}; network vs claim "
            f"{rep['network_vs_claim']:.2g}"
        )
    finish_construction(rep, export, json_)
