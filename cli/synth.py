"""`tmcheck synth`: synthetic manifold regression where d and β are known (eq. 2-4, Section 2.2).

  tmcheck synth data --manifold torus --d 2 --n 1000 --output x.npz   sample a labelled data set
  tmcheck synth tune DIR --preset cpu --d 2 --beta 1 --n 100,10000     choose the transformer's settings
  tmcheck synth tuned FILE --preset cpu                                check tuned settings against a preset

The sweep is `tmcheck sweep synthetic DIR` and its report `tmcheck report DIR` (the old spellings
`synth regress`, `synth report` and `--out` ended with this release: docs/changelog.md names each).
Library: tmcheck.empirics.synthetic.problem (data, Hölder fields, baselines), tmcheck.empirics.sweep.tune
(the settings chosen on validation data drawn from the training pool, never the test split).
"""

from __future__ import annotations

from pathlib import Path

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import (
    BetaOpt,
    JsonOpt,
    RegistryHelp,
    beta_value,
    nonneg_finite,
    nonneg_int,
    parse_list,
    positive_int,
)

app = typer.Typer(no_args_is_help=True, help="Synthetic manifold regression with known d and β (eq. 2-4).")


@app.command("data", cls=RegistryHelp)
@handle_errors
def data(
    output: Path = typer.Option(..., "--output", help="Output .npz file with X (n, D), y (n,) and f (n,)."),
    n: int = typer.Option(1000, "--n", callback=positive_int, help="Number of points."),
    d: int = typer.Option(2, "--d", callback=positive_int, help="Intrinsic dimension d."),
    D: int = typer.Option(16, "--D", callback=positive_int, help="Ambient dimension D."),
    manifold: str = typer.Option("torus", "--manifold", help="{manifolds}."),
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

    from tmcheck.empirics.synthetic.problem import Experiment, Problem
    from tmcheck.util.atomic import write_bytes

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


@app.command("tune")
@handle_errors
def tune(
    out: Path = typer.Argument(
        ..., metavar="DIR", help="Tuning directory (created, or resumed): trials.json, chosen.json."
    ),
    preset: str = typer.Option("cpu", "--preset", help="The synthetic preset whose problem and model are tuned."),
    d: str | None = typer.Option(None, "--d", help="Intrinsic dimensions d, e.g. 1,2,4 (default: the preset's)."),
    beta: str | None = typer.Option(None, "--beta", help="Hölder smoothness β, e.g. 1,0.5 (default: the preset's)."),
    n: str = typer.Option(..., "--n", help="Training-set sizes n to tune at, e.g. 100,10000."),
    candidates: int = typer.Option(
        10, "--candidates", callback=positive_int, help="Settings drawn (the preset's first)."
    ),
    rungs: str = typer.Option("1000,4000", "--rungs", help="Step caps of the successive-halving rungs, increasing."),
    keep: str = typer.Option("3", "--keep", help="Candidates kept after each rung but the last."),
    data_seeds: str = typer.Option("1000", "--data-seeds", help="Tuning draws of the training pool, e.g. 1000,1001."),
    select_points: int = typer.Option(
        2000, "--select-points", callback=positive_int, help="Labelled points of the selection set."
    ),
    seed: int = typer.Option(0, "--seed", callback=nonneg_int, help="Seed of the candidate draw."),
    json_: JsonOpt = False,
) -> None:
    """Choose lr, weight decay, batch, patience and the transformer's sizes per (d, β, n) by successive
    halving on a selection set drawn from the training pool (never the test split); with several n
    (now or recorded in DIR), one setting per (d, β) is chosen across them and written to DIR/chosen.json."""
    from tmcheck.empirics.sweep import tune as tuning
    from tmcheck.empirics.sweep.kinds import get_preset
    from tmcheck.util.progress import bar

    p = get_preset(preset, "synthetic")
    dims = parse_list(d, "--d", int, positive_int) or p.dims
    betas = parse_list(beta, "--beta", float, beta_value) or p.betas
    ns = parse_list(n, "--n", int, positive_int)
    try:
        settings = tuning.TuneSettings(
            candidates=candidates,
            rungs=parse_list(rungs, "--rungs", int, positive_int),
            keep=parse_list(keep, "--keep", int, positive_int, allow_empty=True),
            data_seeds=parse_list(data_seeds, "--data-seeds", int, nonneg_int),
            select_points=select_points,
            seed=seed,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    total = len(dims) * len(betas) * len(ns) * tuning.trials_needed(settings)
    tunings, chosen = [], []
    with bar(total, "tuning", trial="", mse="") as advance:

        def on_trial(row: dict, new: bool) -> None:
            s = row["setting"]
            advance(
                trial=f"d={row['d']} b={row['beta']:g} n={row['n']} cap={row['cap']} lr={s['lr']:g} w={s['ffn_width']}",
                mse=f"{row['val_mse']:.3f}",
            )
            if new and not json_:
                console.print(
                    f"d={row['d']} β={row['beta']:g} n={row['n']} seed {row['data_seed']} cap {row['cap']}: "
                    f"{_setting_words(s)}: val MSE {row['val_mse']:.4f} ({row['steps']} steps, {row['stop']}, "
                    f"{row['seconds']:.1f}s)",
                    highlight=False,
                )

        for dd in dims:
            for b in betas:
                for nn in ns:
                    tunings.append(tuning.tune(out, p, dd, b, nn, settings, on_trial))
        for dd in dims:
            for b in betas:
                chosen.append(tuning.choose(out, p, dd, b, on_trial))
    path = tuning.write_chosen(out, _merge_chosen(out, chosen), p)
    if json_:
        print_json({"tunings": tunings, "chosen": chosen, "output": str(path)})
        return
    for t in tunings:
        bl = t["baselines"]
        console.print(
            f"d={t['d']} β={t['beta']:g} n={t['n']}: tuned {t['val_mse']:.4f}, trivial {bl['trivial']:.4f}, "
            f"kNN {bl['knn']:.4f}, kernel ridge {bl['krr']:.4f} (selection MSE against y)",
            highlight=False,
        )
    for c in chosen:
        console.print(f"d={c['d']} β={c['beta']:g}: {_setting_words(c['setting'])}", highlight=False)
    console.print(f"wrote {path}", highlight=False)


def _merge_chosen(out: Path, chosen: list[dict]) -> list[dict]:
    """This call's choices over those already in out/chosen.json (other (d, β) kept)."""
    from tmcheck.empirics.sweep.tune import CHOSEN
    from tmcheck.util import safeio

    doc = safeio.read_json_optional(Path(out) / CHOSEN, "a tuning choice", {})
    old = doc.get("chosen", []) if isinstance(doc, dict) else None
    if not isinstance(old, list) or not all(isinstance(c, dict) and {"d", "beta"} <= set(c) for c in old):
        raise ValueError(f"{Path(out) / CHOSEN} is not a tuning choice (chosen: a list of entries with d and beta)")
    mine = {(c["d"], c["beta"]) for c in chosen}
    return [c for c in old if (c["d"], c["beta"]) not in mine] + chosen


def _setting_words(s: dict) -> str:
    return (
        f"lr {s['lr']:g}, wd {s['weight_decay']:g}, batch {s['batch_size']}, patience {s['patience']}, "
        f"d_embd {s['d_embd']}, {s['n_blocks']} blocks, {s['n_heads']} heads, FFN {s['ffn_width']}"
    )


# why kept: Typer reads each command's options from its own signature: tune's and tuned's open alike
@app.command("tuned")
@handle_errors
def tuned(
    file: Path = typer.Argument(
        ..., metavar="FILE", help="A chosen.json of `synth tune`, or a JSON list of tuned entries."
    ),
    preset: str = typer.Option("cpu", "--preset", help="The synthetic preset the entries apply to."),
    json_: JsonOpt = False,
) -> None:
    """Check tuned settings against a preset (each (d, β) of its grid once, each giving a valid preset)
    and print the settings every (d, β) trains under."""
    from tmcheck.empirics.sweep.kinds import get_preset
    from tmcheck.empirics.sweep.tune import SEARCH, load_tuned

    p = load_tuned(file, get_preset(preset, "synthetic"))
    fields = (*SEARCH, "min_steps", "max_steps", "cooldown")
    rows = [{"d": d, "beta": b, **{k: getattr(p.at(d, b), k) for k in fields}} for d in p.dims for b in p.betas]
    if json_:
        print_json(rows)
        return
    for r in rows:
        console.print(f"d={r['d']} β={r['beta']:g}: {_setting_words(r)}, steps <= {r['max_steps']}", highlight=False)
