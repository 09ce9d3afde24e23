"""`tmcheck predict`: scaling exponents from the intrinsic dimension (eq. 3-4, Appendix B.1) and the
ID-free conversions of Section 3 (Table 1)."""

from __future__ import annotations

from typing import Optional

import typer

from tmcheck.cli.common import UserError, console, handle_errors, print_json
from tmcheck.theory import bounds


def predict(id_: Optional[float], beta: float, alpha_n: Optional[float], alpha_d: Optional[float]) -> dict:
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


@handle_errors
def command(
    id_: Optional[float] = typer.Option(None, "--id", help="Intrinsic dimension d: gives α_D = 2β/(2β+d), α_N = 2β/d (eq. 3-4)."),
    beta: float = typer.Option(1.0, "--beta", help="Hölder exponent β (Section 3 assumes 1)."),
    alpha_n: Optional[float] = typer.Option(None, "--alpha-n", help="Observed α_N: gives α_D = α_N/(1+α_N) (Section 3)."),
    alpha_d: Optional[float] = typer.Option(None, "--alpha-d", help="Observed α_D: gives α_N = α_D/(1−α_D) (Section 3)."),
    json_: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Predict scaling exponents (Section 3, Appendix B): from an ID, or one exponent from the other."""
    out = predict(id_, beta, alpha_n, alpha_d)
    if json_:
        print_json(out)
        return
    for k, v in out.items():
        console.print(f"{k:>10} = {v:.4f}" if isinstance(v, float) else f"{k:>10} = {v}")
