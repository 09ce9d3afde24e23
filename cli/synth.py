"""`tmcheck synth`: synthetic manifold regression where d and β are known (eq. 2-4, Section 2.2).

  tmcheck synth data --manifold torus --d 2 --n 1000 --output x.npz   sample a labelled data set

The sweep is `tmcheck sweep synthetic DIR` and its report `tmcheck report DIR`; the old spellings
`synth regress` and `synth report` keep working one release (RENAMED_COMMANDS), as does `--seed` for
the sweep's seeds and `--out` for this command's file (RENAMED_OPTIONS).
Library: tmcheck.empirics.synthetic.problem (data, Hölder fields, baselines).
"""

from __future__ import annotations

from pathlib import Path

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import BetaOpt, JsonOpt, nonneg_finite, nonneg_int, positive_int

app = typer.Typer(no_args_is_help=True, help="Synthetic manifold regression with known d and β (eq. 2-4).")
RENAMED_COMMANDS = {("synth", "regress"): ("sweep", "synthetic"), ("synth", "report"): ("report",)}
RENAMED_OPTIONS = {("synth", "data"): {"--out": "--output"}}


@app.command("data")
@handle_errors
def data(
    output: Path = typer.Option(..., "--output", help="Output .npz file with X (n, D), y (n,) and f (n,)."),
    n: int = typer.Option(1000, "--n", callback=positive_int, help="Number of points."),
    d: int = typer.Option(2, "--d", callback=positive_int, help="Intrinsic dimension d."),
    D: int = typer.Option(16, "--D", callback=positive_int, help="Ambient dimension D."),
    manifold: str = typer.Option("torus", "--manifold", help="torus, sphere or cube."),
    target: str = typer.Option("holder", "--target", help="holder, kinks or relu."),
    beta: BetaOpt = 1.0,
    density: str = typer.Option("uniform", "--density", help="uniform or tilted."),
    noise: float = typer.Option(0.5, "--noise", callback=nonneg_finite, help="Label noise σ."),
    seed: int = typer.Option(
        0, "--seed", callback=nonneg_int, help="Seed of the sample (the problem's frame and field use 0)."
    ),
    json_: JsonOpt = False,
) -> None:
    """Sample n labelled points of a known-d manifold (Assumptions 1-2) and save them as .npz."""
    import io

    import numpy as np

    from tmcheck.util.atomic import write_bytes
    from tmcheck.empirics.synthetic.problem import Experiment, Problem

    exp = Experiment(Problem(manifold=manifold, d=d, D=D, target=target, beta=beta, density=density, noise=noise))
    X, y = exp.pool(n, seed)
    f = exp.field(X)
    buf = io.BytesIO()
    np.savez(buf, X=X, y=y, f=f)
    write_bytes(output, buf.getvalue())
    summary = {
        "output": str(output),
        "n": n,
        "d": d,
        "D": D,
        "manifold": manifold,
        "target": target,
        "beta": beta,
        "noise": noise,
        "max_residual": float(exp.manifold.residual(X).max()),
        "f_std": float(f.std()),
    }
    if json_:
        print_json(summary)
        return
    console.print(
        f"wrote {n} points of a {manifold} (d={d}) in R^{D} to {output}; target {target} (β={beta:g}), "
        f"σ={noise:g}; largest distance from the manifold's equations {summary['max_residual']:.1e}",
        highlight=False,
    )
