"""`tmcheck predict`: scaling exponents from the intrinsic dimension (eq. 3-4, Appendix B.1), the ID-free
conversions of Section 3 (Table 1), and the prediction as a test against an observed exponent."""

from __future__ import annotations

import typer

from tmcheck.cli.common import UserError, console, handle_errors, print_json
from tmcheck.cli.options import BetaOpt, JsonOpt, parse_list, positive_finite


def _interval(text: str | None, name: str, centre: float) -> tuple[float, float] | None:
    if text is None:
        return None
    ci = parse_list(text, name, float)
    if len(ci) != 2 or not ci[0] <= centre <= ci[1]:
        raise typer.BadParameter(f"give LO,HI around the estimate, got {text!r}", param_hint=name)
    return ci


@handle_errors
def command(
    id_: float | None = typer.Option(
        None, "--id", help="Intrinsic dimension d: gives α_D = 2β/(2β+d), α_N = 2β/d (eq. 3-4)."
    ),
    id_ci: str | None = typer.Option(None, "--id-ci", help="Interval LO,HI of d: carried into α_D and α_N."),
    beta: BetaOpt = 1.0,
    alpha_n: float | None = typer.Option(None, "--alpha-n", help="Observed α_N: gives α_D = α_N/(1+α_N) (Section 3)."),
    alpha_d: float | None = typer.Option(None, "--alpha-d", help="Observed α_D: gives α_N = α_D/(1−α_D) (Section 3)."),
    alpha_hat: float | None = typer.Option(
        None, "--alpha-hat", callback=positive_finite, help="Observed data exponent to test against α_D (needs --id)."
    ),
    alpha_ci: str | None = typer.Option(None, "--alpha-ci", help="Its 95% interval LO,HI (normal draws from it)."),
    margin: float = typer.Option(
        0.05,
        "--margin",
        callback=positive_finite,
        help="Equivalence margin δ: equivalent when the 90% interval of α̂ − α_D lies inside ±δ, differs when "
        "outside, undecided otherwise (also decided at the paper's ±0.02).",
    ),
    json_: JsonOpt = False,
) -> None:
    """Predict scaling exponents (Section 3, eq. 3-4, Appendix B): from an ID, or one exponent from the other;
    with --alpha-hat, test the prediction (interval of α̂ − α_D, p-value, verdict).

    Exit status: 0, or 1 when the test says "differs by more than δ"; "equivalent" and "undecided" exit 0
    with those words on stdout; 2 on bad input.

    Example: tmcheck predict --id 3.1 --id-ci 2.8,3.4 --alpha-hat 0.35 --alpha-ci 0.30,0.41
    """
    from tmcheck.empirics.fit.prediction import predict_exponents

    out = predict_exponents(
        id_,
        beta,
        alpha_n,
        alpha_d,
        d_ci=_interval(id_ci, "--id-ci", id_) if id_ is not None else None,
        alpha_hat=alpha_hat,
        alpha_ci=_interval(alpha_ci, "--alpha-ci", alpha_hat) if alpha_hat is not None else None,
        margin=margin,
    )
    if id_ci is not None and id_ is None:
        raise UserError("--id-ci needs --id")
    failed = out.get("test", {}).get("outcome") == "differs"
    if json_:
        print_json(out)
        raise typer.Exit(1 if failed else 0)
    for k, v in out.items():
        if k == "test":
            console.print(f"{'test':>10}: {v['words']}", highlight=False)
        elif isinstance(v, list):
            console.print(f"{k:>10} = [{v[0]:.4f}, {v[1]:.4f}]")
        else:
            console.print(f"{k:>10} = {v:.4f}" if isinstance(v, float) else f"{k:>10} = {v}")
    if failed:
        raise typer.Exit(1)
