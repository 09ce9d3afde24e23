"""`tmcheck id`: intrinsic-dimension estimation (paper Section 5, "Estimating the ID of text").

`estimate` runs one estimator under a named protocol on points from .npy, .pt or .safetensors;
`synth` writes a point cloud of known dimension from the validation set. Library:
tmcheck.empirics.id.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import warnings
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from tmcheck.cli.common import console, err_console, handle_errors, print_json, to_jsonable

app = typer.Typer(no_args_is_help=True, help="Intrinsic dimension of point clouds (paper Sec. 5).")


def _notes(caught) -> None:
    for w in caught:
        err_console.print(f"[yellow]note:[/] {w.message}", highlight=False, soft_wrap=True)


@app.command()
@handle_errors
def estimate(
    file: Path = typer.Argument(..., help="Points, one per row: .npy, .pt or .safetensors."),
    estimator: str = typer.Option("mle", "--estimator", "-e",
                                  help="mle (MacKay-Ghahramani inverse mean; the paper's), mle-mean, twonn, twonn-mle, scaling."),
    k: int = typer.Option(20, "--k", help="Neighbours per point (the paper's K = 20)."),
    protocol: str = typer.Option("full", "--protocol",
                                 help="full: all points at once; paper: random disjoint batches, mean of batch estimates."),
    batch_size: int = typer.Option(4096, "--batch-size", help="Batch size of the paper protocol."),
    bootstrap: int = typer.Option(200, "--bootstrap", help="Bootstrap resamples for the interval (0: none)."),
    device: str = typer.Option("auto", "--device", help="auto (CUDA when present), cpu or cuda."),
    duplicates: str = typer.Option("remove", "--duplicates", help="Duplicate rows: remove (warn, count), keep, error."),
    key: Optional[str] = typer.Option(None, "--key", help="Tensor name inside a .pt dict or .safetensors file."),
    seed: int = typer.Option(0, "--seed", help="Seed for batches and bootstrap."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the result as JSON here (atomically)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Estimate the intrinsic dimension of the rows of FILE."""
    from tmcheck.empirics.id import estimate_id, load_points

    X = load_points(file, key=key)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = estimate_id(X, estimator=estimator, k=k, protocol=protocol, batch_size=batch_size,
                             bootstrap=bootstrap, duplicates=duplicates, device=device, seed=seed)
    _notes(caught)
    payload = {"file": str(file), "shape": list(X.shape), **result.as_dict()}
    if out is not None:
        import json

        from tmcheck.util.atomic import write_text

        write_text(out, json.dumps(to_jsonable(payload), indent=2) + "\n")
    if as_json:
        print_json(payload)
        return
    table = Table(title=f"intrinsic dimension of {file.name} ({X.shape[0]} x {X.shape[1]})")
    table.add_column("quantity")
    table.add_column("value")
    table.add_row("estimator", f"{estimator}, k={result.k}" if result.k else estimator)
    table.add_row("protocol", result.protocol["name"])
    table.add_row("dimension", f"{result.dimension:.3f}")
    table.add_row("95% interval", "-" if result.ci is None else f"[{result.ci[0]:.3f}, {result.ci[1]:.3f}]")
    table.add_row("points used", str(result.n_used))
    table.add_row("duplicates removed", str(result.n_duplicates))
    if result.protocol["name"] == "paper":
        table.add_row("batches", f"{result.protocol['n_batches']} x {result.protocol['batch_size']}"
                      f" (dropped {result.protocol['n_dropped_remainder']})")
    if "curve" in result.protocol:
        curve = ", ".join(f"{c['n']}: {c['dimension']:.2f}" for c in result.protocol["curve"])
        table.add_row("MLE vs N", curve)
    console.print(table)


@app.command()
@handle_errors
def synth(
    manifold: str = typer.Option("sphere", "--manifold", help="linear, sphere, swissroll, torus, cube-image."),
    d: Optional[int] = typer.Option(None, "--d", help="Intrinsic dimension (default: the manifold's)."),
    ambient: int = typer.Option(768, "--D", help="Ambient dimension D (random isometric embedding)."),
    n: int = typer.Option(4096, "--n", help="Number of points."),
    noise: float = typer.Option(0.0, "--noise", help="Gaussian noise s.d. per ambient coordinate."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
    out: Path = typer.Option(Path("points.npy"), "--out", help="Output .npy file (written atomically)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Write N points of a manifold with known intrinsic dimension (the validation set) to a .npy file."""
    import numpy as np

    from tmcheck.util.atomic import write_bytes
    from tmcheck.empirics.id import MANIFOLDS, make_manifold

    if out.suffix != ".npy":
        raise ValueError(f"--out must end in .npy, got {out}")
    X = make_manifold(manifold, n, d=d, D=ambient, noise=noise, seed=seed, dtype=np.float32)
    buf = io.BytesIO()
    np.save(buf, X)
    write_bytes(out, buf.getvalue())
    info = {"out": str(out), "manifold": manifold, "d": d if d is not None else MANIFOLDS[manifold][0],
            "D": ambient, "n": n, "noise": noise, "seed": seed}
    if as_json:
        print_json(info)
    else:
        console.print(f"wrote {n} points of {manifold} (d={info['d']}) in R^{ambient} to {out}")


if importlib.util.find_spec("tmcheck.cli.id_corpus") is not None:
    importlib.import_module("tmcheck.cli.id_corpus").register(app)
