"""`tmcheck bound`: the paper's closed forms with every constant written out (theory/bounds.py).

`covering`: Lemma 2's log covering number, as written and corrected (Appendix F.2), in log space.
`theorem1`: Theorem 1's bound at the balancing ε = n^{−β/(2β+d)} (Appendix F.1).
`lemma1`, `theorem2`: the resources of the full constructions (Appendix E.1, E.2) from `theory.spec`, the
one source the builders, `tmcheck lemma 1`/`theorem 2` and proofs_check read, next to the stated orders.
"""

from __future__ import annotations

import math

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import BetaOpt, ExactOpt, JsonOpt, RegistryHelp, positive_finite, positive_int

app = typer.Typer(
    no_args_is_help=True,
    help=(
        "Closed-form bounds: Lemma 2 covering number, Theorem 1 (Appendix F), "
        "resources of Lemma 1 and Theorem 2 (Appendix E)."
    ),
)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


@app.command("covering")
@handle_errors
def covering(
    LT: int = typer.Option(3, "--LT", callback=positive_int, help="L_T, the number of blocks."),
    LFFN: int = typer.Option(4, "--LFFN", callback=positive_int, help="L_FFN, the FFN depth."),
    w: int = typer.Option(5, "--w", callback=positive_int, help="w_FFN, the FFN width."),
    l: int = typer.Option(64, "--l", callback=positive_int, help="l, the number of tokens."),
    d_embd: int = typer.Option(5, "--d-embd", callback=positive_int, help="d_embd, the token dimension."),
    m: int = typer.Option(32, "--m", callback=positive_int, help="m, the heads per block."),
    kappa: float = typer.Option(10.0, "--kappa", callback=positive_finite, help="κ, the bound on every weight."),
    M: float = typer.Option(1.0, "--M", callback=positive_finite, help="M, the bound ||x||∞ <= M on inputs."),
    D: int = typer.Option(8, "--D", callback=positive_int, help="D, the input dimension."),
    delta: float = typer.Option(1e-3, "--delta", callback=positive_finite, help="δ, the covering radius in L∞."),
    json_: JsonOpt = False,
) -> None:
    """Lemma 2 (Appendix F.2): log N(δ, 𝒯, ||·||∞), as written and corrected (natural logs).

    Example: tmcheck bound covering --LT 3 --m 32 --l 64 --delta 1e-3 --json
    """
    from rich.table import Table

    from tmcheck.theory import bounds

    c = bounds.TransformerClass(L_T=LT, L_FFN=LFFN, w=w, l=l, d_embd=d_embd, m=m, kappa=kappa, M=M, D=D)
    rep = bounds.covering_report(c, delta)
    if json_:
        print_json(rep)
        return
    table = Table(title=f"Lemma 2: covering number of 𝒯 at δ = {delta:g} (natural logs)")
    for col in ("quantity", "as written", "corrected"):
        table.add_column(col)
    table.add_row("parameters P", _fmt(rep["as_written"]["n_params"]), _fmt(rep["corrected"]["n_params"]))
    table.add_row("log C_T", _fmt(rep["as_written"]["log_C_T"]), _fmt(rep["corrected"]["log_C_T"]))
    table.add_row("log N", _fmt(rep["as_written"]["log_N"]), _fmt(rep["corrected"]["log_N"]))
    table.add_row("log10 N", _fmt(rep["as_written"]["log10_N"]), _fmt(rep["corrected"]["log10_N"]))
    console.print(table)
    console.print(
        f"corrected: log of the hidden-state bound after L_T blocks = {rep['corrected']['log_hidden_bound_final']:.6g} "
        "(attention is cubic in H); see `tmcheck proofs --section lemma2`."
    )


@app.command("theorem1")
@handle_errors
def theorem1(
    d: int = typer.Option(4, "--d", callback=positive_int, help="d, the intrinsic dimension."),
    beta: BetaOpt = 1.0,
    n: float = typer.Option(1e6, "--n", callback=positive_finite, help="n, the number of samples."),
    D: int = typer.Option(16, "--D", callback=positive_int, help="D, the ambient dimension."),
    R: float = typer.Option(
        1.0, "--R", callback=positive_finite, help="R, the bound on |f| and on the network output."
    ),
    C_M: int = typer.Option(1, "--C-M", callback=positive_int, help="C_M, the number of charts."),
    M: float = typer.Option(1.0, "--M", callback=positive_finite, help="M, the bound ||x||∞ <= M on the manifold."),
    json_: JsonOpt = False,
) -> None:
    """Theorem 1 (Appendix F.1): 2ε² + (104R²/(3n)) log N(1/(4Rn)) + (4 + 1/(2R))/n at ε = n^(−β/(2β+d)).

    Example: tmcheck bound theorem1 --d 4 --n 1e6 --D 16 --json
    """
    from rich.table import Table

    from tmcheck.theory import bounds

    if d > D:
        raise typer.BadParameter(
            f"the intrinsic dimension d = {d} exceeds the ambient dimension D = {D}", param_hint="--d"
        )
    out = bounds.theorem1_bound(d, n, beta, D=D, R=R, C_M=C_M, M=M)
    out["n_for_this_eps"] = bounds.theorem1_n_for_eps(out["eps"], d, beta)
    if json_:
        print_json(out)
        return
    console.print(f"ε = n^(−β/(2β+d)) = {out['eps']:.6g},  α_D = {out['alpha_D']:.6g},  bias 2ε² = {out['bias']:.6g}")
    console.print("class (F.1): " + ", ".join(f"{k} = {_fmt(v)}" for k, v in out["class"].items()))
    table = Table(title=f"Theorem 1 at d = {d}, β = {beta:g}, n = {n:g}, D = {D}")
    for col in ("", "log N(1/(4Rn))", "variance", "total bound"):
        table.add_column(col)
    for key in ("as_written", "corrected"):
        r = out[key]
        table.add_row(key.replace("_", " "), _fmt(r["log_N"]), _fmt(r["variance"]), _fmt(r["total"]))
    console.print(table)
    console.print(
        f"stated rate D d² n^(−2β/(2β+d)) = {out['stated_rate']:.6g}; the proof's simplified log N "
        f"(900 …) = {out['paper_simplified_log_N']:.6g}"
    )
    if math.isfinite(out["corrected"]["total"]) and out["corrected"]["total"] > 1:
        console.print(
            "[yellow]the bound exceeds 1 at this n: it is vacuous here (see theorem1.* in `tmcheck proofs`).[/]"
        )


def _print_spec(sp, title: str) -> None:
    from rich.table import Table

    t = Table(title=title)
    for col in ("quantity", "spec (token layout)", "paper's O(·) at constant 1"):
        t.add_column(col, justify="right" if col != "quantity" else "left")
    for q in ("N", "l", "m", "L_T", "L_FFN", "w_FFN", "kappa"):
        v = getattr(sp, q)
        t.add_row(q, _fmt(float(v)) if q == "kappa" else str(v), _fmt(sp.orders[q]) if q in sp.orders else "-")
    console.print(t)
    console.print("constants: " + ", ".join(f"{k} = {_fmt(v)}" for k, v in sp.extra.items()))


@app.command("lemma1")
@handle_errors
def lemma1(
    d: int = typer.Option(2, "--d", min=1, help="d, the input dimension (f on [0,1]^d)."),
    eps: float = typer.Option(0.1, "--eps", callback=positive_finite, help="ε, the target accuracy in L∞."),
    beta: BetaOpt = 1.0,
    H_f: float = typer.Option(1.0, "--H-f", callback=positive_finite, help="H_f, the Hölder constant."),
    R: float = typer.Option(
        1.0, "--R", callback=positive_finite, help="R, the bound on |f| (sets the f_n heads and the sum shift)."
    ),
    grid: str = typer.Option("tight", "--grid", help="'tight' (corrected analysis) or 'paper' (the proof's N)."),
    N: int | None = typer.Option(None, "--N", min=2, help="Grid size (default: the grid's N for ε)."),
    exact: ExactOpt = True,
    json_: JsonOpt = False,
) -> None:
    """Lemma 1 (Section 2.4, Appendix E.1): N, l, m, L_T, L_FFN, w_FFN, κ of the construction from its token
    layout (`theory.spec.lemma1_spec`, what `tmcheck lemma 1` builds), beside the paper's O(·) forms.

    Example: tmcheck bound lemma1 --d 2 --eps 0.1 --H-f 3 --json
    """
    from tmcheck.theory.spec import lemma1_spec

    if not 0 < eps < 1:
        raise ValueError(f"eps must be in (0, 1), got {eps}")
    sp = lemma1_spec(d, N, eps=eps, H_f=H_f, beta=beta, R=R, grid=grid, arithmetic="exact" if exact else "float64")
    if json_:
        print_json(sp.as_dict())
        return
    _print_spec(sp, f"Lemma 1 at d = {d}, ε = {eps:g}, H_f = {H_f:g}, β = {beta:g} ({grid} grid)")


@app.command("theorem2", cls=RegistryHelp)
@handle_errors
def theorem2(
    manifold: str = typer.Option("circle", "--manifold", help="{manifolds:atlas}: its atlas gives C_M and μ."),
    D: int = typer.Option(3, "--D", min=1, help="D, the ambient dimension."),
    eps: float = typer.Option(0.3, "--eps", callback=positive_finite, help="ε, the target accuracy in L∞."),
    H_f: float = typer.Option(
        1.0, "--H-f", callback=positive_finite, help="H_f, the Lipschitz constant of f on the manifold."
    ),
    R: float = typer.Option(1.0, "--R", callback=positive_finite, help="R, the bound on |f|."),
    N: int | None = typer.Option(None, "--N", min=2, help="Grid per chart (default: the proven N)."),
    exact: ExactOpt = False,
    budget_gb: float | None = typer.Option(
        None,
        "--fits-in-gb",
        callback=positive_finite,
        help="Also report the least ε whose proven network's weights fit in this many GB.",
    ),
    json_: JsonOpt = False,
) -> None:
    """Theorem 2 (Section 2.4, Appendix E.2): N, l, m, L_T, L_FFN, w_FFN, κ of the construction on the
    manifold's atlas, the one `tmcheck theorem 2` builds (`theory.spec.theorem2_spec`; same counts).

    Example: tmcheck bound theorem2 --manifold circle --D 3 --eps 0.3 --H-f 1 --json
    """
    from tmcheck.theory.spec import memory_bytes, smallest_eps_within, theorem2_spec

    sp = theorem2_spec(manifold, D, eps, H_f=H_f, R=R, N=N, arithmetic="exact" if exact else "float64")
    out = sp.as_dict()
    out["weights_bytes"] = memory_bytes(sp)
    if budget_gb is not None:
        e_star, at = smallest_eps_within(manifold, D, budget_gb * 1e9, H_f, R)
        out["fits"] = {
            "budget_bytes": budget_gb * 1e9,
            "least_eps": e_star,
            "at_least_eps": at,
            "method": "float64 weights of the proven network computed from the spec (not built), ε on a 1/1000 grid",
        }
    if json_:
        print_json(out)
        return
    _print_spec(sp, f"Theorem 2 on the {manifold} in R^{D}, ε = {eps:g}, H_f = {H_f:g}, R = {R:g}")
    console.print(f"float64 weights of this network: {out['weights_bytes'] / 1e9:.3g} GB (from the spec)")
    if budget_gb is not None:
        console.print(
            f"the proven network fits in {budget_gb:g} GB for ε >= {out['fits']['least_eps']} (from the spec, "
            "not built)"
        )
