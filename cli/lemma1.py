"""`tmcheck lemma 1`: Lemma 1 (Section 2.4, proof in Appendix E.1) as one network, built, measured, exported.

Registered on the `tmcheck lemma` group by cli/lemma.py (`register(app)`); a thin wrapper over
`theory.lemmas.lemma1.lemma1_report`, which also derives the verdict (`theory.check.verify`).
"""

from __future__ import annotations


import typer
from rich.table import Table

from tmcheck.cli.common import UserError, console, handle_errors, print_json
from tmcheck.cli.options import BetaOpt, ExactOpt, ExportOpt, JsonOpt, TrialsOpt, positive_int
from tmcheck.theory import netfile
from tmcheck.theory.spec import SIZE_LIMIT


def table_of(rows: list[dict], title: str) -> Table:
    t = Table(title=title)
    for c in ("quantity", "formula", "formula value", "measured", "ratio"):
        t.add_column(c, justify="left" if c in ("quantity", "formula") else "right")
    for r in rows:
        t.add_row(r["quantity"], r["formula"], f"{r['value']:.4g}", f"{r['measured']:.4g}", f"{r['ratio']:.3g}")
    return t


def export_and_maybe_json(rep: dict, export, json_: bool) -> bool:
    """Write rep's network if asked; print rep (without its objects) as JSON if asked. True if printed."""
    if export is not None:
        netfile.save(rep["network"], export)
    if json_:
        out = {k: v for k, v in rep.items() if k not in ("network", "plan")}
        out["exported"] = str(export) if export else None
        print_json(out)
    return json_


def print_verdict(rep: dict) -> None:
    """The verdict line, and exit 1 when the construction fails its claim (a finding, not bad input)."""
    for k, d in rep["check"]["results"].items():
        if not d["passed"]:
            console.print(f"[red]check {k} FAILS[/]: {d['detail']}")
    why = "" if rep["ok"] else f" ({', '.join(rep['failed'])})"
    colour = "green" if rep["ok"] else "red"
    console.print(
        f"verdict: [bold {colour}]{rep['verdict']}[/]{why}: check_construction "
        f"({', '.join(rep['check']['results'])}) and max |T - f| <= ε"
    )


def finish(rep: dict, export, json_: bool) -> None:
    if not export_and_maybe_json(rep, export, json_):
        print_verdict(rep)
        if export:
            console.print(f"written to {export}")
    if not rep["ok"]:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    @app.command("1")
    @handle_errors
    def lemma1_cmd(
        d: int = typer.Option(2, "--d", help="Input dimension d (f on [0,1]^d)."),
        eps: float = typer.Option(0.1, "--eps", help="Accuracy ε in (0, 1)."),
        target: str = typer.Option(
            "sin(3*x0)*x1", "--target", help="f as a sympy expression in x0..x{d-1} (1e-3 style numbers allowed)."
        ),
        beta: BetaOpt = 1.0,
        hf: float = typer.Option(3.0, "--H-f", "--hf", help="Declared Hölder constant H_f."),
        R: float | None = typer.Option(None, "--R", help="Declared bound on |f| (default: max |f_n|)."),
        grid: str = typer.Option(
            "tight", "--grid", help="'paper' (N = d(2^d H_f/ε)^{1/β}+1) or 'tight' (corrected analysis)."
        ),
        N: int | None = typer.Option(
            None, "--N", min=2, help="Override the grid size (the bound is then reported for it)."
        ),
        exact: ExactOpt = False,
        points: int = typer.Option(2000, "--points", min=1, help="Size of the dense sample (exact: at most 200)."),
        trials: TrialsOpt = 4,
        size_limit: int = typer.Option(
            SIZE_LIMIT,
            "--size-limit",
            callback=positive_int,
            help="Refuse networks with more tokens or heads than this (checked before building).",
        ),
        export: ExportOpt = None,
        json_: JsonOpt = False,
    ) -> None:
        """Lemma 1 (Section 2.4, Appendix E.1): one transformer computing f̂ = Σ f_n φ_n on [0,1]^d; error
        vs ε, resources vs the spec and the paper, and the verdict (exit 1 when it fails its claim).

        --exact/--float chooses the arithmetic of the error measurement (default float64); the
        conformance check always runs exactly.

        Example: tmcheck lemma 1 --d 2 --eps 0.1 --target "sin(3*x0)*x1" --H-f 3
        """
        from tmcheck.theory.lemmas.lemma1_report import lemma1_report

        if grid not in ("paper", "tight"):
            raise UserError(f"--grid must be 'paper' or 'tight', got {grid!r}")
        rep = lemma1_report(
            target,
            d,
            eps,
            beta,
            hf,
            R,
            grid,
            N,
            "exact" if exact else "float64",
            points,
            trials=trials,
            size_limit=size_limit,
        )
        if not json_:
            e = rep["error"]
            console.print(table_of(rep["resources"], f"Lemma 1 network for f = {target} on [0,1]^{d}: resources"))
            console.print(
                f"grid {grid}: N = {rep['N']} (paper's N = {rep['paper_N']}); bound H_f(2√d/3(N-1))^β = "
                f"{rep['tight_bound']:.4g}, "
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
        finish(rep, export, json_)
