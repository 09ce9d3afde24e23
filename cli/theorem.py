"""`tmcheck theorem`: Theorem 2 (Section 2.4, proof in Appendix E.2) as one network on a manifold.

Parses its options, calls `theory.lemmas.theorem2_report.theorem2_report` and prints the report and the
verdict (`theory.check.verdict_lines`); exit 1 when the construction fails its claim, 2 on bad input.
"""

from __future__ import annotations

import typer

from tmcheck.cli.common import console, finish_construction, handle_errors, print_certificate, resource_table
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
    points: int | None = typer.Option(
        None, "--points", min=1, help="Manifold sample size for the error (default 300; 48 with --local)."
    ),
    local: bool = typer.Option(
        False,
        "--local",
        help="Never build the network: T(x) from the tokens that matter at x, with a certificate that the others "
        "contribute what they must (theory.lemmas.local_eval); for the proven N on the sphere and the torus.",
    ),
    certify: bool = typer.Option(
        False,
        "--certify",
        help="Prove sup |T - f| <= ε over the whole circle by interval arithmetic and branch and bound "
        "(circle only; the default judges a sampled maximum).",
    ),
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
    from tmcheck.theory.lemmas.theorem2_report import theorem2_local_report, theorem2_report

    if local:
        if export is not None or max_tokens is not None or certify:
            raise typer.BadParameter("--local builds no network: it takes no --export, --max-tokens or --certify")
        rep = theorem2_local_report(manifold, D, eps, target, N, not shallow, points or 48, H_f=H_f, R=R)
        _print_local(rep, json_)
        return
    rep = theorem2_report(
        manifold,
        D,
        eps,
        target,
        N,
        max_tokens,
        not shallow,
        points or 300,
        H_f=H_f,
        R=R,
        trials=trials,
        size_limit=size_limit,
        certify=certify,
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
        print_certificate(rep["sup_error"], eps, "the circle", lambda p: f"θ = {p[0]:.6g}")
    finish_construction(rep, export, json_)


def _print_local(rep: dict, json_: bool) -> None:
    """The --local report: JSON, or the resources, the error as a sampled maximum and the verdict; exit 1 on FAILS."""
    from tmcheck.cli.common import print_json

    if json_:
        print_json(rep)
    else:
        ev = rep["evaluated"]
        grid = "the proven N" if rep["proven"] else f"below the proven N = {rep['N_proven']}"
        console.print(
            f"Theorem 2 on the {rep['manifold']} in R^{rep['D']}, f = {rep['target']}: N = {rep['N']} per chart "
            f"({grid}), C_M = {rep['C_M']}, never built: l = {rep['l']}, m = {rep['m']}, L_T = {rep['L_T']}, "
            f"L_FFN = {rep['L_FFN']}, κ = {rep['kappa']:.4g} (spec); the local evaluator's partition covers "
            f"l = {ev['l']} with m = {ev['m']}, L_T = {ev['L_T']}; at most {rep['tokens_chosen_max']} tokens "
            "evaluated per point"
        )
        console.print(
            f"max |T - f| = {rep['error']:.4g} vs ε = {rep['eps']}: a sampled maximum over {rep['n_points']} manifold "
            "points (a lower bound on the sup, not a proof)"
        )
        colour = "green" if rep["ok"] else "red"
        for name, c in rep["check"]["results"].items():
            if not c["passed"]:
                console.print(f"[red]check {name} FAILS: {c['detail']}[/]", highlight=False)
        why = "" if rep["ok"] else f" ({', '.join(rep['failed'])})"
        console.print(
            f"[{colour}]verdict: {rep['verdict']}{why}: every point certified, T(x) = the claim exactly, resources "
            f"as the spec, and max |T - f| <= ε ({rep['sup_error']['kind']}: {rep['sup_error']['method']})[/]",
            highlight=False,
        )
    if not rep["ok"]:
        raise typer.Exit(1)
