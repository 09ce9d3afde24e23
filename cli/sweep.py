"""`tmcheck sweep data`: the data-scaling sweep of the paper's Section 3 (Figure 2).

A sweep is a directory (config, plan, one folder per run, results.jsonl); rerunning resumes it.
Library: tmcheck.empirics.sweep (kind "pretrain").
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import JsonOpt, parse_list

app = typer.Typer(no_args_is_help=True, help="Sweeps over training-set size (paper Sec. 3, Figure 2).")
DEFAULT_DIR = Path("runs/sweep")


def sweep_directory(positional: Optional[Path], out: Optional[Path]) -> Path:
    """`sweep data DIR` and `sweep data --out DIR` name the same directory; both at once must agree."""
    if positional is not None and out is not None and positional != out:
        raise typer.BadParameter(f"two sweep directories given ({positional} and --out {out}); give one")
    return positional or out or DEFAULT_DIR


@app.command()
@handle_errors
def data(
    sweep_dir: Optional[Path] = typer.Argument(None, help="Sweep directory (created, or resumed); the same as --out."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help=f"Sweep directory (default {DEFAULT_DIR})."),
    preset: Optional[str] = typer.Option(None, "--preset", help="tiny, cpu-demo, cpu-small, gpu-quick, gpu-paper "
                                         "(default: the sweep's own, or tiny for a new one)."),
    corpus: Optional[List[str]] = typer.Option(None, "--corpus", help="Corpora, comma-separated or repeated "
                                               "(default: the preset's)."),
    json_: JsonOpt = False,
) -> None:
    """Train at a geometric grid of training-set sizes n and seeds; test loss at the best-val checkpoint."""
    from tmcheck.empirics.sweep import run_sweep

    path = sweep_directory(sweep_dir, out)
    corpora = [c for item in corpus for c in parse_list(item, "--corpus")] if corpus else None
    log = (lambda s: None) if json_ else (lambda s: console.print(s, highlight=False))
    rows = run_sweep(path, "pretrain", preset, {"corpora": corpora}, progress=not json_, log=log)
    if json_:
        print_json(rows)
    else:
        console.print(f"{len(rows)} runs finished; results in {path / 'results.jsonl'}")
