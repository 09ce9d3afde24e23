"""`tmcheck predict`: scaling exponents from the intrinsic dimension (eq. 3-4, Appendix B.1), the ID-free
conversions of Section 3 (Table 1), and the prediction as a test against an observed exponent."""

from __future__ import annotations


import numpy as np
import typer

from tmcheck.cli.common import UserError, console, handle_errors, print_json
from tmcheck.cli.options import BetaOpt, JsonOpt, parse_list, positive_finite
from tmcheck.theory import bounds


def predict(id_: float | None, beta: float, alpha_n: float | None, alpha_d: float | None) -> dict:
    given = [k for k, v in (("--id", id_), ("--alpha-n", alpha_n), ("--alpha-d", alpha_d)) if v is not None]
    if len(given) != 1:
        raise UserError("give exactly one of --id, --alpha-n, --alpha-d")
    if id_ is not None:
        return {"d": id_, "beta": beta, "alpha_D": bounds.alpha_D(id_, beta), "alpha_N": bounds.alpha_N(id_, beta)}
    if alpha_n is not None:
        a_d = bounds.alpha_D_from_alpha_N(alpha_n)
        return {"alpha_N": alpha_n, "alpha_D": a_d, "implied_d": 2 * beta / alpha_n, "beta": beta}
    a_n = bounds.alpha_N_from_alpha_D(alpha_d)
    return {"alpha_D": alpha_d, "alpha_N": a_n, "implied_d": bounds.id_from_alpha_D(alpha_d, beta), "beta": beta}


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
    tolerance: float = typer.Option(
        0.1,
        "--tolerance",
        callback=positive_finite,
        help="Half-width above which the test says 'not decidable at this precision'.",
    ),
    json_: JsonOpt = False,
) -> None:
    """Predict scaling exponents (Section 3, eq. 3-4, Appendix B): from an ID, or one exponent from the other;
    with --alpha-hat, test the prediction (interval of α̂ − α_D, p-value, verdict).

    Example: tmcheck predict --id 3.1 --id-ci 2.8,3.4 --alpha-hat 0.35 --alpha-ci 0.30,0.41
    """
    from scipy import stats

    from tmcheck.empirics.fit.prediction import prediction_test

    out = predict(id_, beta, alpha_n, alpha_d)
    d_ci = _interval(id_ci, "--id-ci", id_) if id_ is not None else None
    if id_ci is not None and id_ is None:
        raise UserError("--id-ci needs --id")
    if d_ci is not None:
        if d_ci[0] <= 0:
            raise UserError("--id-ci: the intrinsic dimension is positive")
        # both exponents decrease in d, so the interval maps end to end
        out["alpha_D_ci"] = [bounds.alpha_D(d_ci[1], beta), bounds.alpha_D(d_ci[0], beta)]
        out["alpha_N_ci"] = [bounds.alpha_N(d_ci[1], beta), bounds.alpha_N(d_ci[0], beta)]
    if alpha_hat is not None:
        if id_ is None:
            raise UserError("--alpha-hat needs --id (the prediction it is tested against)")
        if alpha_ci is None:
            raise UserError("--alpha-hat needs --alpha-ci (its 95% interval): a test needs the uncertainty")
        a_ci = _interval(alpha_ci, "--alpha-ci", alpha_hat)
        rng = np.random.default_rng(0)
        sd = (a_ci[1] - a_ci[0]) / (2 * stats.norm.ppf(0.975))
        draws = alpha_hat + sd * rng.standard_normal(4000)
        d_kw = {"d": id_} if d_ci is None else {"d_hat": id_, "d_ci": list(d_ci)}
        out["test"] = prediction_test(draws, kind="D", beta=beta, tolerance=tolerance, **d_kw)
    if json_:
        print_json(out)
        return
    for k, v in out.items():
        if k == "test":
            console.print(f"{'test':>10}: {v['words']}", highlight=False)
        elif isinstance(v, list):
            console.print(f"{k:>10} = [{v[0]:.4f}, {v[1]:.4f}]")
        else:
            console.print(f"{k:>10} = {v:.4f}" if isinstance(v, float) else f"{k:>10} = {v}")
